"""The store's clock: the database's on PostgreSQL, which servers on several machines share.

A server dates by it what it stamps: the events it keeps time for, departures and returns
without a client's time, judge-ahead passes. Servers whose machines' clocks are apart then
still date an agent's return through one after its departure through another (a review:
a return through a server 120 s behind was decided against the departure before). Leases
and rate buckets read the database's clock in their own statements (`database_seconds`).

Reading it costs a round trip, and a return or an append stamps several times, in its write
transaction too; so the clock is read from the database at most once a second and carried
forward between reads by this machine's monotonic clock, whose rate is the machine's. SQLite
is one machine's file: its store keeps this machine's clock (`readmit.clock.now`).
"""

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from readmit.clock import elapsed
from readmit.store.connection import Connection


def database_seconds(db: Connection) -> float:
    """Seconds since the epoch: the database's clock on PostgreSQL, this machine's on SQLite."""
    if db.dialect == "postgres":
        (clock,) = db.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()
        return float(clock)
    return time.time()


def database_time(db: Connection) -> datetime:
    """The time now by ``db``'s clock (`database_seconds`), as an aware UTC datetime."""
    return datetime.fromtimestamp(database_seconds(db), UTC)


class DatabaseClock:
    """A clock that reads the database's at most every ``every`` seconds, and never goes back.

    ``read`` gives the database's time; between reads the last one is carried forward on
    `readmit.clock.elapsed`. A read is taken as made halfway through its round trip.
    """

    def __init__(self, read: Callable[[], datetime], every: float = 1.0) -> None:
        self._read, self._every = read, every
        self._lock = threading.Lock()
        self._base: tuple[float, datetime] | None = None  # (monotonic, database time) of a read
        self._last: datetime | None = None

    def __call__(self) -> datetime:
        """The time now by the database's clock, at or after any this clock gave before."""
        at = elapsed()
        base = self._base
        if base is None or at - base[0] >= self._every:
            read = self._read()  # outside the lock: a slow read holds up no other caller
            after = elapsed()
            base = self._base = ((at + after) / 2, read)
            at = after
        with self._lock:
            value = base[1] + timedelta(seconds=at - base[0])
            if self._last is not None and value < self._last:
                value = self._last  # a new read a little behind what was carried forward
            self._last = value
            return value
