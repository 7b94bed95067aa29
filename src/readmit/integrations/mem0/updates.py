"""What a Mem0 ``update`` changes of a memory's metadata, and what writes it back."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from readmit.errors import InvalidInput
from readmit.integrations.annotations import ANNOTATIONS
from readmit.integrations.mem0.expiry import EXPIRATION, changed
from readmit.integrations.mem0.ids import writes_text


def merged(current: Mapping[str, Any] | None, metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The metadata a memory has after an update (Mem0 merges the update's keys in)."""
    return {**((current or {}).get("metadata") or {}), **(metadata or {})}


def annotating(current: Mapping[str, Any] | None, metadata: Mapping[str, Any] | None) -> bool:
    """Whether an update's ``metadata`` changes the memory's readmit annotations."""
    if metadata is None or ANNOTATIONS not in metadata:
        return False
    return bool(((current or {}).get("metadata") or {}).get(ANNOTATIONS) != metadata[ANNOTATIONS])


def restored(
    current: Mapping[str, Any],
    metadata: Mapping[str, Any] | None,
    memory: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The update that writes back what an update changed of a memory.

    Its text, the metadata keys the update named, and its expiration date if the update
    (leaving ``memory``) changed that.
    """
    before = current.get("metadata") or {}
    restore = {k: before.get(k) for k in metadata or {}}
    back = {"text": current.get("memory"), "metadata": restore or None}
    if changed(current, memory):
        back[EXPIRATION] = current.get(EXPIRATION)
    return back


def same_key(
    key_of: Callable[[Mapping[str, Any] | None], str | None],
    memory_id: str,
    current: Mapping[str, Any] | None,
    memory: Mapping[str, Any] | None,
    written: Sequence[Mapping[str, Any]],
) -> None:
    """Refuse an update that changes a memory's key (``key_of``) and not its text.

    Its item would keep the old key: a later memory under the new key would not replace
    it, one under the old key would (a probe). ``written``: the history rows the update
    added.

    Raises:
        InvalidInput: naming both keys (the caller undoes the update).
    """
    if current is None or any(writes_text(row) for row in written):
        return
    was, now = key_of(current), key_of(memory)
    if was != now:
        raise InvalidInput(
            f"memory {memory_id}: its key in readmit ({was!r}, now {now!r}) changes with the "
            "memory's text (update its text too, or delete it and add it again)"
        )


def failed_first(refused: Exception, error: Exception | None) -> None:
    """Name Mem0's own failure part-way through the add, ``error``, on ``refused``.

    In a note, and as its cause where it has none of its own: readmit refusing (or
    failing) to record what Mem0 made before it failed hid Mem0's error (a probe).
    Nothing changes where Mem0 did not fail.
    """
    if error is not None:
        refused.add_note(f"Mem0 had failed part-way through the add first: {error!r}")
        if refused.__cause__ is None:  # readmit's own cause stays (a lock, say), named first
            refused.__cause__ = error
