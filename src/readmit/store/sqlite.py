"""The SQLite connection adapter: the embedded default store.

Autocommit mode with explicit ``BEGIN IMMEDIATE`` transactions (which take
the database's write lock, serializing writers across processes) and WAL
journaling, so a writer killed mid-batch leaves nothing of that batch behind.
"""

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from readmit.errors import StoreError
from readmit.store.connection import Conflict, Cursor
from readmit.store.sql import SqlStore


class SQLiteConnection:
    """`Connection` over :mod:`sqlite3`."""

    dialect = "sqlite"

    def __init__(self, path: str) -> None:
        try:
            self.db = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=30
            )
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store at {path!r}: {exc}") from exc

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        try:
            return self.db.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            raise Conflict(str(exc)) from exc
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite: {exc}") from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        try:
            self.db.executemany(sql, rows)
        except sqlite3.IntegrityError as exc:
            raise Conflict(str(exc)) from exc
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite: {exc}") from exc

    @contextmanager
    def transaction(self, lock: str | None = None) -> Iterator[None]:
        # BEGIN IMMEDIATE takes the write lock for the whole file: one writer at a time.
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def close(self) -> None:
        self.db.close()


class SQLiteStore(SqlStore):
    """A `WorkStateStore` in one SQLite file (or ``:memory:``)."""

    def __init__(self, path: str) -> None:
        super().__init__(SQLiteConnection(path), f"sqlite:///{path}")
        self.path = path
