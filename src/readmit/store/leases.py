"""Leases: one holder at a time for work that several server processes could each do.

A lease is a row naming its holder and until when it holds, in seconds of the database's
clock on PostgreSQL (processes on several machines share it: one whose clock ran ahead
took leases others held, and its clean-up removed them) and of this machine's on SQLite
(its processes share a machine), as the rate buckets keep time (`readmit.store.buckets`).
It is taken in a write transaction (serialized with every other writer of its workspace, in
every process), so two processes never both hold it; a holder that dies loses it when it
runs out. Used so that of several ``readmit serve --judge-ahead`` processes over one
database, one judges a workspace ahead at a time (`readmit.service.ahead`), and so that a
return in one process can ask the judge of another to give way (`asked`).
"""

import time
from contextlib import AbstractContextManager

from readmit.store.clock import database_seconds
from readmit.store.connection import Connection


class Leases:
    """The part of `readmit.store.SqlStore` that keeps leases."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _transaction(self, lock: str) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def lease(self, workspace: str, name: str, holder: str, seconds: float) -> bool:
        """Take or renew lease ``name`` of ``workspace`` (`take`)."""
        with self._transaction(lock=workspace) as db:
            return take(db, (workspace, name), holder, seconds)

    def renew_lease(self, workspace: str, name: str, holder: str, seconds: float) -> bool:
        """Hold lease ``name`` of ``workspace`` ``seconds`` more, if ``holder`` has it still.

        One given back, or run out and taken by another, is not taken again.
        """
        with self._transaction(lock=workspace) as db:
            now = database_seconds(db)
            until = now + seconds
            return bool(
                db.execute(
                    "UPDATE leases SET until = ? WHERE workspace = ? AND name = ? AND holder = ? "
                    "AND until > ?",
                    (until, workspace, name, holder, now),
                ).rowcount
            )

    def lease_holder(self, workspace: str, name: str) -> str | None:
        """Who holds lease ``name`` of ``workspace`` now, if anyone."""
        with self._read() as db:
            return holder(db, (workspace, name))

    def leased(self, workspace: str, prefix: str) -> bool:
        """Whether any lease of ``workspace`` whose name starts with ``prefix`` is held now."""
        with self._read() as db:
            return asked(db, workspace, prefix)


def take(db: Connection, lease: tuple[str, str], holder: str, seconds: float) -> bool:
    """Take or renew ``lease`` for ``seconds``; ``False`` if another holder has it.

    ``lease``: its workspace and name. ``seconds`` 0 gives it back (if ``holder`` has
    it) and returns ``False``.
    """
    now = database_seconds(db)
    # what ran out (a holder that died) goes, so that rows of returns' asks do not pile up
    db.execute("DELETE FROM leases WHERE workspace = ? AND until <= ?", (lease[0], now))
    if seconds <= 0:
        db.execute(
            "DELETE FROM leases WHERE workspace = ? AND name = ? AND holder = ?", (*lease, holder)
        )
        return False
    row = db.execute(
        "SELECT holder, until FROM leases WHERE workspace = ? AND name = ?", lease
    ).fetchone()
    if row is not None and row[0] != holder and row[1] > now:
        return False
    db.execute(
        "INSERT INTO leases (workspace, name, holder, until) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (workspace, name) DO UPDATE SET holder = excluded.holder, "
        "until = excluded.until",
        (*lease, holder, now + seconds),
    )
    return True


def asked(db: Connection, workspace: str, prefix: str) -> bool:
    """Whether a lease of ``workspace`` whose name starts with ``prefix`` is held now."""
    row = db.execute(  # not LIKE: its case and its wildcards differ between the databases
        _ASKED[db.dialect], (workspace, len(prefix), prefix, *_clock(db))
    ).fetchone()
    return row is not None


def holder(db: Connection, lease: tuple[str, str]) -> str | None:
    """Who holds ``lease`` (its workspace and name) now, if anyone."""
    row = db.execute(_HOLDER[db.dialect], (*lease, *_clock(db))).fetchone()
    return None if row is None else str(row[0])


def _clock(db: Connection) -> tuple[float, ...]:
    """`database_seconds`' parameter to the statements below: PostgreSQL's clock is read in them."""
    return () if db.dialect == "postgres" else (time.time(),)


_ASKED = {
    "postgres": "SELECT 1 FROM leases WHERE workspace = ? AND substr(name, 1, ?) = ? "
    "AND until > EXTRACT(EPOCH FROM clock_timestamp()) LIMIT 1",
    "sqlite": "SELECT 1 FROM leases WHERE workspace = ? AND substr(name, 1, ?) = ? "
    "AND until > ? LIMIT 1",
}
_HOLDER = {
    "postgres": "SELECT holder FROM leases WHERE workspace = ? AND name = ? "
    "AND until > EXTRACT(EPOCH FROM clock_timestamp())",
    "sqlite": "SELECT holder FROM leases WHERE workspace = ? AND name = ? AND until > ?",
}
