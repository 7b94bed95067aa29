"""Taking back in Mem0 what an ``add`` or ``update`` did that readmit did not record.

Added memories are deleted and updated ones written back. A memory Mem0 deleted (its
model's DELETE) cannot be restored, and one whose write-back fails holds a text readmit
never recorded: their items are revoked in readmit (`withdrawals.lost`; owed if it fails).
"""

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from readmit.integrations.mem0 import withdrawals
from readmit.integrations.mem0.ids import writes_text
from readmit.integrations.mem0.updates import restored
from readmit.integrations.team import Member

Rows = list[dict[str, Any]]


def undo_add(
    inner: Any, member: Member, rows: Rows, histories: Mapping[str, Any], refused: Exception
) -> None:
    """Take back each of ``rows`` (what the add reported) in ``inner``, noting on ``refused``."""
    for memory_id, event in _steps(rows):
        try:
            if event == "ADD":
                inner.delete(memory_id)
            elif event == "UPDATE":
                inner.update(memory_id, text=histories[memory_id][-1].get("old_memory"))
            else:
                refused.add_note(f"Mem0 deleted memory {memory_id}; it cannot be restored")
                withdrawals.lost(member, memory_id, refused, None)
        except Exception as undo:
            refused.add_note(f"memory {memory_id} could not be taken back: {undo!r}")
            if event == "UPDATE":
                withdrawals.lost(member, memory_id, refused, len(histories[memory_id]))


async def aundo_add(
    inner: Any,
    member: Member,
    rows: Rows,
    histories: Mapping[str, Any],
    refused: Exception,
    off_loop: Callable[..., Awaitable[Any]],
) -> None:
    """`undo_add` on Mem0's ``AsyncMemory``; readmit is written ``off_loop``."""
    for memory_id, event in _steps(rows):
        try:
            if event == "ADD":
                await inner.delete(memory_id)
            elif event == "UPDATE":
                await inner.update(memory_id, text=histories[memory_id][-1].get("old_memory"))
            else:
                refused.add_note(f"Mem0 deleted memory {memory_id}; it cannot be restored")
                await off_loop(withdrawals.lost, member, memory_id, refused, None)
        except Exception as undo:
            refused.add_note(f"memory {memory_id} could not be taken back: {undo!r}")
            if event == "UPDATE":
                upto = len(histories[memory_id])
                await off_loop(withdrawals.lost, member, memory_id, refused, upto)


@dataclass
class Update:
    """An ``update`` of ``memory_id`` as Mem0 made it, to be taken back (filled as read)."""

    memory_id: str
    current: Mapping[str, Any] | None
    """The memory before it (None: Mem0 held none: nothing to write back)."""
    metadata: Mapping[str, Any] | None
    """The metadata it was given."""
    before: list[Any]
    """The memory's history before it."""
    after: list[Any] | None = None
    """Its history after it (None: not read)."""
    memory: Mapping[str, Any] | None = None
    """The memory after it (None: not read)."""

    def back(self) -> dict[str, Any] | None:
        """The ``update`` arguments that write the memory back (None: nothing to write)."""
        return None if self.current is None else restored(self.current, self.metadata, self.memory)

    def made(self) -> int | None:
        """The version it made, which Mem0 holds and readmit does not.

        None: it wrote no text (readmit's still says what Mem0's does). Its history not read
        back: one past the last known.
        """
        if self.after is None:
            return len(self.before) + 1
        new = self.after[len(self.before) :]
        return len(self.after) if any(writes_text(row) for row in new) else None


def undo_update(inner: Any, member: Member, update: Update, refused: Exception) -> None:
    """Write ``update``'s memory back in ``inner``; failing that, revoke what it replaced."""
    back = update.back()
    if back is not None:
        try:
            inner.update(update.memory_id, **back)
            return
        except Exception as undo:
            refused.add_note(f"memory {update.memory_id} could not be written back: {undo!r}")
    if (made := update.made()) is not None:
        withdrawals.lost(member, update.memory_id, refused, made)


async def aundo_update(
    inner: Any,
    member: Member,
    update: Update,
    refused: Exception,
    off_loop: Callable[..., Awaitable[Any]],
) -> None:
    """`undo_update` on Mem0's ``AsyncMemory``; readmit is written ``off_loop``."""
    back = update.back()
    if back is not None:
        try:
            await inner.update(update.memory_id, **back)
            return
        except Exception as undo:
            refused.add_note(f"memory {update.memory_id} could not be written back: {undo!r}")
    if (made := update.made()) is not None:
        await off_loop(withdrawals.lost, member, update.memory_id, refused, made)


def _steps(rows: Rows) -> list[tuple[str, str]]:
    """(memory id, what undoing it takes) for each row an add reported."""
    return [(str(r.get("id")), str(r.get("event"))) for r in rows]
