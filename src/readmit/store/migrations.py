"""Schema migrations: named, applied in order, recorded in ``_readmit_migrations``.

Each migration runs in one transaction together with its record, so a failure leaves it
either applied and recorded or not applied at all. The migrations themselves, and what a
step may be, are in `readmit.store.schema`. Never edit a shipped migration; add a new one.
"""

from readmit.errors import MigrationError, StoreError
from readmit.store.connection import Connection
from readmit.store.dialects import DIALECT
from readmit.store.schema import MIGRATIONS

__all__ = ["MIGRATIONS", "applied", "migrate", "missing", "pending", "refuse_newer"]

_BOOKKEEPING = (
    "CREATE TABLE IF NOT EXISTS _readmit_migrations "
    "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
)

_LOCK = "_readmit_migrations"


def applied(conn: Connection) -> set[str]:
    """Names of the migrations already applied."""
    with conn.transaction(lock=_LOCK):
        conn.execute(_BOOKKEEPING)
        return {row[0] for row in conn.execute("SELECT name FROM _readmit_migrations")}


def pending(conn: Connection) -> list[str]:
    """Names of the migrations not yet applied.

    Raises:
        MigrationError: if a newer readmit migrated the store (this one would misread it).
    """
    return missing(applied(conn))


def missing(done: set[str]) -> list[str]:
    """The migrations ``done`` (the names applied) lacks, after `refuse_newer`."""
    refuse_newer(done)
    return [name for name, _ in MIGRATIONS if name not in done]


def refuse_newer(done: set[str]) -> None:
    """Raise `MigrationError` if ``done`` (applied migrations) has any this version lacks."""
    newer = sorted(done - {name for name, _ in MIGRATIONS})
    if newer:
        raise MigrationError(
            f"the store was migrated by a newer readmit ({', '.join(newer)}): upgrade readmit"
        )


def migrate(conn: Connection) -> list[str]:
    """Apply every pending migration, each in its own transaction; return their names.

    Raises:
        MigrationError: naming the migration that failed (it was rolled back).
    """
    ran = []
    for name in pending(conn):
        statements = dict(MIGRATIONS)[name]
        try:
            with conn.transaction(lock=_LOCK):
                if conn.execute(  # another process may have got there first
                    "SELECT 1 FROM _readmit_migrations WHERE name = ?", (name,)
                ).fetchone():
                    continue
                for statement in statements:
                    if callable(statement):
                        statement(conn)
                    else:
                        conn.execute(statement.format(**DIALECT[conn.dialect]))
                conn.execute("INSERT INTO _readmit_migrations (name) VALUES (?)", (name,))
        except StoreError as exc:
            raise MigrationError(f"migration {name} failed: {exc}") from exc
        ran.append(name)
    return ran
