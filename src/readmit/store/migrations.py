"""Schema migrations: named, applied in order, recorded in ``_readmit_migrations``.

Each migration runs in one transaction together with its record, so a crash
leaves it either applied and recorded or not applied at all. Never edit a
shipped migration; add a new one.
"""

import sqlite3
from collections.abc import Callable

from readmit.errors import MigrationError

Migration = Callable[[sqlite3.Connection], None]
SQLITE_MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next SQLite migration, named after the function."""
    SQLITE_MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    """The initial schema: event log, projections, checkpoints, private banks, audit log."""
    for statement in _M001:
        db.execute(statement)


_M001 = [
    """CREATE TABLE workspaces (id TEXT PRIMARY KEY)""",
    """CREATE TABLE agents (
    workspace TEXT NOT NULL REFERENCES workspaces(id), id TEXT NOT NULL,
    principal TEXT NOT NULL, role TEXT NOT NULL, PRIMARY KEY (workspace, id))""",
    """CREATE TABLE events (
    workspace TEXT NOT NULL REFERENCES workspaces(id), epoch INTEGER NOT NULL,
    id TEXT NOT NULL, at TEXT NOT NULL, author TEXT NOT NULL, op TEXT NOT NULL,
    body TEXT NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (workspace, epoch), UNIQUE (workspace, id))""",
    """CREATE TABLE names (
    workspace TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
    PRIMARY KEY (workspace, id)) WITHOUT ROWID""",
    """CREATE TABLE items (
    workspace TEXT NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, key TEXT,
    status TEXT NOT NULL DEFAULT 'active', body TEXT NOT NULL,
    PRIMARY KEY (workspace, id))""",
    """CREATE INDEX items_by_epoch ON items (workspace, epoch)""",
    """CREATE INDEX items_by_key ON items (workspace, key) WHERE key IS NOT NULL""",
    """CREATE TABLE evidence (
    workspace TEXT NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL,
    digest TEXT NOT NULL, PRIMARY KEY (workspace, id))""",
    """CREATE TABLE obligations (
    workspace TEXT NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL,
    resolved_epoch INTEGER, body TEXT NOT NULL, PRIMARY KEY (workspace, id))""",
    """CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY, workspace TEXT NOT NULL, agent TEXT NOT NULL,
    epoch INTEGER NOT NULL, at TEXT NOT NULL, digest TEXT NOT NULL)""",
    """CREATE INDEX checkpoints_by_agent ON checkpoints (workspace, agent, at)""",
    """CREATE TABLE checkpoint_items (
    checkpoint INTEGER NOT NULL, item TEXT NOT NULL,
    PRIMARY KEY (checkpoint, item)) WITHOUT ROWID""",
    """CREATE TABLE experiences (
    workspace TEXT NOT NULL, agent TEXT NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL,
    at TEXT NOT NULL, source_item TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (workspace, agent, id))""",
    """CREATE TABLE decisions (
    id INTEGER PRIMARY KEY, workspace TEXT NOT NULL, agent TEXT NOT NULL, at TEXT NOT NULL,
    epoch INTEGER NOT NULL, outcome TEXT NOT NULL, body TEXT NOT NULL)""",
]


def applied(db: sqlite3.Connection) -> set[str]:
    """Names of the migrations already applied."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _readmit_migrations (name TEXT PRIMARY KEY, "
        "applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    return {row[0] for row in db.execute("SELECT name FROM _readmit_migrations")}


def pending(db: sqlite3.Connection) -> list[str]:
    """Names of the migrations not yet applied (read-only apart from the bookkeeping table)."""
    done = applied(db)
    return [name for name, _ in SQLITE_MIGRATIONS if name not in done]


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply every pending migration, each in its own transaction; return their names."""
    done = applied(db)
    ran = []
    for name, fn in SQLITE_MIGRATIONS:
        if name in done:
            continue
        try:
            db.execute("BEGIN IMMEDIATE")
            fn(db)
            db.execute("INSERT INTO _readmit_migrations (name) VALUES (?)", (name,))
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            db.execute("ROLLBACK")
            raise MigrationError(f"migration {name} failed: {exc}") from exc
        ran.append(name)
    return ran
