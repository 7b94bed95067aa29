"""A damaged store neither opens (so it cannot report healthy or take writes) nor checks out."""

import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest

from builders import T0
from conftest import fresh_postgres_schema, store_url
from readmit.errors import StoreError
from readmit.events import Assert, ItemDraft
from readmit.model import Agent
from readmit.store import open_store

PAGE = 4096
"""SQLite's default page size."""


def _filled(url: str) -> None:
    store = open_store(url)
    store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
    store.append(
        "ws",
        [
            Assert(
                id=f"e{n}",
                at=T0 + timedelta(seconds=n),
                author="A1",
                item=ItemDraft(id=f"i{n}", text=f"Fact number {n}, stated at some length."),
            )
            for n in range(2000)
        ],
    )
    store.close()  # the last connection to close folds the WAL into the file


def test_a_sqlite_file_with_garbage_in_the_middle_does_not_open(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/readmit.db"
    _filled(url)
    path = tmp_path / "readmit.db"
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.seek(size // 2 // PAGE * PAGE)
        f.write(bytes(range(256)) * (PAGE // 256))

    with pytest.raises(StoreError, match="damaged"):
        open_store(url)


def test_an_intact_store_checks_out(backend: str, tmp_path: Path) -> None:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)

        store.check()

        store.close()


def test_a_store_missing_a_migration_fails_its_check(backend: str, tmp_path: Path) -> None:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        store.conn.execute("DELETE FROM _readmit_migrations WHERE name = 'm003_judgments'")

        with pytest.raises(StoreError, match="missing migrations m003_judgments"):
            store.check()

        store.close()


def test_decision_bodies_are_compressed_with_lz4_where_postgresql_has_it() -> None:
    """SQLite stores bodies as they are; PostgreSQL's default (pglz) is four times slower."""
    with fresh_postgres_schema() as url:
        store = open_store(url)
        try:
            has_lz4 = store.conn.execute(
                "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                "AND 'lz4' = ANY(enumvals)"
            ).fetchone()
            method = store.conn.execute(
                "SELECT attcompression FROM pg_attribute "
                "WHERE attrelid = 'decisions'::regclass AND attname = 'body'"
            ).fetchone()
            assert method is not None
            assert method[0] == ("l" if has_lz4 else "")
        finally:
            store.close()


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_sqlite_store_whose_file_is_removed_or_replaced_while_open_writes_nothing(
    tmp_path: Path, how: str
) -> None:
    """``readmit mcp`` acknowledged writes to a file deleted under it (a review)."""
    path = tmp_path / "r.db"
    store = open_store(f"sqlite:///{path}")
    store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
    store.append("ws", [Assert(id="e1", at=T0, author="A1", item=ItemDraft(id="i1", text="x"))])
    backup = tmp_path / "backup.db"
    with closing(sqlite3.connect(path)) as live, closing(sqlite3.connect(backup)) as copy:
        live.backup(copy)
    for name in ("r.db", "r.db-wal", "r.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    if how == "replaced":
        backup.rename(path)  # a backup restored in its place

    later = Assert(
        id="e2", at=T0 + timedelta(seconds=1), author="A1", item=ItemDraft(id="i2", text="y")
    )
    for _ in range(3):  # on a new connection of the pool too (a review: it wrote there)
        with pytest.raises(StoreError, match=r"removed or replaced while open|unable to open"):
            store.append("ws", [later])
    with pytest.raises(StoreError):  # ``/health`` says so
        store.check()
    left = sorted(p.name for p in tmp_path.iterdir())  # no new, empty file made at the path
    assert left == (["r.db"] if how == "replaced" else ["backup.db"])
    store.close()
    if how == "replaced":
        again = open_store(f"sqlite:///{path}")  # opened again, it is written to
        again.append("ws", [later])
        assert [r.event.id for r in again.events("ws")] == ["e1", "e2"]
        again.close()
