"""Work-state stores, chosen by URL: ``sqlite:///path/to/readmit.db`` or ``sqlite://:memory:``."""

from readmit.errors import ConfigError
from readmit.store.base import DecisionSummary, WorkStateStore
from readmit.store.sqlite import SQLiteStore

DEFAULT_URL = "sqlite:///readmit.db"


def open_store(url: str) -> WorkStateStore:
    """Open the store a URL names.

    Raises:
        ConfigError: if the URL's scheme is not a known store.
    """
    if url.startswith("sqlite://"):
        path = url.removeprefix("sqlite://")
        path = path.removeprefix("/") if path != "/:memory:" else ":memory:"
        return SQLiteStore(path or ":memory:")
    scheme = url.split("://", 1)[0] if "://" in url else url
    raise ConfigError(
        f"unknown store {scheme!r} in {url!r} (known: sqlite:///PATH, sqlite://:memory:)"
    )


__all__ = ["DEFAULT_URL", "DecisionSummary", "SQLiteStore", "WorkStateStore", "open_store"]
