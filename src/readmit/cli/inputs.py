"""What the user hands the CLI: JSON files and the URL of a store that must already exist.

Both refuse bad input with a `ReadmitError`, so the command ends in one
``error [code]: message`` line rather than a traceback or a new empty database.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from readmit import strict_json
from readmit.config import DB_ENV
from readmit.errors import ConfigError, InvalidInput, NotFound, StoreError
from readmit.model import Agent
from readmit.store import SqlStore, open_store, refuse_options
from readmit.urls import shown


def read_json(path: Path) -> Any:
    """Parse the JSON file at ``path`` strictly (see `readmit.strict_json`).

    Raises:
        InvalidInput: if the file cannot be read or is not strict JSON, naming the file.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    if not data.strip():  # a shell redirect of a command that failed leaves it so
        raise InvalidInput(f"{path} is empty: nothing was written to it")
    try:
        return strict_json.loads(data)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}") from None


def sqlite_path(url: str) -> Path | None:
    """The file a ``sqlite://`` URL names (as `open_store` reads it); None for other URLs."""
    if not url.startswith("sqlite://"):
        return None
    path = url.removeprefix("sqlite://").removeprefix("/")
    return None if path in ("", ":memory:", "/:memory:") else Path(path)


def sqlite_file(url: str) -> Path | None:
    """`sqlite_path`, refusing a directory.

    Raises:
        ConfigError: if ``url`` names a directory, or has options (`open_store` refuses them).
    """
    path = sqlite_path(url)
    if path is not None:
        refuse_options(url, str(path))
    try:
        folder = path is not None and path.is_dir()
    except OSError as exc:  # a name too long for the file system, say
        raise ConfigError(f"{shown(url)!r} names no file it can open: {exc.strerror}") from None
    if folder:
        raise ConfigError(
            f"{shown(str(path))!r} (from {shown(url)!r}) is a directory, not a database file"
        )
    return path


def db_given() -> str | None:
    """Where this command's --db came from: the option, the variable, or None (default)."""
    source = click.get_current_context().get_parameter_source("db")
    if source is ParameterSource.COMMANDLINE:
        return "--db"
    return DB_ENV if source is ParameterSource.ENVIRONMENT else None


AFTER_REPLAY = (
    "'readmit replay' without --db decides on a throwaway in-memory store: run 'readmit "
    "replay FILE --db sqlite:///trip.db' (it prints each decision's number) and pass the "
    "same --db here"
)
"""What a command reading a replay's decisions says when no store was named."""


def open_existing_store(
    url: str,
    given: str | None = "--db or READMIT_DB",
    unset: str = AFTER_REPLAY,
    *,
    migrate: bool = True,
) -> SqlStore:
    """Open a store that must already exist, so a mistyped path is not a new empty database.

    ``given`` names where ``url`` came from (an option, a variable, `db_given`); ``None``
    means neither was set and ``url`` is the default, and ``unset`` says what to do.
    ``migrate``: as `open_store` takes it.

    Raises:
        ConfigError: if ``url`` names an SQLite file that does not exist.
        StoreError: if the store cannot be opened, or ``url`` names a file that is not a
            SQLite database (an empty one would become a new database).
    """
    path = sqlite_file(url)
    if path is not None and not path.is_file():
        if given is None:
            raise ConfigError(
                f"no database at {str(path)!r}, the default store {url!r} (neither --db nor "
                f"READMIT_DB was set); {unset}"
            )
        raise ConfigError(
            f"no database at {shown(str(path))!r} (from {given} {shown(url)!r}); "
            "'readmit replay --db URL' or 'readmit workspace create' makes one"
        )
    if path is not None and not _sqlite_header(path):  # SQLite would make it a database
        raise StoreError(
            f"{shown(str(path))!r} (from {shown(url)!r}) is not a database: no SQLite file"
        )
    return open_store(url, migrate=migrate)


def _sqlite_header(path: Path) -> bool:
    """Whether the file at ``path`` starts as every SQLite database does."""
    try:
        with path.open("rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError as exc:
        raise ConfigError(f"cannot read {shown(str(path))!r}: {exc.strerror or exc}") from None


def workspace_agents(
    store: SqlStore, workspace: str, named: Iterable[str | None] = ()
) -> dict[str, Agent]:
    """The agents of ``workspace`` by id, which must exist, with each of ``named`` among them.

    ``None`` in ``named`` names no agent. An unknown name is said as one, rather than
    listed as nothing stored.

    Raises:
        NotFound: if the store has no such workspace, or it no such agent.
    """
    agents = store.agents(workspace)
    if not agents:
        raise NotFound(f"no workspace {workspace!r} in this store")
    for agent in named:
        if agent is not None and agent not in agents:
            raise NotFound(f"no agent {agent!r} in workspace {workspace!r}")
    return agents
