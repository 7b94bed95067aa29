"""``readmit audit`` and ``readmit explain``: read the audit log of stored decisions."""

import os
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import click

from readmit.cli.history import for_page, history
from readmit.cli.inputs import db_given, open_existing_store, workspace_agents
from readmit.cli.render import render_decision
from readmit.cli.replay import GLOSSARY_HINT
from readmit.cli.report_html import write_html
from readmit.cli.serve import DB_OPTION
from readmit.clock import format_time
from readmit.errors import InvalidInput, NotFound, StoreError
from readmit.report import upgrade_record
from readmit.store import SqlStore
from readmit.urls import shown
from readmit.wire import check_name


def _own(store: SqlStore, number: int, workspace: str | None, agent: str) -> tuple[int, str]:
    """The audit log's id and workspace of ``agent``'s decision ``number`` (from 1).

    Raises:
        InvalidInput: if ``agent`` has decisions in several workspaces and none was named.
        NotFound: if it has fewer than ``number``.
    """
    rows = store.decisions(workspace, agent)
    spaces = sorted({r.workspace for r in rows})
    if len(spaces) > 1:
        raise InvalidInput(
            f"agent {agent!r} has decisions in workspaces {', '.join(spaces)}: "
            "name one with --workspace"
        )
    if not 1 <= number <= len(rows):
        where = f" in workspace {workspace!r}" if workspace is not None else ""
        has = f"{len(rows)} decision(s){where}, not {number}" if rows else f"no decision{where}"
        raise NotFound(f"agent {agent!r} has {has} ({_meant(store, workspace, agent, rows)})")
    return rows[number - 1].id, rows[number - 1].workspace


def _meant(store: SqlStore, workspace: str | None, agent: str, rows: list[Any]) -> str:
    """Where to look next: the agent with decisions whose id is closest, if ``agent`` has none."""
    known = [] if rows else sorted({r.agent for r in store.decisions(workspace, None)})
    close = get_close_matches(agent, known, n=1)
    return f"did you mean {close[0]!r}? {_see_audit()}" if close else _see_audit()


def _see_audit() -> str:
    """Where to look: ``readmit audit``, over the same store where ``--db`` named it."""
    if db_given() != "--db":  # the default, or READMIT_DB, which audit reads too
        return "see 'readmit audit'"
    return f"see 'readmit audit --db {shown(click.get_current_context().params['db'])}'"


def _page_file(value: str | None) -> Path | None:
    """``--html``'s file, refusing a path that ends as a folder's (it was written as a file)."""
    if value is not None and value.endswith(("/", os.sep)):
        raise click.BadParameter(
            f"{value!r} names a folder: explain writes one page, so give its file "
            f"(e.g. {value}decision.html)",
            param_hint="'--html'",
        )
    return None if value is None else Path(value)


class DecisionId(click.types.IntParamType):
    """A decision's number: a whole number from 1, said plainly when it is not one."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if not text.isascii() or not text.isdigit() or not 1 <= int(text) < 2**63:
            self.fail(
                f"decision id must be a whole number from 1, not {value!r}",
                param,
                ctx,
            )
        return int(text)


@click.command()
@DB_OPTION
@click.option("--workspace", default=None, help="Only this workspace.")
def audit(db: str, workspace: str | None) -> None:
    """List the stored return decisions.

    Each: its number, time, workspace, agent and the agent's own number (``#N``, as its
    /v1/decisions and `explain --agent` count), epoch and outcome.
    """
    if workspace is not None:
        check_name(workspace, "--workspace")
    store = open_existing_store(db, db_given())
    try:
        if workspace is not None:
            workspace_agents(store, workspace)
        rows = store.decisions(workspace)
    finally:
        store.close()
    if not rows:
        click.echo("no decisions stored")
        return
    own: dict[tuple[str, str], int] = {}  # each agent's own count, as HTTP and MCP number
    for row in rows:
        n = own[row.workspace, row.agent] = own.get((row.workspace, row.agent), 0) + 1
        click.echo(
            f"{row.id:>5}  {format_time(row.at)}  {row.workspace}  {row.agent} #{n}  "
            f"epoch {row.epoch}  {row.outcome}"
        )


@click.command()
@click.argument("decision_id", type=DecisionId())
@DB_OPTION
@click.option(
    "--workspace",
    default=None,
    help="The decision's workspace (ids are numbered per workspace; needed when several "
    "workspaces have a decision with this number).",
)
@click.option(
    "--agent",
    default=None,
    help="Count DECISION_ID among this agent's decisions only (1, 2, 3…), as the HTTP "
    "API's /v1/decisions and the MCP audit tool number them.",
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False),
    default=None,
    callback=lambda _ctx, _param, value: _page_file(value),
    help="Also write the decision as one self-contained HTML page to this file.",
)
def explain(
    decision_id: int, db: str, workspace: str | None, agent: str | None, html_file: Path | None
) -> None:
    """Explain why each item of stored decision DECISION_ID was kept or excluded.

    Prints what is missing when no view was issued, each exclusion with its reason code
    (docs/reason-codes.md), and why each private memory was readmitted or withheld.
    """
    if workspace is not None:
        check_name(workspace, "--workspace")
    if agent is not None:
        check_name(agent, "--agent")
    store = open_existing_store(db, db_given())
    try:
        if workspace is not None:
            workspace_agents(store, workspace, [agent])
        if agent is not None:
            decision_id, workspace = _own(store, decision_id, workspace, agent)
        record = upgrade_record(_stored(store, decision_id, workspace))
        record = for_page(record, history(r.event for r in store.events(record["workspace"])))
    finally:
        store.close()
    view = record.get("view") or {}
    texts = {i["id"]: i["text"] for i in view.get("items", [])}
    if html_file is not None:  # first: a page that cannot be written leaves nothing printed
        write_html(html_file, record, texts)
    for line in render_decision(record, texts):
        click.echo(line)
    click.echo(GLOSSARY_HINT)
    if html_file is not None:
        click.echo(f"wrote {html_file}", err=True)


def _stored(store: SqlStore, decision_id: int, workspace: str | None) -> dict[str, Any]:
    """Decision ``decision_id`` of the store's audit log.

    Raises:
        NotFound: if no workspace (or not ``workspace``) has a decision with that number.
        InvalidInput: if several workspaces have one and ``workspace`` was not named.
    """
    try:
        return store.decision(decision_id, workspace)
    except InvalidInput as exc:  # several workspaces have one: say how to name it here
        raise InvalidInput(f"{exc} with --workspace") from None
    except StoreError:
        if any(r.id == decision_id for r in store.decisions(workspace)):
            raise
    where = f" in workspace {workspace!r}" if workspace is not None else ""
    raise NotFound(f"no decision {decision_id}{where} in the audit log ({_see_audit()})")
