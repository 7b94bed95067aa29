"""Taking back in Mem0 what an ``add`` did, when readmit refused or failed to record it.

Added memories are deleted and updated ones written back. A memory Mem0 deleted (its
model's DELETE) cannot be restored, and one whose write-back fails holds a text readmit
never recorded: their items are revoked in readmit (`withdrawals.lost`; owed if it fails).
"""

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from readmit.integrations.mem0 import withdrawals
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


def _steps(rows: Rows) -> list[tuple[str, str]]:
    """(memory id, what undoing it takes) for each row an add reported."""
    return [(str(r.get("id")), str(r.get("event"))) for r in rows]
