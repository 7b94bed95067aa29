"""``readmit replay FILE``: run a scenario on a fresh store and print the decisions."""

import json
import os
import shlex
from pathlib import Path
from typing import Any

import click

from readmit.admission.invalidation.cache import with_cache
from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verifier
from readmit.cli.history import for_page, history
from readmit.cli.inputs import read_json, sqlite_file, sqlite_path
from readmit.cli.progress import progress_bar
from readmit.cli.render import render_decision
from readmit.cli.report_html import write_html
from readmit.config import DB_ENV, EMBEDDINGS_ENV, signer_from_env
from readmit.decide import Decided
from readmit.errors import InvalidEvent, InvalidInput, ReadmitError
from readmit.events import Assert, OpenObligation, Supersede
from readmit.plugins import make_dependency_scan, make_embedder, make_verifier
from readmit.replay import replay
from readmit.scenario import Scenario, load_scenario, unknown_readers
from readmit.signing import Signer
from readmit.store import open_store


def item_texts(scenario: Scenario) -> dict[str, str]:
    """Item id → text, for readable tables."""
    texts = {}
    for step in scenario.steps:
        if isinstance(step, Assert | Supersede):
            texts[step.item.id] = step.item.text
        elif isinstance(step, OpenObligation):
            texts[step.obligation.id] = step.obligation.text
            texts[step.obligation.frontier_id] = step.obligation.frontier_text
    return texts


def run(
    scenario: Scenario,
    db: str,
    verifier_spec: str,
    *,
    as_json: bool,
    embeddings: str | None = None,
    dependency_scan: str | None = None,
    html_dir: Path | None = None,
    db_flag: bool = False,
    intro: str | None = None,
) -> list[dict[str, Any]]:
    """Replay ``scenario`` and print its decisions (as JSON or as tables).

    With ``html_dir``, also write one page per decision there (``decision-N.html``).
    On a store that outlives the command, each decision's number and the ``readmit
    explain`` command that shows it are printed too (with ``--db URL`` when ``db_flag``
    says the URL came from ``--db``, not from ``READMIT_DB``). ``intro`` is printed once the
    verifier is made (a misspelled one is refused before any story is told).
    """
    verifier = make_verifier(verifier_spec, os.environ)
    embedder = make_embedder(embeddings, os.environ) if embeddings else None
    scan = make_dependency_scan(dependency_scan, os.environ) if dependency_scan else None
    choice = signer_from_env(os.environ, allow_ephemeral=True)
    if html_dir is not None:  # before anything is stored: a bad folder leaves no replay behind
        _html_folder(html_dir)
    if intro is not None:
        click.echo(intro)
    for warning in unknown_readers(scenario):
        click.echo(f"warning: {warning}", err=True)
    if choice.ephemeral:
        click.echo(
            "note: READMIT_SIGNING_KEY is unset; views are signed with a throwaway key "
            "and cannot be verified later",
            err=True,
        )
    decided, explain = _stored(scenario, db, db_flag, verifier, choice.signer, embedder, scan)
    decisions = [d.record for d in decided]  # JSON at the edge
    pages = _pages(scenario, decisions)
    texts = item_texts(scenario)
    if as_json:
        click.echo(json.dumps({"decisions": decisions}, indent=2, ensure_ascii=False))
        for line in explain:
            click.echo(line, err=True)
    else:
        _print_pages(pages, texts, explain)
    if html_dir is not None:
        _write_pages(html_dir, pages, texts)
    return decisions


def _stored(
    scenario: Scenario,
    db: str,
    db_flag: bool,
    verifier: Verifier,
    signer: Signer,
    embedder: Embedder | None,
    scan: DependencyScan | None,
) -> tuple[list[Decided], list[str]]:
    """Replay ``scenario`` on the store at ``db``: its decisions, and how to explain each.

    A replay refused on a database this command made leaves no file behind. One that
    fails once it has begun storing (a decision the store could not record) says what it left.
    """
    made = sqlite_file(db)  # a ConfigError, not a crash, for a name too long to be a file's
    made = made if made is not None and not made.exists() else None
    store, done = open_store(db), False
    try:
        existed = bool(store.agents(scenario.workspace))
        with progress_bar() as on_progress:
            try:
                decided = replay(
                    scenario,
                    store,
                    verifier=with_cache(verifier, store),
                    signer=signer,
                    on_progress=on_progress,
                    embedder=embedder,
                    dependency_scan=scan,
                )
            except InvalidInput as exc:
                raise _in_existing(exc, scenario.workspace) if existed else exc from None
            except ReadmitError as exc:
                if made is None and not existed and store.agents(scenario.workspace):
                    exc.add_note(_PART_STORED.format(scenario.workspace))
                raise
        explain = _explain_commands(db, db_flag, scenario.workspace, decided)
        done = True
        return decided, explain
    finally:
        store.close()
        if not done and made is not None:  # this command made the file: a refusal leaves none
            for path in (made, *(made.with_name(made.name + s) for s in ("-wal", "-shm"))):
                path.unlink(missing_ok=True)


_PART_STORED = (
    "workspace {0!r} now holds the scenario's history up to that point: replay into a new "
    "workspace or database"
)


def _print_pages(pages: list[dict[str, Any]], texts: dict[str, str], explain: list[str]) -> None:
    """Each decision as text, with the command that shows it again (if stored)."""
    for n, record in enumerate(pages):
        for text in render_decision(record, texts):
            click.echo(text)
        if explain:
            click.echo(f"  {explain[n]}")
        click.echo()
    if pages:
        click.echo(GLOSSARY_HINT)


def _pages(scenario: Scenario, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record as the text and the page show it (`readmit.cli.history.for_page`)."""
    past = history(scenario.steps)
    return [for_page(r, past) for r in records]


def _in_existing(exc: InvalidInput, workspace: str) -> InvalidInput:
    """``exc`` with the likely cause: the scenario was replayed into this store before."""
    hint = (
        f"the store already has workspace {workspace!r} (replayed before?): replay into a "
        "new --db file, or give the scenario another workspace name"
    )
    if isinstance(exc, InvalidEvent):
        return InvalidEvent(exc.event_id, f"{exc.problem}; {hint}", fields=exc.fields)
    return InvalidInput(f"{exc}; {hint}")


def _explain_commands(db: str, db_flag: bool, workspace: str, decided: list[Decided]) -> list[str]:
    """For each decision, its number and the command that explains it ([] in memory).

    The command names the workspace: decision numbers are per workspace, and a command
    printed now must still work once another scenario is replayed into the same store.
    """
    if db.startswith("sqlite") and sqlite_path(db) is None:
        return []  # an in-memory store is gone when the command ends
    options = f" --db {shlex.quote(db)}" if db_flag else ""
    options += f" --workspace {shlex.quote(workspace)}"
    return [f"stored as decision {d.id}: readmit explain {d.id}{options}" for d in decided]


def _html_folder(html_dir: Path) -> None:
    try:
        html_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"--html: cannot create {html_dir}: {exc.strerror or exc}") from None


def _write_pages(html_dir: Path, decisions: list[dict[str, Any]], texts: dict[str, str]) -> None:
    _html_folder(html_dir)
    for n, record in enumerate(decisions, start=1):
        write_html(html_dir / f"decision-{n}.html", record, texts)
    click.echo(f"wrote {len(decisions)} page(s) to {html_dir}", err=True)


GLOSSARY_HINT = (
    "terms (coverage, obligation, frontier, epoch, stage): docs/concepts.md; "
    "every reason code: docs/reason-codes.md"
)


HTML_OPTION = click.option(
    "--html",
    "html_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Also write each decision as a self-contained HTML page to this folder "
    "(decision-1.html, ...).",
)


EMBEDDINGS_OPTION = click.option(
    "--embeddings",
    default=None,
    envvar=EMBEDDINGS_ENV,
    help="Embedder for the scanner's nearest-item proposals: wordllama[:DIM] (packaged, "
    "offline), openai-compat:MODEL@URL or gguf:PATH (default: none, lexical proposals only).",
)


@click.command("replay")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the decisions as JSON.")
@click.option(
    "--db",
    default=None,
    envvar=DB_ENV,
    show_envvar=True,
    help="Store URL (default: a fresh in-memory SQLite store).",
)
@click.option(
    "--verifier",
    "verifier_spec",
    default="builtin",
    show_default=True,
    help="Implicit-invalidation verifier, e.g. 'builtin'.",
)
@EMBEDDINGS_OPTION
@HTML_OPTION
@click.option(
    "--dependency-scan",
    default=None,
    help="A model that names later events the scanner missed, for the verifier to judge: "
    "openai-compat:MODEL@URL (default: none). Its calls count against the judgment budget.",
)
def replay_command(
    file: Path,
    as_json: bool,
    db: str | None,
    verifier_spec: str,
    embeddings: str | None,
    html_dir: Path | None,
    dependency_scan: str | None,
) -> None:
    """Replay a readmit.scenario/1 FILE and print one decision per return."""
    scenario = load_scenario(read_json(file))
    source = click.get_current_context().get_parameter_source("db")
    run(
        scenario,
        db or "sqlite://:memory:",
        verifier_spec,
        as_json=as_json,
        embeddings=embeddings,
        dependency_scan=dependency_scan,
        html_dir=html_dir,
        db_flag=source is click.core.ParameterSource.COMMANDLINE,
    )
