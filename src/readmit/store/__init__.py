"""Work-state stores, chosen by URL.

- ``sqlite:///path/to/readmit.db`` (relative), ``sqlite:////abs/path.db``, ``sqlite://:memory:``
- ``postgresql://user@host:port/dbname`` (needs the ``[postgres]`` extra)
"""

from readmit.errors import ConfigError
from readmit.store.base import DecisionSummary, WorkStateStore
from readmit.store.sql import SqlStore
from readmit.store.sqlite import SQLiteStore
from readmit.urls import shown

DEFAULT_URL = "sqlite:///readmit.db"


def open_store(url: str, *, migrate: bool = True) -> SqlStore:
    """Open the store a URL names (creating and migrating its schema if needed).

    ``migrate``: false leaves the schema as it is, for `readmit migrate --check`; such a
    store is read only to learn what it lacks (`readmit.store.upgrade.lacking`).

    Raises:
        ConfigError: if the URL's scheme is not a known store, it names no SQLite file,
            or the PostgreSQL extra is not installed.
        StoreError: if the database cannot be opened.
    """
    if url.startswith("sqlite://"):
        path = url.removeprefix("sqlite://")
        path = path.removeprefix("/") if path != "/:memory:" else ":memory:"
        if not path:  # most often sqlite:///$DB with $DB unset: not a throwaway store
            raise ConfigError(
                f"{shown(url)!r} names no file: write sqlite:///PATH (sqlite:////PATH for an "
                "absolute path), or sqlite://:memory: for a store that ends with the process"
            )
        refuse_options(url, path)
        return SQLiteStore(path, migrate=migrate)
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from readmit.store.postgres import PostgresStore
        except ImportError as exc:  # the extra is not installed (or psycopg cannot load)
            raise ConfigError(str(exc)) from exc

        return PostgresStore(url, migrate=migrate)
    if "://" not in url:  # a bare path (or sqlite:PATH): the store URL it probably meant
        path = url.removeprefix("sqlite:")
        if shown(url) != url:
            raise ConfigError(f"{shown(url)!r} is not a store URL")
        raise ConfigError(f"{url!r} is not a store URL: for a SQLite file write sqlite:///{path}")
    raise ConfigError(
        f"unknown store {url.split('://', 1)[0]!r} in {shown(url)!r} "
        "(known: sqlite:///PATH, sqlite://:memory:, postgresql://USER@HOST:PORT/DB)"
    )


def refuse_options(url: str, path: str) -> None:
    """Refuse a SQLite store URL whose ``path`` holds a ``?``: options it would ignore.

    sqlite:///x.db?mode=ro used to open a new file named "x.db?mode=ro". A file whose name
    holds a ``?`` cannot be named in a URL for the same reason: it must be renamed.

    Raises:
        ConfigError: if ``path`` holds a ``?``.
    """
    if "?" in path:
        raise ConfigError(
            f"{shown(url)!r}: a SQLite store URL takes no options (?...); "
            "a file whose name holds a '?' must be renamed to be opened"
        )


__all__ = [
    "DEFAULT_URL",
    "DecisionSummary",
    "SQLiteStore",
    "SqlStore",
    "WorkStateStore",
    "open_store",
]
