"""Mem0's ``expiration_date`` as the end of its memory's item's validity.

Mem0 stops showing a memory once its expiration date (a day) lies before today's date in
UTC: it is shown through that whole day, and hidden from 00:00 UTC the next. readmit
admitted the memory's item for good, so a view held state its own memory layer had let
expire. The item's validity now ends when Mem0 stops showing the memory (or earlier, at
the annotations' own ``valid_to``), read from the memory as Mem0 stored it.
"""

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from readmit.events import ItemDraft
from readmit.integrations.annotations import kept_until

EXPIRATION = "expiration_date"
"""Where a Mem0 memory (as ``get`` returns it) holds its expiration day."""


def expires(memory: Mapping[str, Any] | None) -> datetime | None:
    """When Mem0 stops showing ``memory``: the day after its expiration date, 00:00 UTC."""
    day = None if memory is None else memory.get(EXPIRATION)
    if not day:
        return None
    try:  # Mem0 stores the day as it normalized it: YYYY-MM-DD
        return datetime.combine(date.fromisoformat(str(day)) + timedelta(days=1), time(), UTC)
    except ValueError:  # not a day Mem0 would store; it shows such a memory for good
        return None


def ending(draft: ItemDraft, memory: Mapping[str, Any] | None) -> ItemDraft:
    """``draft``, valid no longer than Mem0 shows ``memory``.

    Raises:
        InvalidInput: if the annotations' ``valid_from`` is not before the memory expires.
    """
    return kept_until(
        draft,
        expires(memory),
        lambda at: f"the memory expires ({EXPIRATION}: Mem0 hides it from {at.isoformat()})",
    )


def changed(current: Mapping[str, Any] | None, memory: Mapping[str, Any] | None) -> bool:
    """Whether an update changed the memory's expiration date."""
    return (current or {}).get(EXPIRATION) != (memory or {}).get(EXPIRATION)


def read_back(
    rows: Iterable[Mapping[str, Any]], kwargs: Mapping[str, Any], keyed: bool
) -> list[str]:
    """The memories an ``add`` (its ``kwargs``) reported in ``rows`` that are read back.

    For their keys (``keyed``: the wrapper has a key function) and expiration dates. An
    updated memory keeps a date set before; a memory added new has one only if the add
    gave it (the argument, or a metadata key Mem0 keeps as it), and without a key function
    it is not read back: one more Mem0 ``get`` for every memory a plain add wrote.
    """
    metadata = kwargs.get("metadata")
    dated = kwargs.get(EXPIRATION) is not None or (
        isinstance(metadata, Mapping) and EXPIRATION in metadata
    )
    new_too = keyed or dated
    return [
        str(r["id"])
        for r in rows
        if r.get("event") == "UPDATE" or (new_too and r.get("event") == "ADD")
    ]
