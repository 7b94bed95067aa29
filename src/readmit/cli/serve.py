"""``readmit serve``, ``readmit mcp``, ``readmit workspace`` and ``readmit keys``."""

import importlib.util
import math
import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from readmit.cli.inputs import sqlite_file
from readmit.cli.replay import EMBEDDINGS_OPTION
from readmit.config import DB_ENV
from readmit.errors import ConfigError, InvalidInput, install_hint
from readmit.model import Agent
from readmit.policy import MAX_JUDGMENT_SECONDS
from readmit.store import DEFAULT_URL, SqlStore, open_store
from readmit.urls import logged, shown
from readmit.wire import check_name

if TYPE_CHECKING:  # the service extra may be missing; the CLI says so
    from readmit.service.operations import Service

AGENT_KEY_ENV = "READMIT_AGENT_KEY"
DB_OPTION = click.option(
    "--db",
    default=DEFAULT_URL,
    envvar=DB_ENV,
    show_default=True,
    show_envvar=True,
    help="Store URL (sqlite:///PATH or postgresql://...).",
)


def _port_free(host: str, port: int) -> None:
    """Refuse a port in use before anything starts (uvicorn would exit 3, a rejected view's).

    Raises:
        ConfigError: naming the host and port.
    """
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def _existing(url: str) -> SqlStore:
    """Open the store ``url`` names, refusing a SQLite file that is not there.

    A mistyped path would be a new, empty store, whose server refuses every agent key.

    Raises:
        ConfigError: naming the file and the commands that make the store.
    """
    path = sqlite_file(url)
    if path is not None and not path.is_file():
        made = f"--db {shown(url)}" if " " not in url else f"--db '{shown(url)}'"
        raise ConfigError(
            f"no database at {shown(str(path))!r} (from {shown(url)!r}): a new, empty store "
            "would refuse every agent key. Make it first: 'readmit workspace create NAME --agent "
            f"ID:PRINCIPAL:ROLE {made}', then 'readmit keys create NAME ID {made}'"
        )
    return open_store(url)


VERIFIER_OPTION = click.option(
    "--verifier",
    "verifier_spec",
    default="builtin",
    show_default=True,
    help="Implicit-invalidation verifier.",
)


POLICY_OPTION = click.option(
    "--policy",
    "policy_file",
    default=None,
    metavar="FILE",
    help="The admission policy (JSON, or TOML if FILE ends in .toml): the operator's, "
    "never the returning agent's. Default: the built-in policy.",
)


_F = TypeVar("_F", bound=Callable[..., Any])


def _limit(flag: str, default: float, help: str) -> Callable[[_F], _F]:
    """A limit of ``serve`` and ``mcp``: a number of the default's type, shown in --help."""
    return click.option(flag, default=default, show_default=True, type=type(default), help=help)


_SKEW = _limit(
    "--clock-skew",
    300.0,
    "Seconds a client's `at` may lie ahead of the server's clock (and a return's behind).",
)
_TTL = _limit(
    "--max-view-ttl", 86400.0, "Longest validity, in seconds, the policy may give a Return View."
)
_LABELS = _limit(
    "--max-labels",
    64,
    "Members of any one set an event names: an obligation's labels, an item's supports, "
    "premises, citations, readers or purposes.",
)
_OPEN = _limit(
    "--max-open-obligations", 256, "Obligations one principal may hold open at once in a workspace."
)

_AHEAD = click.option(
    "--judge-ahead",
    "ahead_seconds",
    default=None,
    type=click.FloatRange(min=0, min_open=True, max=MAX_JUDGMENT_SECONDS),
    callback=lambda _, __, value: not_nan(value),
    metavar="SECONDS",
    help="Judge, in the background, what away agents' returns will need, once a workspace "
    "has been quiet for a second (a pass at most SECONDS of verifier time; it gives way to "
    "returns). Off by default.",
)


def not_nan(value: float | None) -> float | None:
    """A click callback: ``value``, unless it is nan (click's ranges let nan through)."""
    if value is not None and math.isnan(value):
        raise click.BadParameter("must be a number of seconds, not nan")
    return value


def _require_service_extra() -> None:
    missing = [m for m in ("fastapi", "uvicorn", "mcp") if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"the service needs {', '.join(missing)}: {install_hint('service')}")


@click.command()
@DB_OPTION
@VERIFIER_OPTION
@EMBEDDINGS_OPTION
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@POLICY_OPTION
@_SKEW
@_TTL
@click.option(
    "--max-body-bytes",
    default=8 * 1024 * 1024,
    show_default=True,
    type=int,
    help="Largest request body (refused before authentication).",
)
@click.option("--max-events", default=1000, show_default=True, type=int, help="Events per request.")
@click.option(
    "--max-text-chars",
    default=16384,
    show_default=True,
    type=int,
    help="Longest string in an event or memory.",
)
@click.option("--rate", default=50.0, show_default=True, type=float, help="Requests/s per agent.")
@click.option(
    "--burst", default=100, show_default=True, type=int, help="Requests per agent at once."
)
@click.option(
    "--event-rate",
    default=200.0,
    show_default=True,
    type=float,
    help="Events/s one agent may record, sustained (one --max-events batch at once).",
)
@click.option(
    "--byte-rate",
    default=262144.0,
    show_default=True,
    type=float,
    help="Request-body bytes/s one agent may send, sustained (one --max-body-bytes body at "
    "once); charged from Content-Length before the body is read.",
)
@click.option(
    "--refusal-pause",
    default=1.0,
    show_default=True,
    type=float,
    help="Longest a request refused by --byte-rate waits before its 429 (its Retry-After, at "
    "most this): a client resending refused bodies at once cannot keep the server draining "
    "them. 0: at once.",
)
@_LABELS
@_OPEN
@click.option(
    "--concurrent-returns",
    default=2,
    show_default=True,
    type=int,
    help="Returns one agent may run at the same time.",
)
@click.option(
    "--shared-limits",
    is_flag=True,
    help="Keep each agent's rates and running returns in the store, shared by every server "
    "process over it (else each keeps its own: N processes give an agent N times each).",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Processes that decide returns (each on its own core); the server process answers "
    "everything else and keeps the per-agent limits. 1: returns run in its threads.",
)
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a connection may take to send a request's headers (after it opens, or "
    "after the response before); then it is closed.",
)
@click.option(
    "--body-timeout",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a request's body may take to arrive after its headers (not counting "
    "time the server itself is not reading it); then the connection is closed.",
)
@click.option(
    "--max-connections",
    default=1024,
    show_default=True,
    type=click.IntRange(min=1),
    help="Connections open at once; one more is closed unread.",
)
@click.option(
    "--max-connections-per-client",
    default=64,
    show_default=True,
    type=click.IntRange(min=1),
    help="Connections open at once from one address; one more is closed unread.",
)
@_AHEAD
def serve(
    db: str,
    verifier_spec: str,
    embeddings: str | None,
    host: str,
    port: int,
    policy_file: str | None,
    workers: int,
    header_timeout: float,
    body_timeout: float,
    max_connections: int,
    max_connections_per_client: int,
    ahead_seconds: float | None,
    **limits: Any,
) -> None:
    """Run the HTTP service (OpenAPI at /docs and /openapi.json).

    Views are signed with READMIT_SIGNING_KEY, which must be set.
    """
    _require_service_extra()
    _port_free(host, port)
    import uvicorn

    from readmit.collector import tune_for_server
    from readmit.service.app import create_app
    from readmit.service.connections import guarded
    from readmit.service.operations import Service
    from readmit.service.settings import limits_from_flags, load_policy

    service = Service.from_env(
        db,
        verifier_spec,
        embeddings=embeddings,
        policy=load_policy(policy_file),
        limits=limits_from_flags(**limits),
        opener=_existing,
    )
    pool = None
    try:
        click.echo(f"serving the store at {logged(db)}", err=True)
        _start_judging_ahead(service, ahead_seconds)
        if workers > 1:
            from readmit.service.workers import ReturnPool, ServerConfig

            config = ServerConfig(db, verifier_spec, embeddings, policy_file, limits)
            pool = ReturnPool(config, workers, service.turns)
            pool.wait_ready()
        app = create_app(service, pool=pool)
        tune_for_server()  # after everything the server keeps is built
        guard = guarded(header_timeout, max_connections, max_connections_per_client, body_timeout)
        # Callers are told apart by the connection's own address, as the connection caps
        # do: an X-Forwarded-For from loopback let one client count as many (a review).
        uvicorn.run(app, host=host, port=port, log_level="info", http=guard, proxy_headers=False)
    finally:
        if pool is not None:
            pool.close()
        service.close()


@click.command("mcp")
@DB_OPTION
@VERIFIER_OPTION
@EMBEDDINGS_OPTION
@POLICY_OPTION
@_SKEW
@_TTL
@_LABELS
@_OPEN
@_AHEAD
def mcp_command(
    db: str,
    verifier_spec: str,
    embeddings: str | None,
    policy_file: str | None,
    ahead_seconds: float | None,
    **limits: Any,
) -> None:
    """Run an MCP server on stdio, acting as the agent whose key is in READMIT_AGENT_KEY."""
    _require_service_extra()
    from readmit.service.keys import require_key
    from readmit.service.mcp import create_mcp, serve_stdio
    from readmit.service.operations import Service
    from readmit.service.settings import limits_from_flags, load_policy

    service = Service.from_env(
        db,
        verifier_spec,
        embeddings=embeddings,
        policy=load_policy(policy_file),
        limits=limits_from_flags(**limits),
        opener=_existing,
    )
    try:
        key = require_key(os.environ, AGENT_KEY_ENV)
        caller = service.authenticate(key)
        _start_judging_ahead(service, ahead_seconds)
        serve_stdio(create_mcp(service, caller, key))
    finally:
        service.close()


@click.group()
def workspace() -> None:
    """Create workspaces and their agents."""


def _agent(spec: str) -> Agent:
    """An ``--agent ID:PRINCIPAL:ROLE``, each part a name (no control characters, not blank).

    Raises:
        InvalidInput: naming the part that is wrong.
    """
    parts = spec.split(":")
    if len(parts) != 3:
        raise InvalidInput(f"--agent {spec!r}: write ID:PRINCIPAL:ROLE")
    agent_id, principal, role = (
        check_name(value, f"--agent {what}")
        for value, what in zip(parts, ("ID", "PRINCIPAL", "ROLE"), strict=True)
    )
    return Agent(id=agent_id, principal=principal, role=role)


@workspace.command("create")
@click.argument("name")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    required=True,
    metavar="ID:PRINCIPAL:ROLE",
    help="An agent of the workspace (repeatable).",
)
@DB_OPTION
def workspace_create(name: str, agents: tuple[str, ...], db: str) -> None:
    """Create workspace NAME with its agents (or add agents to it)."""
    check_name(name, "NAME")
    team = [_agent(a) for a in agents]
    ids = [a.id for a in team]
    if twice := sorted({i for i in ids if ids.count(i) > 1}):
        raise InvalidInput(f"--agent names {', '.join(map(repr, twice))} more than once")
    sqlite_file(db)  # a path no file system takes: config_error, not store_error
    store = open_store(db)
    try:
        store.create_workspace(name, team)
    finally:
        store.close()
    click.echo(f"workspace {name}: {len(agents)} agent(s) added")


def _start_judging_ahead(service: "Service", seconds: float | None) -> None:
    """``--judge-ahead``: start the service's background judge, and say so on stderr."""
    if seconds is not None:
        service.judge_ahead(seconds)
        click.echo(f"judging ahead: at most {seconds:g} s of verifier calls a pass", err=True)
