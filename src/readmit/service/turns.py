"""Returns of one workspace take turns in a server process.

A return is Python from end to end (one interpreter lock), so two returns of a process
never ran in parallel: they interleaved, each slower for it, and each judged what the
other was judging, because a return's screenings reach the store only when its
decision is recorded. When a team came back together, every first return screened
the same items against the same events. Taking turns, the next return in a workspace
reads what the last one screened and judged instead (the store's screenings and
cached verdicts). Returns of other workspaces do not wait. With ``readmit serve
--workers N`` the server process takes the turn before it hands a return to a worker
(`Turns.awaited`, waiting on the event loop rather than in a thread), so returns of one
workspace take turns across the workers too.

A return waiting for its turn still holds its agent's return slot, and stops waiting
(nothing done, nothing recorded) once its client goes away.
"""

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeVar

from readmit.clock import elapsed
from readmit.errors import Abandoned

POLL_S = 1.0
"""How often a waiting return looks at its cancel flag. Waking the waiters more often
costs the running return CPU: polled every 50 ms, 16 returns of one workspace took 0.6 s
of CPU instead of 0.37 s (a scratch script, in process)."""


BACKGROUND_KEPT = 16
"""Background holds a line remembers: a return waits behind a few at most, as the
background holder gives way to waiting returns."""

F = TypeVar("F", bound="Flag")


class Cancel(Protocol):
    """A return's cancel flag: a `threading.Event`, or a return worker's shared one."""

    def is_set(self) -> bool: ...


class Flag(Protocol):
    """Set when a waiter's turn has come (under `Turns._guard`)."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class Turns:
    """A first-come, first-served line per workspace, for the returns of this process.

    First come, first served: with a plain lock, a return could lose its turn to every
    newcomer; 16 agents returning five times each saw one wait 7.3 s.
    """

    def __init__(self) -> None:
        self._lines: dict[str, _Line] = {}
        self._guard = threading.Lock()

    @contextmanager
    def take(
        self, workspace: str, cancel: Cancel | None = None, background: bool = False
    ) -> Iterator["Turn"]:
        """Wait for ``workspace``'s turn, and hold it.

        ``background``: the holder is not a return (the judge of `readmit.service.ahead`),
        and the time a return waits on it is not the return's to count (`Turn.excused`).

        Raises:
            Abandoned: if ``cancel`` is set while waiting.
        """
        joined = elapsed()
        with self._guard:
            line = self._lines.setdefault(workspace, _Line())
            mine = line.join(threading.Event)
        if mine is not None:
            self._wait(line, mine, cancel)
        with self._held(line, joined, background, cancel) as turn:
            yield turn

    @asynccontextmanager
    async def awaited(self, workspace: str, cancel: Cancel | None = None) -> AsyncIterator["Turn"]:
        """`take` for a coroutine: it waits on its event loop, holding no thread meanwhile.

        Raises:
            Abandoned: if ``cancel`` is set while waiting.
        """
        joined = elapsed()
        with self._guard:
            line = self._lines.setdefault(workspace, _Line())
            mine = line.join(partial(_Wakeup, asyncio.get_running_loop()))
        if mine is not None:
            try:
                while not mine.is_set():
                    if cancel is not None and cancel.is_set():
                        raise Abandoned(_GONE)
                    with suppress(TimeoutError):
                        await asyncio.wait_for(mine.event.wait(), POLL_S)
            except BaseException:  # gone, or the task cancelled: leave the line
                self._leave(line, mine)
                raise
        with self._held(line, joined, False, cancel) as turn:
            yield turn

    @contextmanager
    def _held(
        self, line: "_Line", joined: float, background: bool, cancel: Cancel | None
    ) -> Iterator["Turn"]:
        """The turn, once it is ours (handed on when the block ends, whatever happens)."""
        try:
            with self._guard:
                turn = Turn(line.excused(joined, started := elapsed()))
            _check(cancel)
            yield turn
        finally:
            with self._guard:
                if background:
                    line.background.append((started, elapsed()))
                line.next()

    def _wait(self, line: "_Line", mine: threading.Event, cancel: Cancel | None) -> None:
        while not mine.wait(POLL_S):
            if cancel is None or not cancel.is_set():
                continue
            self._leave(line, mine)
            _check(cancel)

    def _leave(self, line: "_Line", mine: Flag) -> None:
        with self._guard:
            if mine.is_set():  # the turn came meanwhile: hand it on
                line.next()
            else:
                line.waiting.remove(mine)

    def contended(self, workspace: str) -> bool:
        """Whether someone waits for ``workspace``'s turn."""
        with self._guard:
            line = self._lines.get(workspace)
            return line is not None and bool(line.waiting)


@dataclass(frozen=True, slots=True)
class Turn:
    """A turn taken."""

    excused: float
    """Seconds of the wait for it during which a background holder held it (see `take`)."""


class _Wakeup:
    """A coroutine's `Flag`: setting it, from any thread, wakes the coroutine's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()
        self._set = False

    def set(self) -> None:
        self._set = True
        with suppress(RuntimeError):  # its loop closed: nobody waits on the event any more
            self.loop.call_soon_threadsafe(self.event.set)

    def is_set(self) -> bool:
        return self._set


class _Line:
    """Who holds a workspace's turn, and who waits for it, in order (under `Turns._guard`)."""

    def __init__(self) -> None:
        self.busy = False
        self.waiting: deque[Flag] = deque()
        self.background: deque[tuple[float, float]] = deque(maxlen=BACKGROUND_KEPT)
        """When background holders held the turn, latest last."""

    def excused(self, joined: float, started: float) -> float:
        """The seconds of [``joined``, ``started``] that background holders held the turn."""
        return sum(
            max(0.0, min(end, started) - max(begin, joined)) for begin, end in self.background
        )

    def join(self, flag: Callable[[], F]) -> F | None:
        """Take the turn if it is free (``None``), else a new ``flag``, set when it is ours."""
        if not self.busy:
            self.busy = True
            return None
        mine = flag()
        self.waiting.append(mine)
        return mine

    def next(self) -> None:
        """Hand the turn to the first in line, or free it."""
        if self.waiting:
            self.waiting.popleft().set()
        else:
            self.busy = False


_GONE = "the client went away before its return's turn; nothing recorded"


def _check(cancel: Cancel | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Abandoned(_GONE)
