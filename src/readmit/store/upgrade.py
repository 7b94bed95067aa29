"""A store made by an older readmit, upgraded where it is opened, and said so.

Any command or process that opens such a store applies the migrations it lacks, a read
too (`readmit audit`), and from then on the older readmit refuses it. That was silent
(a probe): a warning now names what was applied, and how long it took.
"""

import logging
import time

from readmit.errors import StoreError
from readmit.store.connection import Connection
from readmit.store.migrations import applied, migrate, missing

log = logging.getLogger("readmit.store")


def upgrade(conn: Connection) -> list[str]:
    """`migrate` ``conn``'s store; a warning if an older readmit made it.

    A store made now is not upgraded: nothing is said, also when several processes
    opening it at once each apply some of its migrations (a review: two of six warned).

    Raises:
        MigrationError: naming the migration that failed (those before it stay applied).
    """
    started, older = time.perf_counter(), _holds_workspaces(conn)
    ran = migrate(conn)
    if ran and older:
        took = time.perf_counter() - started
        log.warning(
            "upgraded the store to this readmit's schema: applied %s (%d migration%s, "
            "%.1f s); an older readmit no longer opens it",
            ran[0] if len(ran) == 1 else f"{ran[0]} to {ran[-1]}",
            len(ran),
            "" if len(ran) == 1 else "s",
            took,
        )
    return ran


def _holds_workspaces(conn: Connection) -> bool:
    """Whether the store, before any migration runs, has a workspace (a new one has none)."""
    if not applied(conn):
        return False  # not even the first migration: no table of workspaces yet
    return conn.execute("SELECT 1 FROM workspaces LIMIT 1").fetchone() is not None


def lacking(conn: Connection) -> list[str]:
    """The migrations ``conn``'s store lacks, read without writing or waiting for their lock.

    A new store (no bookkeeping table yet) lacks them all.

    Raises:
        StoreError: if the server did not answer (not a table not made yet).
        MigrationError: if a newer readmit migrated the store.
    """
    try:
        rows = conn.execute("SELECT name FROM _readmit_migrations").fetchall()
    except StoreError:
        if conn.broken:
            raise
        rows = []
    return missing({r[0] for r in rows})
