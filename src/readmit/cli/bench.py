"""``readmit bench``: run the evaluation suites and write results, a table and plots."""

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from difflib import get_close_matches
from functools import partial
from pathlib import Path
from typing import Any

import click

from readmit.bench.backends import BACKENDS
from readmit.bench.episode import Episode, Planned
from readmit.bench.plots import COST_FILE, PLANE_FILE
from readmit.cli.bench_options import (
    backend_only,
    given_once,
    not_nan,
    out_folder,
    team_sizes,
    writable,
)
from readmit.cli.progress import steps_bar
from readmit.clock import format_time, now
from readmit.errors import ConfigError, InvalidInput, install_hint

SUITES = ("drift", "returns", "stale-synth", "stale", "manbench", "memora")
WRITES = ("results.json", "results.md")  # into --out, by every run (the methods' adds plots)
Sources = dict[str, Path]  # episode id → the data file (Memora: folder) it was made of
NEEDS_PATH = ("stale", "manbench", "memora")
"""Suites read from benchmark data: ``--suite NAME:PATH``."""


@dataclass
class _Read:
    """What the suites' data held besides episodes: the rows not run, and each episode's file."""

    skipped: list[str] = field(default_factory=list)
    """Malformed rows, each named with its suite and file."""
    left_out: list[str] = field(default_factory=list)
    """Well-formed rows of a kind the suite does not run (STALE records not of Type I)."""
    sources: Sources = field(default_factory=dict)


def _require_bench_extra(llm: bool) -> None:
    try:
        import matplotlib  # noqa: F401 - the plots

        if llm:
            import httpx  # noqa: F401 - the LLM reader's client
    except ImportError as exc:
        needs = "readmit bench --llm" if exc.name == "httpx" else "readmit bench"
        raise ConfigError(f"{needs} needs {exc.name}: {install_hint('bench')}") from None


def _check_suite(suite: str) -> tuple[str, str]:
    """What tells the suite from another (its name, its data's absolute path), if it is one.

    An unknown suite is refused with the name meant, and one of data given no path.

    Raises:
        ConfigError: naming what is wrong.
    """
    name, _, path = suite.partition(":")
    if name not in SUITES:
        close = get_close_matches(name, SUITES, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(f"unknown suite {name!r} ({hint}known: {', '.join(SUITES)})")
    if name in NEEDS_PATH and not path:
        raise ConfigError(f"--suite {name}:PATH needs the path of the benchmark data")
    if name not in NEEDS_PATH and path:  # it was ignored: the run was of generated data
        given = "stale:FILE reads a STALE file" if name == "stale-synth" else "it reads no file"
        raise ConfigError(f"--suite {name} is generated, it takes no path ({given})")
    return name, os.path.abspath(path) if path else ""


def _episodes(
    suite: str, seeds: int, teams: tuple[int, ...], out: Path, read: _Read
) -> list[Planned]:
    """The suite's episodes, planned (data files are read, no episode of theirs is built).

    ``read`` gets the data rows the suite skipped or left out, and each episode's file. What
    the suite writes (the synthetic STALE file) goes into ``out``.
    """
    name, _, path = suite.partition(":")
    _check_suite(suite)
    loaded: Any
    match name:
        case "drift":
            from readmit.bench.generators import drift

            return [Planned.of(e) for t in teams for e in drift.episodes(seeds, team=t)]
        case "returns":
            from readmit.bench.generators import returns

            return [Planned.of(e) for e in returns.episodes(seeds, teams)]
        case "stale-synth" | "stale":
            from readmit.bench.generators import stale as synth
            from readmit.bench.loaders import stale

            source = Path(path) if path else synth.write(out / "stale-synthetic.json", seeds)
            loaded = stale.plan(source, teams)
        case "manbench":
            from readmit.bench.loaders import manbench

            loaded = manbench.plan(Path(path), teams)
            read.sources.update(loaded.files)
        case "memora":
            from readmit.bench.loaders import memora

            loaded = memora.plan(Path(path), teams)
        case _:
            raise ConfigError(f"unknown suite {name!r} (known: {', '.join(SUITES)})")
    read.skipped.extend(f"{name.removesuffix('-synth')} {row}" for row in loaded.skipped)
    read.left_out.extend(f"{name.removesuffix('-synth')} {row}" for row in loaded.left_out)
    for episode in loaded.episodes if path else ():
        read.sources.setdefault(episode.id, Path(path))
    return list(loaded.episodes)


@click.command()
@click.option(
    "--suite",
    "suites",
    multiple=True,
    metavar="NAME[:PATH]",
    help="drift, returns, stale-synth (offline); stale:FILE, manbench:DIR, "
    "memora:PERSONA_DIR (your data). Default: the three offline suites.",
)
@click.option("--method", "method_names", multiple=True, help="Methods to run (default: all).")
@click.option(
    "--seeds",
    default=50,
    show_default=True,
    type=click.IntRange(min=1),
    help="Seeds per generated condition.",
)
@click.option(
    "--team",
    "team_text",
    default="4",
    show_default=True,
    help="Active agents, comma-separated for a sweep, e.g. 4,8,16,32.",
)
@click.option(
    "--out",
    type=click.Path(),
    default="bench-results",
    show_default=True,
    callback=out_folder,
    help="Directory for results.json, results.md and plots (made when they are written).",
)
@click.option(
    "--llm",
    default=None,
    envvar="READMIT_BENCH_LLM",
    metavar="MODEL@URL",
    help="OpenAI-compatible endpoint for answer-level metrics.",
)
@click.option("--verifier", "verifier_spec", default="builtin", show_default=True)
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="At most N episodes per suite, condition and team size, drawn with a fixed seed "
    "(for runs with a slow model).",
)
@click.option("--sample-seed", default=0, show_default=True, help="Seed of --sample.")
@click.option(
    "--condition",
    "conditions",
    multiple=True,
    help="Run only episodes of these conditions (e.g. 50%, old_valid); default: all.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=None,
    callback=not_nan,
    help="τ for every episode: the verifier's calibrated threshold (default: each suite's).",
)
@click.option(
    "--backend",
    "backends",
    multiple=True,
    type=click.Choice(BACKENDS),
    help="Run TRACE through these memory backends side by side (the portability study) "
    "instead of the methods through readmit's own store; repeatable.",
)
def bench(
    suites: tuple[str, ...],
    method_names: tuple[str, ...],
    seeds: int,
    team_text: str,
    out: Path,
    llm: str | None,
    verifier_spec: str,
    sample: int | None,
    sample_seed: int,
    conditions: tuple[str, ...],
    threshold: float | None,
    backends: tuple[str, ...],
) -> None:
    """Run return episodes through every method and report the paper's metrics."""
    _require_bench_extra(llm is not None)
    from readmit.bench.llm import ChatModel, judge_episode
    from readmit.bench.methods import methods
    from readmit.bench.report import write
    from readmit.bench.runner import offline_reader, run, sample_each, scoring_notes
    from readmit.plugins import make_verifier

    teams = team_sizes(team_text)
    given_once("--suite", suites, [_check_suite(s) for s in suites])  # before anything is made
    given_once("--method", method_names)
    given_once("--backend", backends)
    if backends:
        backend_only(click.get_current_context())
    chosen = methods(method_names, make_verifier(verifier_spec, os.environ))
    model = ChatModel.parse(llm, os.environ) if llm else None
    with tempfile.TemporaryDirectory(prefix="readmit-bench-") as folder:
        aside = Path(folder)  # what a suite writes, until --out is made with the results
        planned, read = _chosen_episodes(
            suites or ("drift", "returns", "stale-synth"),
            (seeds, teams),
            (out, WRITES if backends else (*WRITES, PLANE_FILE, COST_FILE)),
            (conditions, aside),
        )
        planned = sample_each(planned, sample, sample_seed) if sample else planned
        episodes = [p.build() for p in planned]  # only those that run are built
        if backends:
            chose = (suites, seeds, teams, sample, read)
            _portability(episodes, backends, verifier_spec, (out, aside), chose)
            return
        unbuilt: list[str] = []
        with steps_bar(len(episodes), "episodes") as advance:
            rows = run(
                episodes,
                chosen,
                reader=model.reader if model else offline_reader,
                on_episode=lambda _: advance(1),
                judge=partial(judge_episode, model) if model else None,
                threshold=threshold,
                on_unbuilt=partial(_unbuilt, unbuilt, read.sources),
            )
        for warning in _skipped_notes(unbuilt, UNBUILT):
            click.echo(f"warning: {warning}", err=True)
        if not rows:  # every episode was refused (the plots would have no point to draw)
            raise InvalidInput(f"no episode could be recorded; the first: {unbuilt[0]}")
        notes = scoring_notes(episodes, model is not None) + _read_notes(read, unbuilt)
        meta: dict[str, Any] = {
            "at": format_time(now()),
            "suites": list(suites),
            "seeds": seeds,
            "teams": list(teams),
            "methods": [m.name for m in chosen],
            "verifier": verifier_spec,
            "llm": llm,
            "skipped_rows": read.skipped + read.left_out + unbuilt,
            "sample": sample,
            "sample_seed": sample_seed,
            "conditions": list(conditions),
            "threshold": threshold,
        }
        _settle(out, aside)
        paths = write(rows, out, meta, notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    click.echo(paths["markdown"].read_text(encoding="utf-8"))
    click.echo(f"wrote {', '.join(str(p) for p in paths.values())}", err=True)


def _chosen_episodes(
    suites: tuple[str, ...],
    generated: tuple[int, tuple[int, ...]],
    out: tuple[Path, tuple[str, ...]],
    chosen: tuple[tuple[str, ...], Path],
) -> tuple[list[Planned], _Read]:
    """The episodes (planned), what the data held besides, and ``out`` checked: not made.

    ``generated``: seeds and team sizes; ``out``: the folder, the names the run writes there;
    ``chosen``: the conditions asked for, and the folder a suite writes into (the synthetic
    STALE file) until the results are written (`_settle`), so a refused run leaves no folder.

    Raises:
        ConfigError: for a condition no episode has (`of_conditions`), or no episode at all.
        InvalidInput: if ``out`` could not be made or written.
    """
    from readmit.bench.runner import of_conditions

    (seeds, teams), (folder, writes), (conditions, aside) = generated, out, chosen
    read = _Read()
    episodes = [e for s in suites for e in _episodes(s, seeds, teams, aside, read)]
    for warning in _skipped_notes(read.skipped):
        click.echo(f"warning: {warning}", err=True)
    for note in _skipped_notes(read.left_out, LEFT_OUT, "left out"):
        click.echo(f"note: {note}", err=True)
    episodes = of_conditions(episodes, conditions) if conditions else episodes
    if not episodes:
        raise ConfigError(f"no episodes to run in {', '.join(suites)}")
    writable(folder, (*writes, *(made.name for made in aside.iterdir())))
    return episodes, read


def _settle(folder: Path, aside: Path) -> None:
    """Make ``folder`` for the results, and move into it what the suites wrote ``aside``.

    Raises:
        InvalidInput: naming ``--out``, if it cannot be made or written.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for made in aside.iterdir():
            shutil.move(made, folder / made.name)
    except OSError as exc:
        raise InvalidInput(f"--out {folder}: {exc.strerror or exc}") from None


def _unbuilt(found: list[str], sources: Sources, episode: Episode, why: str) -> None:
    """Record an episode whose history could not be recorded, naming its data file."""
    source = f"{sources[episode.id]} " if episode.id in sources else ""
    found.append(f"{episode.suite} {source}episode {episode.id} (team {episode.team_size}): {why}")


def _portability(
    episodes: list[Episode],
    backends: tuple[str, ...],
    verifier_spec: str,
    out: tuple[Path, Path],
    chose: tuple[tuple[str, ...], int, tuple[int, ...], int | None, _Read],
) -> None:
    """TRACE through each backend on the same episodes: results.json and results.md.

    ``out``: the folder, and what the suites wrote aside for it (`_settle`). ``chose``: the
    suites, seeds, team sizes and sample asked for, and what the data held besides episodes
    (the rows skipped were warned of; its meta and results.md name them too). An episode
    whose history readmit's store refuses is skipped and named, as the methods' run does.
    """
    suites, seeds, teams, sample, read = chose
    from readmit.bench.backends import report, study
    from readmit.plugins import make_verifier

    verifier = make_verifier(verifier_spec, os.environ)
    unbuilt: list[str] = []
    with steps_bar(len(episodes), "episodes") as advance:
        played = study.run(
            episodes,
            backends,
            verifier,
            on_episode=lambda _: advance(1),
            on_unbuilt=partial(_unbuilt, unbuilt, read.sources),
        )
    for warning in _skipped_notes(unbuilt, UNBUILT):
        click.echo(f"warning: {warning}", err=True)
    if not played:
        raise InvalidInput(f"no episode could be recorded; the first: {unbuilt[0]}")
    meta: dict[str, Any] = {
        "at": format_time(now()),
        "backends": list(backends),
        "suites": list(suites),
        "seeds": seeds,
        "teams": list(teams),
        "sample": sample,
        "verifier": verifier_spec,
        "skipped_rows": read.skipped + read.left_out + unbuilt,
    }
    _settle(*out)
    paths = report.write(played, out[0], meta, _read_notes(read, unbuilt))
    if failed := report.failures(played):
        click.echo(f"warning: {failed}", err=True)
    click.echo(paths["markdown"].read_text(encoding="utf-8"))
    click.echo(f"wrote {', '.join(str(p) for p in paths.values())}", err=True)


ROWS, UNBUILT = "malformed data rows", "episodes whose history could not be recorded"
LEFT_OUT = "data rows of a kind the suite does not run"


def _read_notes(read: _Read, unbuilt: list[str]) -> list[str]:
    """The notes of what was skipped (malformed rows, refused episodes) and left out."""
    what = f"{ROWS} and {UNBUILT}" if unbuilt else ROWS
    return _skipped_notes(read.skipped + unbuilt, what) + _skipped_notes(
        read.left_out, LEFT_OUT, "left out"
    )


def _skipped_notes(skipped: list[str], what: str = ROWS, verb: str = "skipped") -> list[str]:
    """The note of what was skipped, naming the first five (none if nothing was)."""
    shown = "; ".join(skipped[:5]) + ("; ..." if len(skipped) > 5 else "")
    told = f"{verb} {len(skipped)} {what} (all are in results.json meta.skipped_rows): {shown}"
    return [told] if skipped else []
