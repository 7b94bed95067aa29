"""An item's withdrawal is a row of ``withdrawn``; the item's own row is never rewritten.

A store written before (its withdrawals in the items' ``status`` column) reads the same
after the migration, and a readmit that predates it fails on the store loudly. A store
migrated by a newer readmit is refused by this one.
"""

import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from builders import T0
from conftest import fresh_postgres_schema, store_url
from readmit.errors import InvalidEvent, MigrationError, StoreError
from readmit.events import Assert, ItemDraft, Revoke, Supersede
from readmit.model import Agent
from readmit.store import WorkStateStore, open_store
from readmit.store.sql import SqlStore

AGENTS = [Agent(id="A1", principal="p", role="ops"), Agent(id="A2", principal="p", role="dev")]


def _t(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def _history(store: WorkStateStore) -> None:
    store.create_workspace("ws", AGENTS)
    drafts = [ItemDraft(id=i, text=f"Fact {i}.", key="k" if i in "ab" else None) for i in "abcd"]
    store.append(
        "ws", [Assert(id=f"e{n}", at=_t(n), author="A2", item=d) for n, d in enumerate(drafts)]
    )
    store.append(
        "ws",
        [
            Revoke(id="e5", at=_t(5), author="A2", target="c", why="gone"),
            Supersede(
                id="e6", at=_t(6), author="A2", target="d", item=ItemDraft(id="d2", text="D2.")
            ),
            # Asserted and withdrawn in one batch.
            Assert(id="e7", at=_t(7), author="A2", item=ItemDraft(id="x", text="X.")),
            Revoke(id="e8", at=_t(8), author="A2", target="x", why="wrong"),
        ],
    )


def _withdrawn(store: WorkStateStore) -> list[tuple[str, str]]:
    assert isinstance(store, SqlStore)
    rows = store.conn.execute("SELECT id, status FROM withdrawn ORDER BY id").fetchall()
    return [(r[0], r[1]) for r in rows]


def _visible(store: WorkStateStore) -> list[str]:
    return [i.id for i in store.visible_state("ws", "A1")]


def test_withdrawals_are_rows_of_their_own(store: WorkStateStore) -> None:
    _history(store)

    assert _withdrawn(store) == [
        ("a", "replaced"),
        ("c", "revoked"),
        ("d", "superseded"),
        ("x", "revoked"),
    ]
    assert _visible(store) == ["b", "d2"]
    assert list(store.depart("ws", "A1", _t(9)).item_ids) == ["b", "d2"]
    with pytest.raises(InvalidEvent, match="no longer active"):
        store.append("ws", [Revoke(id="e9", at=_t(9), author="A2", target="c", why="again")])


def _written_before(url: str) -> None:
    """A store holding `_history`, as m008 left it: withdrawals in the items' own column."""
    store = open_store(url)
    _history(store)
    assert isinstance(store, SqlStore)
    with store.conn.transaction():
        db = store.conn
        db.execute("ALTER TABLE items RENAME COLUMN status_before_m009 TO status")
        for item_id, status in _withdrawn(store):
            db.execute("UPDATE items SET status = ? WHERE id = ?", (status, item_id))
        db.execute("DROP TABLE withdrawn")
        db.execute("DELETE FROM _readmit_migrations WHERE name = 'm009_withdrawn_items'")
        # m012 adds a column to ``withdrawn``: undone too, to run again after m009.
        db.execute("DROP TABLE checkpoint_left_out")
        db.execute("ALTER TABLE invalidations DROP COLUMN principal")
        db.execute("ALTER TABLE invalidations DROP COLUMN role")
        db.execute("DELETE FROM _readmit_migrations WHERE name LIKE ?", ("m012_%",))
    store.close()


def test_a_store_written_before_reads_the_same_after_the_migration(
    backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as url:
        _written_before(url)

        again = open_store(url)
        withdrawn, visible = _withdrawn(again), _visible(again)
        with pytest.raises(StoreError, match="status"):  # what a readmit before it read
            again.conn.execute("SELECT id FROM items WHERE status = 'active'")
        again.append("ws", [Revoke(id="e9", at=_t(9), author="A2", target="b", why="gone")])
        after = _visible(again)
        again.close()

    assert withdrawn == [("a", "replaced"), ("c", "revoked"), ("d", "superseded"), ("x", "revoked")]
    assert visible == ["b", "d2"]
    assert after == ["d2"]


def test_a_store_migrated_by_a_newer_readmit_is_refused(backend: str, tmp_path: Path) -> None:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        store.conn.execute("INSERT INTO _readmit_migrations (name) VALUES ('m999_from_the_future')")
        with pytest.raises(MigrationError, match="newer readmit"):  # /health, while it runs
            store.check()
        store.close()

        with pytest.raises(
            MigrationError, match=r"newer readmit \(m999_from_the_future\): upgrade"
        ):
            open_store(url)


def test_a_withdrawal_by_an_older_readmit_during_the_migration_is_kept() -> None:
    """PostgreSQL: an older readmit's batch, open when the migration starts, withdraws an item.

    The migration waits for it and copies that withdrawal too. (SQLite's write lock keeps
    the migration from starting while another writer's batch is open.)
    """
    import psycopg

    with fresh_postgres_schema() as url:
        _written_before(url)
        with psycopg.connect(url) as older, psycopg.connect(url, autocommit=True) as watch:
            older.execute("UPDATE items SET status = 'revoked' WHERE workspace = 'ws' AND id = 'b'")
            opened: list[WorkStateStore] = []
            migrating = threading.Thread(target=lambda: opened.append(open_store(url)))
            migrating.start()
            waits = (  # the migration's statement, waiting for the batch's lock
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE 'ALTER TABLE items RENAME COLUMN status %'"
            )
            deadline = time.monotonic() + 60
            while watch.execute(waits).fetchone() == (0,):  # until the migration waits on it
                assert time.monotonic() < deadline, "the migration never waited for the batch"
                time.sleep(0.01)
            older.commit()
            migrating.join(timeout=60)
        assert opened, "the migration did not finish"
        withdrawn, visible = _withdrawn(opened[0]), _visible(opened[0])
        opened[0].close()

    assert ("b", "revoked") in withdrawn
    assert visible == ["d2"]
