"""The connections of one store: each transaction in flight has its own.

A read never waits for a writer's connection, nor a writer of one workspace for
a writer of another (beyond what the database itself serializes: SQLite has one
file writer, PostgreSQL none). A connection goes back to the pool when its
transaction ends; one that failed with a store error is closed, never reused, and the
idle ones with it when it lost its server; so is one that comes back broken (by another
error, or a statement deadline's cut that raced the answer).
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from readmit.errors import DamagedStore, StoreError
from readmit.store.connection import Connection

_KEEP = 8
"""Idle connections kept for reuse; more are closed as they come back."""


class Pool:
    """Hands out connections, opening one when none is idle.

    With ``shared``, there is only ever the first connection (an in-memory
    SQLite database lives in one connection), and its transactions take turns.
    """

    def __init__(self, connect: Callable[[], Connection], *, shared: bool = False) -> None:
        self._connect = connect
        self.first = connect()
        """Opened at once: migrations, integrity checks and ad-hoc statements use it."""
        self._turns = threading.RLock() if shared else None
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self.drained = 0
        """How many times the idle connections were let go as the server was lost (`_drain`)."""

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A connection of its own for the caller's transaction."""
        if self._turns is not None:
            with self._turns:
                yield self.first
            return
        db = self._take()
        try:
            yield db
        except DamagedStore:  # the database answered: a row holds what readmit did not write
            self._give(db)
            raise
        except StoreError:
            lost = db.broken
            db.close()  # it may be broken (server gone, file unreadable)
            if lost:  # the server restarted: so are the idle ones, each failing once else
                self._drain()
            raise
        except BaseException:
            self._give(db)
            raise
        self._give(db)

    def _take(self) -> Connection:
        with self._lock:
            if self._closed:
                raise StoreError("the store is closed")
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def _give(self, db: Connection) -> None:
        if db.broken:  # under an error not the store's (its ROLLBACK failed), or a cut that
            db.close()  # raced the answer (`readmit.store.deadline`): it would fail the next
            self._drain()  # request, and the idle ones likely with it
            return
        with self._lock:
            if not self._closed and len(self._idle) < _KEEP:
                self._idle.append(db)
                return
        db.close()

    def _drain(self) -> None:
        """Close the idle connections.

        After a restart of the database server each would fail the request that took it
        (a probe's servers answered up to eight 503s each before they recovered).
        """
        with self._lock:
            idle, self._idle = self._idle, []
            self.drained += 1
        for db in idle:
            db.close()

    def close(self) -> None:
        """Close every idle connection and the first; those in use close when given back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for db in idle:
            db.close()
        if self._turns is not None:
            with self._turns:
                self.first.close()
        else:
            self.first.close()
