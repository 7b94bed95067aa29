"""Which readmit item a Mem0 memory version is: ``mem0-<memory id>-<n>``.

``n`` is the 1-based position, in ``history(memory id)``, of the row that wrote that
text (1 for the ``ADD``). An item's memory id and version are read back from its id,
so no mapping table is kept.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from readmit.errors import InvalidInput
from readmit.model import Item

PREFIX = "mem0-"
"""What every item id from a Mem0 memory starts with."""


def item_id(memory_id: str, version: int) -> str:
    """The readmit item id of version ``version`` of Mem0 memory ``memory_id``."""
    return f"{PREFIX}{memory_id}-{version}"


def memory_of(item: str) -> tuple[str, int] | None:
    """The memory id and version an item id names; None for an item not from Mem0."""
    if not item.startswith(PREFIX):
        return None
    memory_id, _, version = item[len(PREFIX) :].rpartition("-")
    return (memory_id, int(version)) if memory_id and version.isdigit() else None


def writes_text(row: Mapping[str, Any]) -> bool:
    """Whether a history row wrote a memory's text (an ADD, or an UPDATE that changed it)."""
    return row.get("event") == "ADD" or (
        row.get("event") == "UPDATE" and row.get("new_memory") != row.get("old_memory")
    )


def current_item(memory_id: str, history: Sequence[Mapping[str, Any]]) -> str | None:
    """The item of the memory's latest text, from its Mem0 history (None: never written)."""
    versions = [n for n, row in enumerate(history, 1) if writes_text(row)]
    return item_id(memory_id, versions[-1]) if versions else None


def of_memory(items: Iterable[Item], memory_id: str) -> list[Item]:
    """The items of ``items`` that are versions of ``memory_id``, oldest first."""
    found = [(m[1], i) for i in items if (m := memory_of(i.id)) is not None and m[0] == memory_id]
    return [i for _, i in sorted(found, key=lambda pair: pair[0])]


def by_memory(items: Iterable[Item]) -> dict[str, list[str]]:
    """Memory id -> the ids of its versions among ``items``."""
    found: dict[str, list[str]] = {}
    for item in items:
        named = memory_of(item.id)
        if named is not None:
            found.setdefault(named[0], []).append(item.id)
    return found


def not_on_itself(premises: Iterable[str], memory_id: str, where: str) -> None:
    """Refuse an update of ``memory_id`` whose premises (item ids) hold a version of it.

    The update replaces that version, so the new one would rest on what it withdrew, and
    fall at the next return while reads served it (a probe).

    Raises:
        InvalidInput: naming the write.
    """
    if any((named := memory_of(p)) is not None and named[0] == memory_id for p in premises):
        raise InvalidInput(
            f"{where}: readmit annotations: depends_on names the memory this update "
            "replaces; a memory cannot rest on the version it overwrites"
        )
