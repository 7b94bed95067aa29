"""Returns of one workspace take turns in a server process.

A return is Python from end to end (one interpreter lock), so two returns of a process
never ran in parallel: they interleaved, each slower for it, and each judged what the
other was judging, because a return's screenings reach the store only when its
decision is recorded. When a team came back together, every first return screened
the same items against the same events. Taking turns, the next return in a workspace
reads what the last one screened and judged instead (the store's screenings and
cached verdicts). Returns of other workspaces do not wait, and with
``readmit serve --workers N`` each worker process takes its own turns.

A return waiting for its turn still holds its agent's return slot, and stops waiting
(nothing done, nothing recorded) once its client goes away.
"""

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from readmit.errors import Abandoned

POLL_S = 1.0
"""How often a waiting return looks at its cancel flag. Waking the waiters more often
costs the running return CPU: polled every 50 ms, 16 returns of one workspace took 0.6 s
of CPU instead of 0.37 s (a scratch script, in process)."""


class Cancel(Protocol):
    """A return's cancel flag: a `threading.Event`, or a return worker's shared one."""

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
    def take(self, workspace: str, cancel: Cancel | None = None) -> Iterator[None]:
        """Wait for ``workspace``'s turn, and hold it.

        Raises:
            Abandoned: if ``cancel`` is set while waiting.
        """
        with self._guard:
            line = self._lines.setdefault(workspace, _Line())
            mine = line.join()
        if mine is not None:
            self._wait(line, mine, cancel)
        try:
            _check(cancel)
            yield
        finally:
            with self._guard:
                line.next()

    def _wait(self, line: "_Line", mine: threading.Event, cancel: Cancel | None) -> None:
        while not mine.wait(POLL_S):
            if cancel is None or not cancel.is_set():
                continue
            with self._guard:
                if mine.is_set():  # the turn came meanwhile: hand it on
                    line.next()
                else:
                    line.waiting.remove(mine)
            _check(cancel)


class _Line:
    """Who holds a workspace's turn, and who waits for it, in order (under `Turns._guard`)."""

    def __init__(self) -> None:
        self.busy = False
        self.waiting: deque[threading.Event] = deque()

    def join(self) -> threading.Event | None:
        """Take the turn if it is free (``None``), else the flag set when it is ours."""
        if not self.busy:
            self.busy = True
            return None
        mine = threading.Event()
        self.waiting.append(mine)
        return mine

    def next(self) -> None:
        """Hand the turn to the first in line, or free it."""
        if self.waiting:
            self.waiting.popleft().set()
        else:
            self.busy = False


def _check(cancel: Cancel | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Abandoned("the client went away before its return's turn; nothing recorded")
