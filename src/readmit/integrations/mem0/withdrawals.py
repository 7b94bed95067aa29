"""Revoking in readmit what Mem0 no longer holds: deleted, removed, or lost to a failed write.

A write lost that way is one Mem0 made and could not undo after readmit failed to record
it. If readmit cannot record it then, the revocation is owed, picked again from the agent's
live state when it is recorded (`Member.withdraw`, `readmit.integrations.corrections`).
"""

from collections.abc import Callable, Iterable

from readmit.events import Recorded
from readmit.integrations.mem0.ids import by_memory, memory_of
from readmit.integrations.team import Member
from readmit.model import Item


def deleted(member: Member, memory_id: str, targets: list[str]) -> list[Recorded]:
    """Revoke ``targets``, what deleting ``memory_id`` withdraws (`Recorder.delete_targets`).

    Raises:
        BaseException: what recording raised, noting that it is owed.
    """
    held = set(targets)  # its copies; of the memory itself, every version active then (a
    return _withdrawn(  # teammate's update just before the delete too: a review)
        member,
        lambda visible: [i.id for i in visible if i.id in held or _of(i, memory_id)],
        f"memory {memory_id}, deleted from Mem0",
        f"deleted from Mem0 by {member.agent}",
    )


def removed(member: Member, gone: Iterable[str], call: str) -> None:
    """Revoke the items of the memories ``call`` removed from Mem0.

    As readmit holds them when recorded: a teammate's update or revocation meanwhile
    leaves another item active than a copy read before.

    Raises:
        BaseException: what reading or recording raised, noting that it is owed.
    """
    named = sorted(gone)
    _withdrawn(
        member,
        lambda visible: [i for m in named for i in by_memory(visible).get(m, ())],
        f"memories {named}, removed from Mem0 by {call}",
        f"{call} removed it from Mem0 ({member.agent})",
    )


def lost(member: Member, memory_id: str, failed: BaseException, upto: int | None) -> None:
    """Revoke ``memory_id``'s items: a write readmit did not record left Mem0 without them.

    ``upto``: the version that write made, which Mem0 holds and readmit does not; the
    versions before it go (a teammate's later one is not this write's: a review). None:
    Mem0 deleted the memory, and every version goes. What cannot be recorded now is owed,
    and noted on ``failed``.
    """
    try:
        _withdrawn(
            member,
            lambda visible: [i.id for i in visible if _of(i, memory_id, upto)],
            f"memory {memory_id}, changed in Mem0 by a write readmit did not record",
            f"a write readmit did not record changed it in Mem0 ({member.agent})",
        )
    except Exception as exc:
        failed.add_note(f"memory {memory_id}: readmit could not revoke its items yet: {exc!r}")


def _of(item: Item, memory_id: str, before: int | None = None) -> bool:
    """Whether ``item`` is a version of ``memory_id`` (before version ``before``, if given)."""
    found = memory_of(item.id)
    return found is not None and found[0] == memory_id and (before is None or found[1] < before)


def _withdrawn(
    member: Member, chosen: Callable[[list[Item]], Iterable[str]], what: str, why: str
) -> list[Recorded]:
    try:
        return member.withdraw(chosen, why, what)
    except BaseException as exc:
        exc.add_note(f"{what}: readmit holds its items until this is recorded (owed)")
        raise
