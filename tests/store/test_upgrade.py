"""A store an older readmit made is upgraded where it is opened, and says so once."""

import logging
from pathlib import Path

import pytest

from conftest import store_url
from readmit.model import Agent
from readmit.store import SqlStore, open_store

LAST = "m029_obligations_by_frontier"


def _before_the_last_migration(store: SqlStore) -> None:
    """Undo `LAST` in ``store``, as a store of the readmit before it is."""
    with store.conn.transaction():
        store.conn.execute("DROP INDEX obligations_by_frontier")
        store.conn.execute("ALTER TABLE obligations DROP COLUMN frontier")
        store.conn.execute("DELETE FROM _readmit_migrations WHERE name = ?", (LAST,))


def test_opening_a_store_an_older_readmit_made_warns_what_it_applied(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Any command that opened it, `readmit audit` too, upgraded it silently (a probe)."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
        _before_the_last_migration(store)
        store.close()

        with caplog.at_level(logging.WARNING, logger="readmit.store"):
            open_store(url).close()
            upgraded = [r.getMessage() for r in caplog.records]
            open_store(url).close()  # up to date: nothing more is said

    assert len(upgraded) == 1
    assert upgraded[0].startswith(f"upgraded the store to this readmit's schema: applied {LAST}")
    assert upgraded[0].endswith("; an older readmit no longer opens it")
    assert [r.getMessage() for r in caplog.records] == upgraded


def test_a_store_made_now_is_not_said_to_be_upgraded(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        store_url(backend, tmp_path) as url,
        caplog.at_level(logging.WARNING, logger="readmit.store"),
    ):
        open_store(url).close()

    assert caplog.records == []


def test_a_store_with_no_workspace_yet_is_not_said_to_be_upgraded(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Several processes opening a new PostgreSQL store at once each applied some of its
    migrations, and two of six warned of an upgrade (a review)."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        _before_the_last_migration(store)  # as if another process had got this far
        store.close()

        with caplog.at_level(logging.WARNING, logger="readmit.store"):
            open_store(url).close()

    assert caplog.records == []
