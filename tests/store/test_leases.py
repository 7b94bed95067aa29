"""A lease has one holder at a time, in every process, until given back or run out."""

import time

import pytest

from readmit.store import SqlStore, WorkStateStore, leases
from readmit.store import clock as store_clock


def test_a_lease_has_one_holder_until_given_back_or_run_out(store: WorkStateStore) -> None:
    assert isinstance(store, SqlStore)
    assert store.lease("w", "x", "a", 30)
    assert not store.lease("w", "x", "b", 30)
    assert store.lease("w", "x", "a", 30)  # renewed by its holder
    assert store.lease("w", "y", "b", 30)  # another lease of the workspace
    assert store.lease("v", "x", "b", 30)  # the same lease of another workspace

    assert not store.lease("w", "x", "b", 0)  # only its holder gives it back
    assert not store.lease("w", "x", "b", 30)
    assert not store.lease("w", "x", "a", 0)
    assert store.lease("w", "x", "b", 0.001)  # given back: free

    time.sleep(0.01)
    assert store.lease("w", "x", "a", 30)  # b's ran out
    assert not store.lease("w", "x", "b", 30)


def test_who_holds_a_lease_and_whether_any_of_a_kind_is_held_and_what_ran_out_goes(
    store: WorkStateStore,
) -> None:
    assert isinstance(store, SqlStore)
    assert store.lease_holder("w", "x") is None
    store.lease("w", "x", "a", 30)
    store.lease("w", "ask 1", "r1", 0.001)
    store.lease("v", "ask 2", "r2", 30)  # another workspace's

    time.sleep(0.01)
    assert store.lease_holder("w", "x") == "a"
    assert not store.leased("w", "ask ")  # r1's ran out
    store.lease("w", "ask 3", "r3", 30)
    assert store.leased("w", "ask ")
    store.lease("w", "ask 3", "r3", 0)
    assert not store.leased("w", "ask ")
    (rows,) = store.conn.execute("SELECT COUNT(*) FROM leases WHERE workspace = 'w'").fetchone()
    assert rows == 1  # x; what ran out went at the next take


def test_a_kind_of_lease_is_its_names_exact_start_on_every_backend(
    store: WorkStateStore,
) -> None:
    """Not SQL's LIKE: no case folding (SQLite's), no wildcards in the names."""
    assert isinstance(store, SqlStore)
    store.lease("w", "ask_1", "r", 30)

    assert store.leased("w", "ask_")
    assert not store.leased("w", "ASK_")
    assert not store.leased("w", "as%")
    assert not store.leased("w", "a_k")


def test_a_process_whose_clock_runs_ahead_takes_no_lease_another_holds(
    store: WorkStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leases keep the database's time on PostgreSQL, which processes on several machines
    share: one whose clock ran 200 s ahead took a lease held for 30 s more, and its
    clean-up removed the holder's row (a review). On SQLite, the machine's, which the
    processes over one file share. (Held 100 s here: a busy machine meets it.)"""
    assert isinstance(store, SqlStore)
    assert store.lease("w", "x", "a", 100)
    assert store.lease("w", "ask 1", "r1", 100)
    monkeypatch.setattr(leases, "time", _Ahead())
    monkeypatch.setattr(store_clock, "time", _Ahead())  # `database_seconds` on SQLite

    taken = store.lease("w", "x", "b", 30)

    on_postgres = store.conn.dialect == "postgres"
    assert taken is not on_postgres
    assert store.leased("w", "ask ") is on_postgres
    assert (store.lease_holder("w", "x") == "a") is on_postgres
    assert store.renew_lease("w", "x", "a", 30) is on_postgres


class _Ahead:
    """The `time` module of a machine whose clock runs 200 s ahead."""

    def time(self) -> float:
        return time.time() + 200
