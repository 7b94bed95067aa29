"""The store's clock: the database's on PostgreSQL, each reading a round trip to it.

Servers on several machines date by it (`readmit.store.clock`); that they then decide as
one process does with their machines' clocks apart is `tests/store/test_multiprocess.py`.
"""

import threading
from datetime import UTC, datetime

import readmit.clock
from readmit.events import Assert, ItemDraft
from readmit.model import Agent
from readmit.store import SqlStore, WorkStateStore

_AD_HOC = threading.Lock()
"""The store's ad-hoc connection is one connection: one thread at a time reads on it."""


def _database(store: SqlStore) -> datetime:
    with _AD_HOC:
        (seconds,) = store.conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()
    return datetime.fromtimestamp(float(seconds), UTC)


def test_a_store_dates_by_the_databases_clock_on_postgresql_and_the_machines_on_sqlite(
    store: WorkStateStore,
) -> None:
    """Each reading lies between the database's readings just before and just after it:
    one kept and carried forward was ahead of a reading taken after it, and a return
    through one process was dated before a departure answered through another (a review)."""
    assert isinstance(store, SqlStore)
    if store.conn.dialect == "sqlite":
        assert store.now is readmit.clock.now  # one machine's file: its clock
        return
    late: list[tuple[datetime, datetime, datetime]] = []

    def read() -> None:
        for _ in range(50):
            before, at, after = _database(store), store.now(), _database(store)
            if not before <= at <= after:
                late.append((before, at, after))

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(timeout=120)

    assert late == []


def test_events_whose_time_the_store_keeps_are_dated_by_its_clock_once_a_batch(
    store: WorkStateStore,
) -> None:
    assert isinstance(store, SqlStore)
    store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
    events = [
        Assert(
            id=f"e{n}",
            at=datetime(2000, 1, 1, tzinfo=UTC),
            author="A1",
            item=ItemDraft(id=f"i{n}", text=f"Note {n}."),
        )
        for n in range(3)
    ]
    before = store.now()

    recorded = store.append("ws", events, clock=store.now)

    after = store.now()
    (at,) = {r.event.at for r in recorded}  # one reading, in the batch's transaction
    assert before <= at <= after
