"""The store's clock: the database's on PostgreSQL, which servers on several machines share.

A server dates by it what it stamps: the events it keeps time for, departures and returns
without a client's time, judge-ahead passes. Servers whose machines' clocks are apart then
still date an agent's return through one after its departure through another (a review:
a return through a server 120 s behind was decided against the departure before). Leases
and rate buckets read the database's clock in their own statements (`database_seconds`).

Each reading is the database's, one round trip (in the transaction the caller is in, if
any; a batch of events reads it once): a reading kept and carried forward on this
machine's clock was off by up to half the round trip it took, and with several processes
a return was dated before the departure answered just before it (a review). A reading
taken after another finished is never earlier. SQLite is one machine's file: its store
keeps this machine's clock (`readmit.clock.now`).
"""

import time
from datetime import UTC, datetime

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
