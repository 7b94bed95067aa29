"""Async writes that a cancelled caller cannot cut in two, and calls that queue in their loop.

An async memory library runs its blocking calls in worker threads, which cancelling the
awaiting task does not stop: Mem0's ``AsyncMemory`` deletes a memory after a caller's
``asyncio.wait_for`` has timed out. A wrapper that writes there and then records the write
in readmit would lose the record, and readmit would keep admitting a memory that is gone (a
review: an async ``delete_all`` cancelled mid-way left the deleted memory's item active).
A write marked `to_the_end` runs whole, both sides, and the cancellation is raised after.
"""

import asyncio
import functools
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


async def run_to_end(work: Coroutine[Any, Any, T]) -> T:
    """``work``'s result, awaited to its end though the caller is cancelled meanwhile.

    A cancellation (or several) is raised once ``work`` has finished; its own error, if it
    failed, is raised instead.
    """
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:  # the caller's, or the work's own: result() tells
            cancelled = True
    result = task.result()
    if cancelled:
        raise asyncio.CancelledError
    return result


def to_the_end(
    method: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, T]]:
    """``method``, run to its end by `run_to_end` whatever cancels its caller."""

    @functools.wraps(method)
    async def whole(*args: P.args, **kwargs: P.kwargs) -> T:
        return await run_to_end(method(*args, **kwargs))

    return whole


class Turn:
    """The queue an async wrapper's calls wait in, in whichever event loop is running.

    ``Turn()`` is an ``asyncio.Lock`` of the running loop. One lock kept for good binds to
    the loop of its first contended wait, and the next loop's wait raises ``RuntimeError``
    (a wrapper kept across ``asyncio.run`` calls, or a test framework's loop per test),
    though the sessions and banks wrapped work in any loop. A new loop gets a new lock;
    the threading lock the work itself holds (`readmit.integrations.team.one_at_a_time`)
    keeps calls from different loops apart.
    """

    def __init__(self) -> None:
        self._current: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    def __call__(self) -> asyncio.Lock:
        loop, current = asyncio.get_running_loop(), self._current
        if current is None or current[0] is not loop:
            current = self._current = (loop, asyncio.Lock())
        return current[1]


class Shared:
    """A turn shared by every wrapper of one conversation, in any event loop (`shared`).

    `Turn` is one wrapper object's, in one loop: two loops (``asyncio.run`` a request) or
    two wrappers of one conversation (one made a request) wrote at once, and one undoing
    its write took the other's item off the session's end (a review).
    """

    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()

    @asynccontextmanager
    async def __call__(self) -> AsyncIterator[None]:
        """Hold the turn, asked for again after a pause while another holds it.

        No thread waits on it: writes waiting each in a worker thread took every thread of
        the loop's pool, and the one holding the turn waited for one for good; a waiter
        cancelled as its loop closed took the turn later, and no one gave it back (a
        review). A waiter cancelled here has not taken it.
        """
        pause = 0.001
        while not self.lock.acquire(blocking=False):
            await asyncio.sleep(pause)
            pause = min(2 * pause, 0.05)
        try:
            yield
        finally:
            self.lock.release()


_SHARED: "weakref.WeakValueDictionary[str, Shared]" = weakref.WeakValueDictionary()
_MAKING = threading.Lock()


def shared(name: str) -> Shared:
    """The turn of conversation ``name``: the same object while any wrapper holds it."""
    with _MAKING:
        turn = _SHARED.get(name)
        if turn is None:
            turn = _SHARED[name] = Shared()
        return turn
