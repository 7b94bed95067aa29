"""Each workspace's turn among one process's writers, before the database's own lock.

Writers of one workspace are serialized by the database (a transaction-scoped advisory
lock on PostgreSQL, the file's write lock on SQLite); within a process they first take
turns here, so that a batch waits in the process rather than holding a connection.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from readmit.errors import StoreError
from readmit.store.deadline import Deadline


class WriterTurns:
    """A lock per workspace, taken by its writers in this process one at a time."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    @contextmanager
    def turn(self, workspace: str, deadline: Deadline | None) -> Iterator[None]:
        """The writers' turn of ``workspace``, waited for no longer than ``deadline``.

        With a statement deadline (`readmit.store.deadline`): behind a writer whose server
        stopped answering, each queued writer waited a deadline more than the one before,
        and held a server thread meanwhile.

        Raises:
            StoreError: if the turn did not come within the deadline.
        """
        with self._lock:
            turn = self._locks.setdefault(workspace, threading.Lock())
        if not turn.acquire(timeout=-1 if deadline is None else deadline.seconds):
            raise StoreError(
                f"another write to workspace {workspace!r} has not finished in "
                f"{deadline.seconds if deadline else 0:g} s: is the database answering? "
                "Try again later"
            )
        try:
            yield
        finally:
            turn.release()
