"""``readmit judge-ahead``: judge away agents' returns now, for a store no server serves."""

import os
import secrets
import time
import uuid
from dataclasses import replace

import click

from readmit.admission.invalidation.cache import with_cache
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verifier
from readmit.admission.invalidation.judgment import Judgment
from readmit.ahead import LEASE, LEASE_MARGIN_S, WANTED, judge_ahead, returns_to
from readmit.cli.inputs import db_given, open_existing_store, workspace_agents
from readmit.cli.progress import progress_bar
from readmit.cli.replay import EMBEDDINGS_OPTION
from readmit.cli.serve import DB_OPTION, POLICY_OPTION, VERIFIER_OPTION, not_nan
from readmit.cli.words import counted
from readmit.errors import InvalidEvent, InvalidInput
from readmit.plugins import make_embedder, make_verifier
from readmit.policy import MAX_JUDGMENT_SECONDS, Policy
from readmit.service.settings import load_policy
from readmit.signing import HmacSha256Signer, Signer
from readmit.store import SqlStore
from readmit.wire import check_name, check_returning


@click.command("judge-ahead")
@DB_OPTION
@VERIFIER_OPTION
@EMBEDDINGS_OPTION
@POLICY_OPTION
@click.option("--workspace", "workspace_name", required=True, help="The workspace to judge.")
@click.option(
    "--agent",
    "agent_ids",
    multiple=True,
    help="An away agent to judge (repeatable). Default: every agent that departed and has "
    "not returned.",
)
@click.option(
    "--task",
    default=None,
    help="What the agents return to (with --purpose). Default: what each agent's departure "
    "named, else its latest return that issued a view.",
)
@click.option("--purpose", default=None, help="Their purpose (with --task).")
@click.option(
    "--seconds",
    default=None,
    type=click.FloatRange(min=0, min_open=True, max=MAX_JUDGMENT_SECONDS),
    callback=lambda _, __, value: not_nan(value),
    help="Seconds of verifier calls per agent (default: the policy's max_judgment_seconds; "
    "none in the built-in policy, which bounds the calls instead).",
)
def judge_ahead_command(
    db: str,
    verifier_spec: str,
    embeddings: str | None,
    policy_file: str | None,
    workspace_name: str,
    agent_ids: tuple[str, ...],
    task: str | None,
    purpose: str | None,
    seconds: float | None,
) -> None:
    """Judge now what away agents' returns will need, and keep it (nothing is decided).

    What `readmit serve --judge-ahead` does in the background, for a store that no server
    serves (a team in one process, a cron job): each agent's return is screened as if it
    returned now, and only the judgment is kept, so its return judges only what comes after.
    """
    given = check_returning(task, purpose, ("--task", "--purpose"))
    check_name(workspace_name, "--workspace")
    policy = load_policy(policy_file)
    if seconds is not None:
        policy = replace(policy, max_judgment_seconds=seconds)
    made = make_verifier(verifier_spec, os.environ)
    embedder = make_embedder(embeddings) if embeddings else None
    signer = HmacSha256Signer(secrets.token_bytes(32))  # signs views no one sees
    store = open_existing_store(db, db_given())
    verifier = with_cache(made, store)  # as a server's: a pair judged once, by any process
    holder, lease_s = uuid.uuid4().hex, (seconds or NO_BUDGET_LEASE_S) + LEASE_MARGIN_S
    try:
        for agent in _away(store, workspace_name, agent_ids):
            known = given or returns_to(store, workspace_name, agent)
            if known is None:
                unknown = (
                    f"{agent}: its departure did not say what it returns to and no return of "
                    "it issued a view (give --task and --purpose)"
                )
                if agent_ids:  # named, so expected to be judged: a cron job must notice
                    raise InvalidInput(unknown)
                click.echo(unknown.replace(": ", ": skipped, ", 1), err=True)
                continue
            _lease(store, workspace_name, holder, lease_s)
            try:
                passing = (store, workspace_name, agent, known, policy, verifier, signer, embedder)
                while (j := _pass(*passing)) is None:  # it gave way to a server's return
                    _lease(store, workspace_name, holder, lease_s)
            except InvalidEvent as exc:  # departed at a time after now (a client's clock)
                click.echo(f"{agent}: skipped, {exc.problem} as of now", err=True)
                continue
            finally:
                store.lease(workspace_name, LEASE, holder, 0)
            click.echo(
                f"{agent}: {counted(j.calls, 'call')}, {counted(j.pairs, 'pair')}, "
                f"{counted(j.tokens, 'token')}, {len(j.confirmed)} invalidated, "
                f"{len(j.screened)} screened, {j.unscreened} left unscreened, {j.seconds:.1f} s"
            )
    finally:
        store.close()


class _Asked(Exception):
    """A return of a server over the store asked for the workspace (`readmit.ahead.WANTED`)."""


def _pass(
    store: SqlStore,
    workspace: str,
    agent: str,
    known: tuple[str, str],
    policy: Policy,
    verifier: Verifier,
    signer: Signer,
    embedder: Embedder | None,
) -> Judgment | None:
    """One pass for ``agent``; ``None`` if it gave way to a server's return, once that ended.

    The pass stops at its next stage or verifier call, as a server's judge does; the
    verdicts of the calls it made stay in the store's cache for the next pass.
    """

    def give_way() -> None:
        if store.leased(workspace, WANTED):
            raise _Asked

    def progress(done: int, total: int) -> None:
        shown(done, total)
        give_way()

    try:
        with progress_bar() as shown:
            return judge_ahead(
                store,
                workspace,
                agent,
                task=known[0],
                purpose=known[1],
                policy=policy,
                verifier=verifier,
                signer=signer,
                embedder=embedder,
                on_progress=progress,
                between=give_way,
            )
    except _Asked:
        click.echo(f"{agent}: a return is being decided in {workspace!r}: waiting for it", err=True)
        while store.leased(workspace, WANTED):
            time.sleep(LEASE_POLL_S)
        return None


NO_BUDGET_LEASE_S = 600.0
"""How long a pass with no time budget holds the workspace's lease (past it, a server may
judge the same pairs: work done twice, never a wrong verdict)."""
LEASE_POLL_S = 1.0


def _lease(store: SqlStore, workspace: str, holder: str, seconds: float) -> None:
    """Wait until this process holds ``workspace``'s judge-ahead lease (a server may)."""
    if store.lease(workspace, LEASE, holder, seconds):
        return
    click.echo(f"another process is judging {workspace!r} ahead: waiting for it", err=True)
    while not store.lease(workspace, LEASE, holder, seconds):
        time.sleep(LEASE_POLL_S)


def _away(store: SqlStore, workspace: str, named: tuple[str, ...]) -> list[str]:
    """The agents to judge: ``named`` (each once), or every agent away.

    Raises:
        NotFound: if there is no such workspace, or a named agent it lacks.
        InvalidInput: for a named agent that is not away.
    """
    agents = workspace_agents(store, workspace, named)
    away = store.away(workspace)
    for agent in dict.fromkeys(named):
        if agent not in away:
            raise InvalidInput(f"agent {agent!r} of {workspace!r} is not away")
    if not away:
        click.echo(f"no agent of {workspace!r} is away: nothing to judge", err=True)
    elif not named and (present := sorted(agents.keys() - set(away))):
        click.echo(f"not away, so not judged: {', '.join(present)}", err=True)
    return list(dict.fromkeys(named)) or away
