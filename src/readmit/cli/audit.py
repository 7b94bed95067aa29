"""``readmit audit`` and ``readmit explain``: read the audit log of stored decisions."""

from pathlib import Path

import click

from readmit.cli.inputs import open_existing_store
from readmit.cli.render import render_decision
from readmit.cli.replay import GLOSSARY_HINT
from readmit.cli.report_html import write_html
from readmit.config import DB_ENV
from readmit.report import upgrade_record
from readmit.store import DEFAULT_URL
from readmit.wire import check_name

_DB = click.option("--db", default=DEFAULT_URL, envvar=DB_ENV, show_default=True, help="Store URL.")


@click.command()
@_DB
@click.option("--workspace", default=None, help="Only this workspace.")
def audit(db: str, workspace: str | None) -> None:
    """List the stored return decisions."""
    if workspace is not None:
        check_name(workspace, "--workspace")
    store = open_existing_store(db)
    try:
        rows = store.decisions(workspace)
    finally:
        store.close()
    if not rows:
        click.echo("no decisions stored")
        return
    for row in rows:
        click.echo(
            f"{row.id:>5}  {row.at.isoformat()}  {row.workspace}  {row.agent}  "
            f"epoch {row.epoch}  {row.outcome}"
        )


@click.command()
@click.argument("decision_id", type=click.IntRange(1, 2**63 - 1))
@_DB
@click.option(
    "--workspace",
    default=None,
    help="The decision's workspace (ids are numbered per workspace; needed when several "
    "workspaces have a decision with this number).",
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the decision as one self-contained HTML page to this file.",
)
def explain(decision_id: int, db: str, workspace: str | None, html_file: Path | None) -> None:
    """Explain why each item of stored decision DECISION_ID was kept or excluded.

    Prints what is missing when no view was issued, each exclusion with its reason code
    (docs/reason-codes.md), and why each private memory was readmitted or withheld.
    """
    if workspace is not None:
        check_name(workspace, "--workspace")
    store = open_existing_store(db)
    try:
        record = upgrade_record(store.decision(decision_id, workspace))
    finally:
        store.close()
    view = record.get("view") or {}
    texts = {i["id"]: i["text"] for i in view.get("items", [])}
    for line in render_decision(record, texts):
        click.echo(line)
    click.echo(GLOSSARY_HINT)
    if html_file is not None:
        write_html(html_file, record, texts)
        click.echo(f"wrote {html_file}", err=True)
