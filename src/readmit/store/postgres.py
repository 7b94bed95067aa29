"""The PostgreSQL connection adapter: the shared store for teams across machines.

Writers to one workspace are serialized with a transaction-scoped advisory
lock, so epochs stay strictly increasing and gap-free under concurrent writers
(writers of other workspaces do not wait); reads run in REPEATABLE READ, READ
ONLY snapshots, so one return sees one snapshot and takes no lock.
"""

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from readmit.errors import ConfigError, StoreError, install_hint

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.conninfo import conninfo_to_dict
except ImportError as _import_error:  # pragma: no cover - exercised without the extra
    raise ImportError(
        f"the PostgreSQL store needs psycopg: {install_hint('postgres')}"
    ) from _import_error

from readmit.store.connection import Conflict, Cursor, storable
from readmit.store.deadline import ENV, UNKNOWN, Deadline, seconds_from
from readmit.store.pool import Pool
from readmit.store.sql import SqlStore
from readmit.urls import one_at, quotes_password, shown


def _said(exc: Exception) -> str:
    """What libpq said, on one line (its lines and tabs joined)."""
    return " ".join(str(exc).split())


_HIDDEN = "(libpq's message is not shown: it may quote the password)"


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


CONNECT_TIMEOUT_S = 10
"""How long a new connection waits for the server, unless the URL says (``connect_timeout``):
a server that accepts and never answers (stopped, overloaded) held each request that opened
one for good; it is now a 503 ``store_error`` after this."""


CLIENT_CHECK_MS = 1000
"""How often the server looks whether the client of a statement it runs is still there."""


class PostgresConnection:
    """`Connection` over psycopg 3, in autocommit mode with explicit transactions."""

    dialect = "postgres"

    def __init__(self, url: str, deadline: float | None = None) -> None:
        one_at(url)
        try:
            params = conninfo_to_dict(url)
        except psycopg.Error as exc:  # libpq quotes what it could not read, a password too
            said = _said(exc) if shown(url) == url else _HIDDEN
            raise ConfigError(f"the PostgreSQL URL is malformed: {said}") from None
        except UnicodeError:  # a byte that is not UTF-8
            raise ConfigError("the PostgreSQL URL is malformed: it is not UTF-8") from None
        try:
            if "connect_timeout" in params:
                self.db = psycopg.connect(url, autocommit=True)
            else:
                self.db = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            said = _said(exc)
            if quotes_password(said, url, str(params.get("password") or "")):
                said = _HIDDEN
            raise StoreError(f"cannot connect to PostgreSQL: {said}") from exc
        except UnicodeError:  # a host name with an empty or over-long label
            raise ConfigError("the PostgreSQL URL names a host that cannot be encoded") from None
        self.deadline = None if deadline is None else Deadline(self._socket, deadline)
        if self.deadline is not None:
            self._stopped_with_its_client()

    def _stopped_with_its_client(self) -> None:
        """Have the server stop a statement whose client went away, as a cut one's has.

        A server that is slow rather than stopped ran a cut statement to its end, holding its
        transaction's locks: a workspace's next writer waited for it, and was cut in turn.
        The server looks every `CLIENT_CHECK_MS` (PostgreSQL 14 and later, on a system that
        can tell); elsewhere a cut statement still runs to its end.
        """
        try:
            with self._sent():
                self.db.execute(f"SET client_connection_check_interval = {CLIENT_CHECK_MS}")
        except StoreError:
            if self.broken:
                self.db.close()
                raise

    def _socket(self) -> int:
        try:
            return self.db.pgconn.socket
        except psycopg.Error:  # closed: -1 is no descriptor
            return -1

    @contextmanager
    def _sent(self) -> Iterator[None]:
        """A round trip to the server, within the statement deadline, its errors as ours."""
        deadline = self.deadline
        if deadline is not None:
            deadline.start()
        try:
            yield
        except pg_errors.UniqueViolation as exc:
            raise Conflict(str(exc)) from exc
        except psycopg.Error as exc:
            if deadline is not None and deadline.cut:
                raise StoreError(
                    f"PostgreSQL did not answer a statement within {deadline.seconds:g} s "
                    f"(the connection was closed; {ENV} sets the deadline)"
                ) from exc
            raise StoreError(f"PostgreSQL: {exc}") from exc
        finally:
            if deadline is not None:
                deadline.done()

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        storable(params)
        with self._sent():
            # A statement with an array parameter (a batch's lookups) is planned for its
            # values each time: a generic plan made while the table was small would scan it.
            prepare = False if any(isinstance(p, list) for p in params) else None
            cursor: Any = self.db.execute(_pg(sql), list(params), prepare=prepare)
        return cursor  # type: ignore[no-any-return]

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        with self._sent(), self.db.cursor() as cursor:
            cursor.executemany(_pg(sql), [list(r) for r in rows])

    def copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
        """Load ``rows`` into ``table`` with ``COPY ... FROM STDIN``, in the caller's transaction.

        The bulk path of `readmit.store.writer`: one stream for a batch's rows, a few
        times faster than one INSERT a row even pipelined.
        """
        statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"  # names are ours
        with self._sent(), self.db.cursor() as cursor, cursor.copy(statement) as load:
            for row in rows:
                load.write_row(row)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """A transaction of psycopg's, its BEGIN and its end each within the deadline.

        Not the work between them: a return decodes its items inside one.
        """
        block = self.db.transaction()
        with self._sent():
            block.__enter__()
        try:
            yield
        except BaseException as exc:
            with self._sent():
                block.__exit__(type(exc), exc, exc.__traceback__)
            if isinstance(exc, psycopg.Error):  # a row psycopg could not load, as it was fetched
                raise StoreError(f"PostgreSQL: {exc}") from exc
            raise
        try:
            with self._sent():
                block.__exit__(None, None, None)
        except StoreError as exc:
            cut = self.deadline is not None and self.deadline.cut  # sent, and maybe done
            if cut or _lost(exc.__cause__):
                said = f"{exc}; {UNKNOWN}"
                raise StoreError(said) from exc.__cause__  # the driver's: answered as the rest
            raise

    @contextmanager
    def transaction(self, lock: str | None = None, wait: float | None = None) -> Iterator[None]:
        with self._transaction():
            self.execute(
                "SET TRANSACTION ISOLATION LEVEL READ COMMITTED"
                if lock
                else "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"
            )
            if wait is not None:  # an advisory lock's wait is a lock wait: cut as one
                self.execute(f"SET LOCAL lock_timeout = {max(1, round(wait * 1000))}")
            if lock is not None:
                self.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (lock,))
            yield

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        with self._transaction():
            self.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield

    def check(self) -> None:
        self.execute("SELECT 1").fetchone()  # the server answers; the schema is checked apart

    @property
    def broken(self) -> bool:
        # A cut connection is broken though psycopg may not know yet: a cut that raced the
        # statement's answer leaves the statement its rows and the socket shut down.
        return self.db.broken or (self.deadline is not None and self.deadline.cut)

    def close(self) -> None:
        if self.deadline is not None:
            self.deadline.close()
        self.db.close()


class PostgresStore(SqlStore):
    """A `WorkStateStore` in a PostgreSQL database (a connection per transaction in flight)."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        deadline = seconds_from(os.environ)  # a setting it refuses before any connection
        super().__init__(Pool(partial(PostgresConnection, url, deadline)), url, migrate=migrate)


def _lost(error: BaseException | None) -> bool:
    """Whether a COMMIT that failed with ``error`` may have committed all the same.

    One whose answer never came (no SQLSTATE), or whose connection the server ended (class
    57, operator intervention; 08, connection exception): a backend terminated while it
    waited for synchronous replication had committed locally (two reviews). One the server
    refused (a serialization failure, a constraint) was rolled back.
    """
    if not isinstance(error, psycopg.OperationalError):
        return False
    return error.sqlstate is None or error.sqlstate[:2] in ("57", "08")
