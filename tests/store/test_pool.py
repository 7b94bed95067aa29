"""A store's connections when its database server restarts, or stops answering."""

import socket
import threading
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from conftest import BACKENDS, store_url
from readmit.errors import StoreError
from readmit.model import Agent
from readmit.store import SqlStore, open_store, postgres


def with_idle_connections(store: SqlStore, count: int = 4) -> None:
    """Leave ``count`` connections idle in ``store``'s pool (opened at once, given back)."""
    started, go = threading.Barrier(count), threading.Event()

    def read() -> None:
        with store._pool.connection() as db:
            started.wait(60)
            go.wait(60)
            db.execute("SELECT 1").fetchone()

    readers = [threading.Thread(target=read) for _ in range(count)]
    for t in readers:
        t.start()
    go.set()
    for t in readers:
        t.join()


def test_after_the_server_drops_its_connections_one_request_fails_not_one_per_idle_one(
    tmp_path: Path,
) -> None:
    with store_url("postgres", tmp_path) as url:
        name = f"readmit-pool-{uuid.uuid4().hex}"  # its connections only, not other tests'
        store = open_store(f"{url}&application_name={name}")
        store.create_workspace("w", [Agent(id="a", principal="p", role="r")])
        with_idle_connections(store)
        with psycopg.connect(url, autocommit=True) as admin:  # as a restart would
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (name,),
            )

        failed = 0
        for _ in range(4):
            try:
                store.agents("w")
            except StoreError:
                failed += 1
        store.close()

    assert failed == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_error_of_readmit_s_own_keeps_the_idle_connections(backend: str, tmp_path: Path) -> None:
    """Only a lost server takes them: a caller asking for decisions that do not exist would
    otherwise make every later request open a connection again."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        with_idle_connections(store)
        idle = len(store._pool._idle)

        with pytest.raises(StoreError, match="no decision 7"):
            store.decision(7)
        kept = len(store._pool._idle)
        store.close()

    assert idle >= 3  # SQLite keeps its first connection apart too
    assert kept == idle - 1  # the one that failed is closed, as before


def test_a_server_that_never_answers_is_a_store_error_not_a_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stopped or overloaded server accepts the connection and says nothing: each request
    that opened a connection waited for good."""
    monkeypatch.setattr(postgres, "CONNECT_TIMEOUT_S", 1)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
            open_store(f"postgresql://u@127.0.0.1:{port}/db")

    assert time.monotonic() - started < 60  # the timeout, not a hang
