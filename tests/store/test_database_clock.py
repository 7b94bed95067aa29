"""The store's clock: the database's on PostgreSQL, read once a second and carried forward.

Servers on several machines date by it (`readmit.store.clock`); that they then decide as
one process does with their machines' clocks apart is `tests/store/test_multiprocess.py`.
"""

from datetime import UTC, datetime, timedelta

import pytest

import readmit.clock
from readmit.errors import StoreError
from readmit.store import SqlStore, WorkStateStore
from readmit.store import clock as store_clock
from readmit.store.clock import DatabaseClock

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


class Database:
    """The database's side: its time (``at``), and how often it was read."""

    def __init__(self) -> None:
        self.at, self.reads, self.down = T0, 0, False

    def read(self) -> datetime:
        self.reads += 1
        if self.down:
            raise StoreError("the database is unreachable")
        return self.at


@pytest.fixture
def monotonic(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """This machine's monotonic clock, set by the test (``[seconds]``)."""
    now = [100.0]
    monkeypatch.setattr(store_clock, "elapsed", lambda: now[0])
    return now


def test_it_reads_the_database_at_most_once_a_second_and_carries_its_time_forward(
    monotonic: list[float],
) -> None:
    db = Database()
    clock = DatabaseClock(db.read)

    assert clock() == T0
    monotonic[0] += 0.25
    db.at = T0 + timedelta(hours=1)  # not read again within the second
    assert clock() == T0 + timedelta(seconds=0.25)
    assert db.reads == 1

    monotonic[0] += 0.75  # a second after the read: read again
    assert clock() == T0 + timedelta(hours=1)
    assert db.reads == 2


def test_it_never_goes_back_when_a_new_read_is_behind_what_it_carried_forward(
    monotonic: list[float],
) -> None:
    db = Database()
    clock = DatabaseClock(db.read)
    clock()
    monotonic[0] += 5
    assert clock() == T0  # the database's clock stood still, or was set back

    monotonic[0] += 0.5
    assert clock() == T0 + timedelta(seconds=0.5)


def test_a_failed_read_fails_the_call_and_the_next_call_reads_again(
    monotonic: list[float],
) -> None:
    db = Database()
    clock = DatabaseClock(db.read)
    clock()
    monotonic[0] += 2
    db.down = True
    with pytest.raises(StoreError):
        clock()  # no time carried forward past a read that failed

    db.down, db.at = False, T0 + timedelta(seconds=2)
    assert clock() == T0 + timedelta(seconds=2)
    assert db.reads == 3


def test_a_store_dates_by_the_databases_clock_on_postgresql_and_the_machines_on_sqlite(
    store: WorkStateStore,
) -> None:
    assert isinstance(store, SqlStore)
    if store.conn.dialect == "sqlite":
        assert store.now is readmit.clock.now  # one machine's file: its clock
        return
    (database,) = store.conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()
    first = store.now()
    assert first.tzinfo is not None
    assert abs(first.timestamp() - float(database)) < 30  # the same server, read apart
    assert store.now() >= first
