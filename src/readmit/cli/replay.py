"""``readmit replay FILE``: run a scenario on a fresh store and print the decisions."""

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from click._termui_impl import ProgressBar

from readmit.admission.invalidation.cache import with_cache
from readmit.admission.invalidation.implicit import Progress
from readmit.cli.inputs import read_json
from readmit.cli.render import render_decision
from readmit.cli.report_html import write_html
from readmit.config import DB_ENV, EMBEDDINGS_ENV, signer_from_env
from readmit.errors import InvalidInput
from readmit.events import Assert, OpenObligation, Supersede
from readmit.plugins import make_dependency_scan, make_embedder, make_verifier
from readmit.replay import replay
from readmit.scenario import Scenario, load_scenario
from readmit.store import open_store


@contextmanager
def progress_bar() -> Iterator[Progress]:
    """A progress callback that draws a bar on a terminal's stderr while the verifier works."""
    stderr = sys.stderr
    bars: list[ProgressBar[int]] = []

    def update(done: int, total: int) -> None:
        if not stderr.isatty():
            return
        if not bars:
            bars.append(click.progressbar(length=total, label="verifying pairs", file=stderr))
        bars[0].update(done - bars[0].pos)

    try:
        yield update
    finally:
        for bar in bars:
            bar.render_finish()


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
) -> list[dict[str, Any]]:
    """Replay ``scenario`` and print its decisions (as JSON or as tables).

    With ``html_dir``, also write one page per decision there (``decision-N.html``).
    """
    verifier = make_verifier(verifier_spec, os.environ)
    embedder = make_embedder(embeddings, os.environ) if embeddings else None
    scan = make_dependency_scan(dependency_scan, os.environ) if dependency_scan else None
    choice = signer_from_env(os.environ, allow_ephemeral=True)
    if choice.ephemeral:
        click.echo(
            "note: READMIT_SIGNING_KEY is unset; views are signed with a throwaway key "
            "and cannot be verified later",
            err=True,
        )
    store = open_store(db)
    try:
        with progress_bar() as on_progress:
            decided = replay(
                scenario,
                store,
                verifier=with_cache(verifier, store),
                signer=choice.signer,
                on_progress=on_progress,
                embedder=embedder,
                dependency_scan=scan,
            )
    finally:
        store.close()
    decisions = [d.record for d in decided]  # JSON at the edge
    texts = item_texts(scenario)
    if as_json:
        click.echo(json.dumps({"decisions": decisions}, indent=2, ensure_ascii=False))
    else:
        for record in decisions:
            for line in render_decision(record, texts):
                click.echo(line)
            click.echo()
        if decisions:
            click.echo(GLOSSARY_HINT)
    if html_dir is not None:
        _write_pages(html_dir, decisions, texts)
    return decisions


def _write_pages(html_dir: Path, decisions: list[dict[str, Any]], texts: dict[str, str]) -> None:
    try:
        html_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"--html: cannot create {html_dir}: {exc.strerror or exc}") from None
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
    "--db", default=None, envvar=DB_ENV, help="Store URL (default: a fresh in-memory SQLite store)."
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
    run(
        scenario,
        db or "sqlite://:memory:",
        verifier_spec,
        as_json=as_json,
        embeddings=embeddings,
        dependency_scan=dependency_scan,
        html_dir=html_dir,
    )
