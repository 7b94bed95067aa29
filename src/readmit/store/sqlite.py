"""The SQLite connection adapter: the embedded default store.

Autocommit mode with explicit transactions and WAL journaling, so a writer
killed mid-batch leaves nothing of that batch behind. Writes run in ``BEGIN
IMMEDIATE`` (the file's one write lock, serializing writers across processes);
reads run in ``BEGIN DEFERRED`` snapshots, which in WAL mode never wait for a
writer. Every connection waits up to `BUSY_TIMEOUT_S` for the write lock.
"""

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from urllib.parse import quote

from readmit.clock import elapsed
from readmit.errors import StoreError
from readmit.store.connection import Conflict, Cursor, storable
from readmit.store.deadline import Deadline
from readmit.store.pool import Pool
from readmit.store.sql import SqlStore
from readmit.urls import shown

BUSY_TIMEOUT_S = 30
"""How long a writer waits for another writer's file lock before failing."""


def _into_wal(db: sqlite3.Connection) -> None:
    """Journal ``db``'s file in WAL mode, waiting for another connection's lock as a writer does.

    A new file is in rollback mode until one connection switches it, and SQLite answers a
    switch under another connection's lock with "database is locked" at once, without
    waiting: two processes opening one new store clashed here.
    """
    deadline = elapsed() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or elapsed() > deadline:
                raise
            time.sleep(0.05)


class File:
    """The file a store opened, which its connections must still find at its path.

    SQLite in WAL mode writes on to a file removed or replaced (a backup restored) under it:
    `readmit mcp` answered writes with epochs for a file no one would read again, and a
    connection opened after made a new, empty file there (two reviews). The first
    connection notes the file's device and inode; each later one must find the same, and is
    opened without creating one; each write transaction (and ``/health``) checks it again.
    """

    def __init__(self, path: str) -> None:
        self.path = os.path.realpath(path)  # as the kernel resolves it (a link, then "..")
        self.identity: tuple[int, int] | None = None

    def opened(self) -> None:
        """Note the file (the first connection), or check it is the one noted."""
        if self.identity is None:
            self.identity = self._found()
        else:
            self.check()

    def check(self) -> None:
        """Raises: StoreError: if the file at the path is gone, or another."""
        if self.identity is not None and self._found() != self.identity:
            raise StoreError(
                "the SQLite store's file was removed or replaced while open: nothing is "
                "written to it (restart readmit with the store in place)"
            ) from sqlite3.OperationalError(f"{self.path}: removed or replaced")

    def _found(self) -> tuple[int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino


class SQLiteConnection:
    """`Connection` over :mod:`sqlite3`."""

    dialect = "sqlite"
    deadline: Deadline | None = None  # a local file: its statements wait on no server

    def __init__(self, path: str, file: File | None = None) -> None:
        self.file = file
        known = file is not None and file.identity is not None
        target = f"file:{quote(file.path)}?mode=rw" if file is not None and known else path
        try:
            self.db = sqlite3.connect(
                target,
                isolation_level=None,
                check_same_thread=False,
                timeout=BUSY_TIMEOUT_S,
                uri=known,
            )
            _into_wal(self.db)
            self.db.execute("PRAGMA foreign_keys = ON")
            if file is not None:
                file.opened()
        except StoreError:
            self.db.close()
            raise
        except sqlite3.Error as exc:
            folder = os.path.dirname(path)
            missing = folder and not os.path.isdir(folder)
            there = f" {shown(folder)!r}" if shown(folder) == folder else ""
            why = f"{exc}; there is no directory{there} to make it in" if missing else exc
            why = str(why).replace(path, "the file") if shown(path) != path else why
            raise StoreError(f"cannot open SQLite store at {shown(path)!r}: {why}") from exc

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        storable(params)
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

    def copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
        """Insert ``rows`` into ``table``: the bulk path of `readmit.store.writer`.

        In process, ``executemany`` of one prepared INSERT is SQLite's fastest load.
        """
        marks = ", ".join("?" * len(columns))
        names = ", ".join(columns)  # the writer's own table and column names, never data
        self.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)  # noqa: S608

    @contextmanager
    def transaction(self, lock: str | None = None, wait: float | None = None) -> Iterator[None]:
        # BEGIN IMMEDIATE takes the write lock for the whole file: one writer at a time.
        with self._within("BEGIN IMMEDIATE"):
            if self.file is not None:
                self.file.check()
            yield

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        # DEFERRED: the first read starts a WAL snapshot; no write lock is ever asked for.
        with self._within("BEGIN DEFERRED"):
            yield

    @contextmanager
    def _within(self, begin: str) -> Iterator[None]:
        self.execute(begin)
        try:
            yield
        except BaseException:
            if self.db.in_transaction:  # an error may have rolled it back already
                self.db.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def check(self) -> None:
        if self.file is not None:
            self.file.check()
        try:
            rows = [r[0] for r in self.db.execute("PRAGMA quick_check").fetchall()]
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite store is damaged: {exc}") from exc
        if rows != ["ok"]:
            raise StoreError(f"SQLite store is damaged: {'; '.join(map(str, rows[:3]))}")

    @property
    def broken(self) -> bool:
        return False  # a file: nothing between it and the connection to lose

    def close(self) -> None:
        self.db.close()


class SQLiteStore(SqlStore):
    """A `WorkStateStore` in one SQLite file (or ``:memory:``, one connection taking turns)."""

    def __init__(self, path: str, *, migrate: bool = True) -> None:
        memory = path in ("", ":memory:")
        file = None if memory or path.startswith("file:") else File(path)
        opened = path if file is None else file.path  # a later chdir moves nothing
        pool = Pool(partial(SQLiteConnection, opened, file), shared=memory)
        super().__init__(pool, f"sqlite:///{path}", migrate=migrate)
        self.path = path
