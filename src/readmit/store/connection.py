"""The slice of a database connection the SQL store needs.

One store implementation serves both SQLite and PostgreSQL ("backends must
behave identically").
SQL is written once with ``?`` placeholders and the common dialect of both
(``ON CONFLICT DO NOTHING``, ``RETURNING``); each adapter translates its
driver's errors: a unique-constraint violation becomes `Conflict`, anything
else a `StoreError`.
"""

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Protocol

from readmit.canonical import UNSTORABLE
from readmit.errors import InvalidInput
from readmit.store.deadline import Deadline


class Conflict(Exception):
    """A unique constraint was violated (an id is already taken)."""


def storable(params: Sequence[object]) -> None:
    """Refuse a statement's string that no stored value holds, a list's too (`UNSTORABLE`).

    A library read given such a name (a workspace named with a NUL) failed otherwise on each
    store: SQLite found nothing, PostgreSQL raised a `StoreError` for the NUL, and both a
    ``UnicodeEncodeError`` for a lone surrogate (a review). Writes are checked before
    (`readmit.wire.domain`); this is one regular-expression search a string.

    Raises:
        InvalidInput: naming the value and the character.
    """
    for param in params:
        if type(param) is str:
            found = UNSTORABLE.search(param)
            if found is not None:
                raise InvalidInput(
                    f"{param[:60]!r} holds U+{ord(found.group()):04X} (a NUL or a lone "
                    "surrogate): no name or text in a store does"
                )
        elif type(param) is list:
            storable(param)


class Cursor(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int:
        """Rows changed by an UPDATE or DELETE."""
        ...

    def fetchone(self) -> Any:
        """The next row, or ``None``."""
        ...

    def fetchall(self) -> list[Any]:
        """Every remaining row."""
        ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """One database connection, used by one transaction at a time (see `readmit.store.pool`)."""

    dialect: str
    """``sqlite`` or ``postgres``: which schema migrations to apply."""
    deadline: Deadline | None
    """How long a statement may wait for its server (PostgreSQL's), if there is a limit."""

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        """Run one statement.

        Raises:
            Conflict: on a unique-constraint violation.
            StoreError: on any other database error.
        """
        ...

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        """Run one statement for every row."""
        ...

    def copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
        """Insert ``rows`` into ``table`` in one operation (PostgreSQL: COPY).

        Raises:
            Conflict: on a unique-constraint violation.
        """
        ...

    def transaction(
        self, lock: str | None = None, wait: float | None = None
    ) -> AbstractContextManager[None]:
        """A write transaction that commits on success and rolls back on any exception.

        ``lock`` names a workspace whose writers must be serialized (epochs are
        assigned as max + 1 inside the transaction). Reads inside see one snapshot.
        ``wait``: at most so many seconds for another session's hold of ``lock`` (on
        PostgreSQL; SQLite's lock is this process's file's, never a lost session's).
        """
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """A read-only transaction: one consistent snapshot, taking no write lock."""
        ...

    def check(self) -> None:
        """Check the database's integrity cheaply.

        Raises:
            StoreError: if the database is damaged or unreachable.
        """
        ...

    @property
    def broken(self) -> bool:
        """Whether its server is lost to it (dropped, restarted, its statement cut).

        The pool's idle connections to it are then likely lost too (`readmit.store.pool`).
        """
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


def stamp(at: datetime) -> str:
    """A time as stored: UTC, fixed width, so text order is time order."""
    return at.astimezone(UTC).isoformat(timespec="microseconds")
