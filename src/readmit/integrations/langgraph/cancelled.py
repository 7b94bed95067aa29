"""A LangGraph write whose caller is cancelled: recorded to its end, then matched to the store."""

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from langgraph.store.base import BaseStore, Result

from readmit.integrations.langgraph.reconcile import reconcile
from readmit.integrations.langgraph.writes import Write, reads
from readmit.integrations.team import Member
from readmit.integrations.to_the_end import run_to_end

log = logging.getLogger("readmit.integrations")


async def arecorded(
    record_them: Callable[[], list[Write]],
    inner: BaseStore,
    member: Member,
    undone: Callable[[list[Write]], None] | None = None,
) -> list[Write]:
    """``record_them()`` in a worker thread, which a cancelled caller cannot stop.

    Cancelled (a node's timeout), it waits for the thread, then makes readmit match the
    inner store, which the write never reached, and calls ``undone``: else the next
    return admitted the write, and its path showed whatever the inner store held there
    (a review: another principal's value). A second cancellation does not cut that short.
    """
    running = asyncio.ensure_future(asyncio.to_thread(record_them))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError as cancelled:
        await unstoppable(_undo(running, inner, member, cancelled, undone))
        raise


async def _undo(
    running: "asyncio.Future[list[Write]]",
    inner: BaseStore,
    member: Member,
    error: BaseException,
    undone: Callable[[list[Write]], None] | None,
) -> None:
    try:
        writes = await running
    except Exception:  # refused or failed: nothing was recorded
        return
    await amatch(inner, member, writes, error)
    if undone is not None:
        undone(writes)


async def matched(
    landing: "asyncio.Future[list[Result]]",
    inner: BaseStore,
    member: Member,
    writes: list[Write],
    error: BaseException,
    then: Callable[[list[Write]], None],
) -> None:
    """Let a cancelled ``landing`` finish, then match readmit to what it left (`amatch`).

    ``then`` gets the writes that landed.
    """
    with contextlib.suppress(Exception):  # failed: read back all the same
        await landing
    then(await amatch(inner, member, writes, error))


async def unstoppable(work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` to its end, whatever cancels the caller meanwhile (`run_to_end`).

    Its own failure is left to what it noted (`reconcile` notes on the cancellation);
    the caller goes on with the cancellation it is handling.
    """
    try:
        await run_to_end(work)
    except asyncio.CancelledError:
        pass  # the caller's, which it is handling already
    except Exception:
        log.warning("readmit could not match a cancelled LangGraph write", exc_info=True)


async def amatch(
    inner: BaseStore, member: Member, writes: list[Write], error: BaseException
) -> list[Write]:
    """Make readmit match what ``inner`` holds of ``writes`` after ``error`` (`reconcile`).

    Returns:
        Those of ``writes`` that landed all the same.
    """
    found: list[Result] | None
    try:
        found = await inner.abatch(reads(writes))
    except Exception:
        found = None
    return await asyncio.to_thread(reconcile, member, writes, found, error)
