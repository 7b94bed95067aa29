"""A deadline for each round trip to a PostgreSQL server.

A server that stops answering fails the statement instead of holding its caller for good.
psycopg waits for a statement's reply without limit, and a server that was stopped, or
whose disk or host hangs, keeps the connection open and says nothing: every request of a
``readmit serve`` process that reached the database waited with it, and so did the
server's threads. A connection now says when it sends a statement and when the reply came
(`Deadline.start`, `Deadline.done`); one thread a process (`_Watcher`) looks a few times a
second at the connections and shuts down the socket of one whose statement has waited
past its deadline. libpq then reads the end of the stream, psycopg raises, and the
statement fails as a `StoreError`; the connection is broken, so its pool closes it and
the idle ones with it (`readmit.store.pool`). A statement that takes long on a server that
is working (a lock held for minutes, a migration of a very large store) is cut the same
way: the deadline (`SECONDS`, or ``READMIT_PG_STATEMENT_TIMEOUT``) is far above what
readmit's statements take, and ``0`` turns it off.
"""

import math
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from readmit.errors import ConfigError

UNKNOWN = "whether the transaction committed is unknown"
"""What a store error says when a COMMIT was sent and no answer came (cut, or lost)."""

LOOK_UP_WAIT = 5.0
"""Seconds a look-up for a write of unknown outcome waits for its workspace's lock
(`readmit.store.held.Held.logged`, `readmit.store.audit.decided_anyway`): a COMMIT the
server still finishes ends well within it. A lock that a server session whose client is
gone still holds (the server not told, until its keepalive fires: hours) is not waited on
for good, deadline or none (a review's half-open proxy held an append for as long)."""

SECONDS = 60.0
"""How long a statement may wait for the server's reply, unless the environment says."""
ENV = "READMIT_PG_STATEMENT_TIMEOUT"


def seconds_from(env: Mapping[str, str]) -> float | None:
    """The deadline ``env`` sets (`ENV`), `SECONDS` without one; ``None`` for ``0``: none.

    Raises:
        ConfigError: if it is not a number of seconds, 0 or more.
    """
    said = env.get(ENV, "").strip()
    if not said:
        return SECONDS
    try:
        seconds = float(said)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds < math.inf:
        raise ConfigError(f"{ENV} must be a number of seconds, 0 or more (0: no deadline), "
                          f"not {said!r}")  # fmt: skip
    return seconds or None


class Deadline:
    """The statements one connection sends, each cut off once it waited ``seconds``.

    ``socket_of`` gives the connection's socket (a file descriptor), read now and when a
    statement is cut: a cut shuts down only the socket it gave now, never another that took
    its number meanwhile.
    """

    def __init__(self, socket_of: Callable[[], int], seconds: float) -> None:
        self.seconds = seconds
        self.cut = False
        """Whether a statement was cut: the connection is broken for good."""
        self._socket_of = socket_of
        self._identity = _identity(socket_of())
        self._due: float | None = None
        self._lock = threading.Lock()
        self.patient = False
        """Whether its statements wait for the server as long as it takes (`patiently`)."""
        _WATCHER.add(self)  # looked at while it lives: a statement only sets its due time

    def start(self) -> None:
        """A round trip begins (one at a time on a connection): it is due in ``seconds``.

        `start` and `done`, not a context manager: a round trip's bookkeeping is what a
        deadline costs (about 1 µs a statement, measured against none).
        """
        with self._lock:
            self._due = time.monotonic() + self.seconds

    def done(self) -> None:
        """The round trip ended (answered, failed or cut)."""
        with self._lock:
            self._due = None

    def close(self) -> None:
        """No longer look at this connection (it is closed)."""
        _WATCHER.discard(self)

    def cut_if_due(self, now: float) -> None:
        """Shut the socket down if the statement in flight has waited past its deadline.

        Under the lock `done` clears the deadline with: a reply that came meanwhile
        leaves the socket as it is.
        """
        with self._lock:
            if self._due is None or now < self._due or self.patient:
                return
            self._due = None
            self.cut = True
            try:
                held = os.dup(self._socket_of())
            except OSError:  # closed meanwhile: nothing waits on it
                return
            try:
                # libpq closes the socket of a connection its server dropped before it
                # forgets the number, which the next socket or file opened takes: not ours.
                if self._identity is not None and _identity(held) == self._identity:
                    _shut_down(held)  # the waiting side reads the end of the stream
            finally:
                os.close(held)


@contextmanager
def patiently(deadline: Deadline | None) -> Iterator[None]:
    """The body's statements wait for the server as long as it takes (``None``: no change).

    For the migrations a store runs as it opens, when it has any to run: one that takes
    minutes on a large store was cut at every opening and never done, and another process
    opening meanwhile was cut waiting for its lock. The reads before (`SqlStore`'s check,
    and whether anything is left to migrate) still have their deadline.
    """
    if deadline is None:
        yield
        return
    deadline.patient = True
    try:
        yield
    finally:
        deadline.patient = False


def _identity(descriptor: int) -> tuple[int, int] | None:
    """Which file ``descriptor`` is open on (device and inode), ``None`` if none."""
    try:
        found = os.fstat(descriptor)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _shut_down(descriptor: int) -> None:
    try:
        held = socket.socket(fileno=descriptor)
    except OSError:  # not a socket
        return
    try:
        held.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        held.detach()  # the descriptor is the caller's to close


class _Watcher:
    """The thread that cuts the statements that waited too long, started when first needed.

    It looks at every connection with a deadline, busy or idle (registering each statement
    instead cost about 4 µs a round trip, a fifth of a local ``SELECT 1``), and waits
    without looking while there is none.
    """

    TICK = 0.25
    """Seconds between looks: a statement is cut at most this much after its deadline."""

    def __init__(self) -> None:
        self._watched: weakref.WeakSet[Deadline] = weakref.WeakSet()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, deadline: Deadline) -> None:
        with self._lock:
            self._watched.add(deadline)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="readmit-pg-deadline", daemon=True
                )
                self._thread.start()
            self._lock.notify()

    def discard(self, deadline: Deadline) -> None:
        with self._lock:
            self._watched.discard(deadline)

    def forked(self) -> None:
        """Start afresh in a forked child.

        Only the forking thread was copied, not this one, and the lock as the fork found it
        (held, if the thread was looking).
        """
        self._watched = weakref.WeakSet()
        self._lock = threading.Condition()
        self._thread = None

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._watched:
                    self._lock.wait()
                watched = list(self._watched)
            now = time.monotonic()
            for deadline in watched:
                deadline.cut_if_due(now)
            time.sleep(self.TICK)


_WATCHER = _Watcher()
if hasattr(os, "register_at_fork"):  # a child of a fork starts a thread of its own
    os.register_at_fork(after_in_child=_WATCHER.forked)
