"""A store's pool after its database server dropped every connection (a restart)."""

import threading
from pathlib import Path

import psycopg

from conftest import store_url
from readmit.errors import StoreError
from readmit.model import Agent
from readmit.store import open_store


def test_after_the_server_drops_its_connections_one_request_fails_not_one_per_idle_one(
    tmp_path: Path,
) -> None:
    with store_url("postgres", tmp_path) as url:
        store = open_store(url)
        store.create_workspace("w", [Agent(id="a", principal="p", role="r")])
        started, go = threading.Barrier(4), threading.Event()

        def read() -> None:  # four at once: four connections, then idle in the pool
            with store._pool.connection() as db:
                started.wait(60)
                go.wait(60)
                db.execute("SELECT 1").fetchone()

        readers = [threading.Thread(target=read) for _ in range(4)]
        for t in readers:
            t.start()
        go.set()
        for t in readers:
            t.join()
        with psycopg.connect(url, autocommit=True) as admin:  # as a restart would
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )

        failed = 0
        for _ in range(4):
            try:
                store.agents("w")
            except StoreError:
                failed += 1
        store.close()

    assert failed == 1
