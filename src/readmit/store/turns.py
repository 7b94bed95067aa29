"""Each workspace's turn among one process's writers, before the database's own lock.

Writers of one workspace are serialized by the database (a transaction-scoped advisory
lock on PostgreSQL, the file's write lock on SQLite); within a process they first take
turns here, so that a batch waits in the process rather than holding a connection.
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from readmit.errors import DamagedStore, StoreError
from readmit.store.deadline import Deadline


class _Turn:
    """One workspace's writers: the lock they take in turn, and when a turn last went well."""

    __slots__ = ("lock", "moved")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.moved = 0.0
        """When (`time.monotonic`) a writer last ended its turn without a `StoreError`."""


class WriterTurns:
    """A turn per workspace, taken by its writers in this process one at a time."""

    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}
        self._lock = threading.Lock()

    @contextmanager
    def turn(self, workspace: str, deadline: Deadline | None) -> Iterator[None]:
        """The writers' turn of ``workspace``, given up once the turns stood a ``deadline``.

        With a statement deadline (`readmit.store.deadline`): behind a writer whose server
        stopped answering, each queued writer waited a deadline more than the one before,
        and held a server thread meanwhile. A writer waits while the turns move, though: a
        queue of quick writers on a server that answers can be longer than one deadline (a
        review: 16 threads writing 200-event batches with a 1 s deadline had 70 of 240
        refused). A turn that ended in a `StoreError` (a statement cut, the server gone)
        is no move.

        Raises:
            StoreError: if no turn went well within the deadline while this one waited.
        """
        with self._lock:
            turn = self._turns.setdefault(workspace, _Turn())
        if deadline is None:
            turn.lock.acquire()
        else:
            _wait(turn, deadline.seconds, workspace)
        answered = True
        try:
            yield
        except StoreError as failed:  # maybe a server that stopped answering: no move
            answered = isinstance(failed, DamagedStore)  # it answered: a row is damaged
            raise
        finally:
            if answered:
                turn.moved = time.monotonic()
            turn.lock.release()


def _wait(turn: _Turn, seconds: float, workspace: str) -> None:
    """Take ``turn``, waiting while the turns move and ``seconds`` at most after the last."""
    started = time.monotonic()
    while not turn.lock.acquire(timeout=max(0.0, _due(turn, started, seconds) - time.monotonic())):
        if _due(turn, started, seconds) <= time.monotonic():
            raise StoreError(
                f"another write to workspace {workspace!r} has not finished in {seconds:g} s: "
                "is the database answering? Try again later"
            )


def _due(turn: _Turn, started: float, seconds: float) -> float:
    return max(started, turn.moved) + seconds
