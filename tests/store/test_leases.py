"""A lease has one holder at a time, in every process, until given back or run out."""

import time

from readmit.store import SqlStore, WorkStateStore


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
