"""Mem0's ``delete_all`` through readmit: what Mem0 lists, checked, then deleted one by one.

Mem0's own ``delete_all`` lists the scope and deletes each memory it finds, batch after
batch, so a memory another agent adds meanwhile is removed too, though nothing checked
it (a review's finding: another principal's private memory, added while an async
``delete_all`` awaited Mem0, was removed, and readmit kept its item). Here the scope is
listed once, before readmit is read; the list is refused if it holds a memory the agent
may not read or one readmit holds no record of (`Recorder.may_remove_listed`), and
exactly the memories listed are deleted, each by Mem0's ``delete``. A memory added after
the list stays, as if added after the ``delete_all``.
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from readmit.integrations.mem0.recorder import Recorder
from readmit.integrations.mem0.withdrawals import removed as removed_from

DONE = {"message": "Memories deleted successfully!"}
"""What Mem0's ``delete_all`` answers."""
DELETED = {"message": "Memory deleted successfully!"}
"""What Mem0's ``delete`` answers."""
PAGE = 1000
"""How many memories the scope is listed for at first (Mem0 deletes 1,000 a batch):
``get_all`` has no offset, so a full answer is asked again for four times as many."""


def scoped(**scope: str | None) -> dict[str, str | None]:
    """A ``delete_all``'s scope, refused as Mem0 refuses it when it names nothing.

    Refused first: otherwise the check of what it would remove (`Recorder.may_remove`)
    answered `Forbidden` where Mem0 answers ``ValueError``.

    Raises:
        ValueError: if every filter is ``None`` (use ``reset`` to remove everything).
    """
    if all(value is None for value in scope.values()):
        raise ValueError("delete_all needs user_id, agent_id or run_id (reset() removes all)")
    return scope


def deleted_before(history: Sequence[Mapping[str, Any]]) -> bool:
    """Whether Mem0's ``history`` of a memory ends with its deletion.

    A delete of it again records what readmit failed to record then; not a memory this
    bank never held, nor one Mem0 failed to delete (a review).
    """
    return bool(history) and history[-1].get("event") == "DELETE"


def call(name: str, scope: Mapping[str, str | None]) -> str:
    """``name`` called with ``scope``'s filters, as a refusal or revocation names it."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in scope.items() if v is not None)})"


def delete_all(
    inner: Any, recorder: Recorder, scope: Mapping[str, str | None], gone: Callable[[str], bool]
) -> dict[str, Any]:
    """Delete what Mem0 ``inner`` lists in ``scope``; revoke the items of what it removed.

    ``gone``: whether Mem0 no longer holds a memory whose delete raised. One it no longer
    holds counts as removed, and the rest are deleted (another agent's delete of it, as
    Mem0's async ``delete_all`` goes on); one it still holds stops the call, which raises.
    What was removed is revoked as readmit holds it then, after the deletes (an update or
    revocation meanwhile would make an earlier copy's revocation refused).
    """
    filters, top_k = {k: v for k, v in scope.items() if v is not None}, PAGE
    while True:
        found = inner.get_all(filters=filters, top_k=top_k, show_expired=True)["results"]
        if len(found) < top_k:
            break
        top_k *= 4
    listed, named = [str(m["id"]) for m in found], call("delete_all", scope)
    recorder.may_remove_listed(listed, named)
    removed = list[str]()
    try:
        for memory_id in listed:
            try:
                inner.delete(memory_id)
            except Exception:
                if not gone(memory_id):
                    raise
            removed.append(memory_id)
    finally:
        removed_from(recorder.member, removed, named)
    return dict(DONE)


async def delete_all_async(
    inner: Any,
    recorder: Recorder,
    scope: Mapping[str, str | None],
    off_loop: Callable[..., Awaitable[Any]],
    gone: Callable[[str], Awaitable[bool]],
) -> dict[str, Any]:
    """`delete_all` on Mem0's ``AsyncMemory``; readmit is read and written ``off_loop``."""
    filters, top_k = {k: v for k, v in scope.items() if v is not None}, PAGE
    while True:
        found = (await inner.get_all(filters=filters, top_k=top_k, show_expired=True))["results"]
        if len(found) < top_k:
            break
        top_k *= 4
    listed, named = [str(m["id"]) for m in found], call("delete_all", scope)
    await off_loop(recorder.may_remove_listed, listed, named)
    removed = list[str]()
    try:
        for memory_id in listed:
            try:
                await inner.delete(memory_id)
            except Exception:
                if not await gone(memory_id):
                    raise
            removed.append(memory_id)
    finally:
        await off_loop(removed_from, recorder.member, removed, named)
    return dict(DONE)


def reset(inner: Any, recorder: Recorder, gone: Callable[[str], bool]) -> None:
    """Mem0's ``reset`` of ``inner``; the item of every memory it removed is revoked."""
    caught = [m for m in recorder.hidden_memories() if inner.get(m) is not None]
    recorder.may_remove(caught, "reset()")
    present = [m for m in recorder.memories() if inner.get(m) is not None]
    try:
        inner.reset()
    finally:
        removed_from(recorder.member, [m for m in present if gone(m)], "reset()")


async def reset_async(
    inner: Any,
    recorder: Recorder,
    off_loop: Callable[..., Awaitable[Any]],
    gone: Callable[[str], Awaitable[bool]],
) -> None:
    """`reset` on Mem0's ``AsyncMemory``; readmit is read and written ``off_loop``."""
    hidden = await off_loop(recorder.hidden_memories)
    recorder.may_remove([m for m in hidden if await inner.get(m)], "reset()")
    present = [m for m in await off_loop(recorder.memories) if await inner.get(m) is not None]
    try:
        await inner.reset()
    finally:
        gone_now = [m for m in present if await gone(m)]
        await off_loop(removed_from, recorder.member, gone_now, "reset()")
