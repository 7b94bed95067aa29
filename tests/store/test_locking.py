"""Locking is per workspace and reads never take write locks (issue 11, item 7).

A write transaction is held open from inside the store, through the ``clock``
an append calls while its transaction is open; the test releases it only after
the reads it runs meanwhile have finished (or after a generous timeout, failing).
"""

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import pytest

from builders import T0
from conftest import store_url
from readmit.events import Assert, ItemDraft
from readmit.model import Agent
from readmit.service.keys import key_hash
from readmit.store import SqlStore, open_store

AGENTS = [Agent(id="A1", principal="p", role="r")]
T = TypeVar("T")
WAIT_S = 60
"""Generous: the reads below take milliseconds unless a lock holds them up."""


def _item(n: int) -> Assert:
    return Assert(id=f"e{n}", at=T0, author="A1", item=ItemDraft(id=f"i{n}", text=f"Fact {n}."))


@contextmanager
def _open(backend: str, tmp_path: Path) -> Iterator[SqlStore]:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        for workspace in ("A", "B"):
            store.create_workspace(workspace, AGENTS)
            store.append(workspace, [_item(1)])
        store.add_agent_key("B", "A1", key_hash("key-of-b"), T0)
        try:
            yield store
        finally:
            store.close()


@contextmanager
def _write_held_open(store: SqlStore, workspace: str) -> Iterator[None]:
    """An append to ``workspace`` whose transaction stays open until the block ends."""
    inside, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def clock() -> datetime:
        inside.set()
        release.wait(timeout=WAIT_S * 2)
        return T0

    def write() -> None:
        try:
            store.append(workspace, [_item(2)], clock=clock)
        except BaseException as exc:
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert inside.wait(timeout=WAIT_S), "the write never started"
        yield
    finally:
        release.set()
        writer.join(timeout=WAIT_S)
    assert not errors, errors
    assert [r.event.id for r in store.events(workspace)] == ["e1", "e2"]


def _finishes(work: Callable[[], T]) -> T:
    """Run ``work`` on another thread; its result if it finished within `WAIT_S`."""
    result: list[T] = []
    thread = threading.Thread(target=lambda: result.append(work()))
    thread.start()
    thread.join(timeout=WAIT_S)
    assert result, "held up by a write in progress"
    return result[0]


def test_reads_complete_while_a_write_transaction_is_open(backend: str, tmp_path: Path) -> None:
    with _open(backend, tmp_path) as store, _write_held_open(store, "A"):
        caller = _finishes(lambda: store.agent_for_key(key_hash("key-of-b")))
        other = _finishes(lambda: [i.id for i in store.visible_state("B", "A1")])
        same = _finishes(lambda: [r.event.id for r in store.events("A")])

    assert caller == ("B", AGENTS[0])
    assert other == ["i1"]
    assert same == ["e1"]  # the snapshot before the open write


@pytest.mark.postgres
def test_a_write_to_another_workspace_completes_while_one_is_open(tmp_path: Path) -> None:
    with _open("postgres", tmp_path) as store, _write_held_open(store, "A"):
        written = _finishes(lambda: store.append("B", [_item(2)]))

    assert [r.epoch for r in written] == [2]


def test_reads_do_not_wait_for_another_process_holding_the_sqlite_write_lock(
    tmp_path: Path,
) -> None:
    with _open("sqlite", tmp_path) as store:
        other = sqlite3.connect(str(tmp_path / "readmit.db"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            state = _finishes(lambda: [i.id for i in store.visible_state("A", "A1")])
            caller = _finishes(lambda: store.agent_for_key(key_hash("key-of-b")))
        finally:
            other.execute("ROLLBACK")
            other.close()

    assert state == ["i1"]
    assert caller == ("B", AGENTS[0])


def test_a_new_sqlite_file_another_connection_holds_locked_opens_once_it_is_released(
    tmp_path: Path,
) -> None:
    """Two processes opening one new store: the first still in rollback mode, writing. The
    second's switch to WAL waits for its lock, as a write would, instead of failing."""
    path = tmp_path / "new.db"
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE t (x)")
    opened: list[SqlStore] = []
    opening = threading.Thread(target=lambda: opened.append(open_store(f"sqlite:///{path}")))
    opening.start()
    opening.join(0.5)  # it waits (on a busy machine it may not have started yet)
    other.execute("COMMIT")
    other.close()
    opening.join(60)

    assert len(opened) == 1
    opened[0].close()


def test_an_in_memory_store_serves_threads_one_at_a_time() -> None:
    store = open_store("sqlite://:memory:")
    store.create_workspace("A", AGENTS)
    threads = [threading.Thread(target=store.append, args=("A", [_item(n)])) for n in range(1, 9)]

    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=WAIT_S)

    assert sorted(r.event.id for r in store.events("A")) == sorted(f"e{n}" for n in range(1, 9))
    store.close()
