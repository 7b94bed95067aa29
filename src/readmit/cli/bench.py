"""``readmit bench``: run the evaluation suites and write results, a table and plots."""

import os
import random
import shutil
import tempfile
from difflib import get_close_matches
from functools import partial
from pathlib import Path
from typing import Any

import click

from readmit.bench.backends import BACKENDS
from readmit.bench.episode import Episode
from readmit.cli.progress import steps_bar
from readmit.clock import format_time, now
from readmit.errors import ConfigError, InvalidInput, install_hint

SUITES = ("drift", "returns", "stale-synth", "stale", "manbench", "memora")
NEEDS_PATH = ("stale", "manbench", "memora")
"""Suites read from benchmark data: ``--suite NAME:PATH``."""


def _require_bench_extra(llm: bool) -> None:
    try:
        import matplotlib  # noqa: F401 - the plots

        if llm:
            import httpx  # noqa: F401 - the LLM reader's client
    except ImportError as exc:
        needs = "readmit bench --llm" if exc.name == "httpx" else "readmit bench"
        raise ConfigError(f"{needs} needs {exc.name}: {install_hint('bench')}") from None


def _check_suite(suite: str) -> None:
    """Refuse an unknown suite (with the name meant), or one of data given no path.

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


def _episodes(
    suite: str, seeds: int, teams: tuple[int, ...], out: Path, skipped: list[str]
) -> list[Episode]:
    """The suite's episodes; data rows it had to skip are appended to ``skipped``.

    What the suite writes (the synthetic STALE file) goes into ``out``.
    """
    name, _, path = suite.partition(":")
    _check_suite(suite)
    match name:
        case "drift":
            from readmit.bench.generators import drift

            return [e for t in teams for e in drift.episodes(seeds, team=t)]
        case "returns":
            from readmit.bench.generators import returns

            return returns.episodes(seeds, teams)
        case "stale-synth" | "stale":
            from readmit.bench.generators import stale as synth
            from readmit.bench.loaders import stale

            source = Path(path) if path else synth.write(out / "stale-synthetic.json", seeds)
            records = stale.load(source, teams)
            skipped += [f"stale {row}" for row in records.skipped]
            return records.episodes
        case "manbench":
            from readmit.bench.loaders import manbench

            loaded = manbench.load(Path(path), teams)
            skipped += [f"manbench {row}" for row in loaded.skipped]
            return loaded.episodes
        case "memora":
            from readmit.bench.loaders import memora

            persona = memora.load(Path(path), teams)
            skipped += [f"memora {row}" for row in persona.skipped]
            return persona.episodes
    raise ConfigError(f"unknown suite {name!r} (known: {', '.join(SUITES)})")


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
    type=click.Path(path_type=Path),
    default=Path("bench-results"),
    show_default=True,
    help="Directory for results.json, results.md and plots.",
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
    from readmit.bench.runner import offline_reader, run
    from readmit.plugins import make_verifier

    teams = _teams(team_text)
    for suite in suites:  # before anything is made: a wrong suite leaves no folder
        _check_suite(suite)
    chosen = methods(method_names, make_verifier(verifier_spec, os.environ))
    model = ChatModel.parse(llm, os.environ) if llm else None
    episodes, skipped = _chosen_episodes(
        suites or ("drift", "returns", "stale-synth"),
        seeds,
        teams,
        out,
        conditions,
        sample,
        sample_seed,
    )
    if backends:
        chose = (suites, seeds, teams, sample, skipped)
        _portability(episodes, backends, verifier_spec, out, chose)
        return
    with steps_bar(len(episodes), "episodes") as advance:
        rows = run(
            episodes,
            chosen,
            reader=model.reader if model else offline_reader,
            on_episode=lambda _: advance(1),
            judge=partial(judge_episode, model) if model else None,
            threshold=threshold,
        )
    notes = _notes(episodes, model is not None) + ([_skipped_note(skipped)] if skipped else [])
    meta: dict[str, Any] = {
        "at": format_time(now()),
        "suites": list(suites),
        "seeds": seeds,
        "teams": list(teams),
        "methods": [m.name for m in chosen],
        "verifier": verifier_spec,
        "llm": llm,
        "skipped_rows": skipped,
        "sample": sample,
        "sample_seed": sample_seed,
        "conditions": list(conditions),
        "threshold": threshold,
    }
    paths = write(rows, out, meta, notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    click.echo(paths["markdown"].read_text(encoding="utf-8"))
    click.echo(f"wrote {', '.join(str(p) for p in paths.values())}", err=True)


def _chosen_episodes(
    suites: tuple[str, ...],
    seeds: int,
    teams: tuple[int, ...],
    out: Path,
    conditions: tuple[str, ...],
    sample: int | None,
    sample_seed: int,
) -> tuple[list[Episode], list[str]]:
    """The episodes to run, and the data rows skipped; ``out`` made once they are known.

    What a suite writes (the synthetic STALE file) is written aside first, so a refused
    condition or unreadable data leaves no folder behind.

    Raises:
        ConfigError: for a condition no episode has, or when there is no episode at all.
        InvalidInput: if ``out`` cannot be made.
    """
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="readmit-bench-") as aside:
        episodes = [e for s in suites for e in _episodes(s, seeds, teams, Path(aside), skipped)]
        if skipped:
            click.echo(f"warning: {_skipped_note(skipped)}", err=True)
        if conditions:
            known = {e.condition for e in episodes}
            unknown = sorted(set(conditions) - known)
            if unknown:
                listed = ", ".join(sorted(known))
                raise ConfigError(f"unknown condition(s) {unknown} (known: {listed})")
            episodes = [e for e in episodes if e.condition in conditions]
        if not episodes:
            raise ConfigError(f"no episodes to run in {', '.join(suites)}")
        try:
            out.mkdir(parents=True, exist_ok=True)
            for made in Path(aside).iterdir():
                shutil.move(made, out / made.name)
        except OSError as exc:
            raise InvalidInput(f"--out {out}: {exc.strerror or exc}") from None
    if sample is not None:
        episodes = _sample(episodes, sample, sample_seed)
    return episodes, skipped


def _portability(
    episodes: list[Episode],
    backends: tuple[str, ...],
    verifier_spec: str,
    out: Path,
    chose: tuple[tuple[str, ...], int, tuple[int, ...], int | None, list[str]],
) -> None:
    """TRACE through each backend on the same episodes: results.json and results.md.

    ``chose``: the suites, seeds, team sizes and sample asked for, and the data rows skipped
    (they were warned of, and left out of its meta).
    """
    suites, seeds, teams, sample, skipped = chose
    from readmit.bench.backends import report, study
    from readmit.plugins import make_verifier

    verifier = make_verifier(verifier_spec, os.environ)
    chosen = tuple(dict.fromkeys(backends))
    with steps_bar(len(episodes), "episodes") as advance:
        played = study.run(episodes, chosen, verifier, on_episode=lambda _: advance(1))
    meta: dict[str, Any] = {
        "at": format_time(now()),
        "backends": list(chosen),
        "suites": list(suites),
        "seeds": seeds,
        "teams": list(teams),
        "sample": sample,
        "verifier": verifier_spec,
        "skipped_rows": skipped,
    }
    paths = report.write(played, out, meta)
    failed = [p for p in played if p.error is not None]
    if failed:
        click.echo(
            f"warning: {len(failed)} runs failed (scored 0), first: {failed[0].backend} "
            f"{failed[0].episode}: {failed[0].error}",
            err=True,
        )
    click.echo(paths["markdown"].read_text(encoding="utf-8"))
    click.echo(f"wrote {', '.join(str(p) for p in paths.values())}", err=True)


def _teams(text: str) -> tuple[int, ...]:
    """The team sizes of ``--team`` (positive integers, comma-separated)."""
    parts = [t.strip() for t in text.split(",") if t.strip()]
    if not parts or not all(p.isdecimal() and 0 < int(p) <= 10_000 for p in parts):
        raise InvalidInput(f"--team {text!r}: write team sizes from 1 to 10000, e.g. 4,8,16")
    return tuple(int(p) for p in parts)


def _sample(episodes: list[Episode], n: int, seed: int) -> list[Episode]:
    """At most ``n`` episodes of each (suite, condition, team size), in their original order."""
    groups: dict[tuple[str, str, int], list[int]] = {}
    for k, e in enumerate(episodes):
        groups.setdefault((e.suite, e.condition, e.team_size), []).append(k)
    keep: set[int] = set()
    for key, members in sorted(groups.items()):
        rng = random.Random(f"sample/{seed}/{key}")  # noqa: S311 (a reproducible draw)
        keep.update(rng.sample(members, min(n, len(members))))
    return [e for k, e in enumerate(episodes) if k in keep]


def _skipped_note(skipped: list[str]) -> str:
    shown = "; ".join(skipped[:5]) + ("; ..." if len(skipped) > 5 else "")
    return (
        f"skipped {len(skipped)} malformed data rows (all are in results.json "
        f"meta.skipped_rows): {shown}"
    )


def _notes(episodes: list[Episode], with_llm: bool) -> list[str]:
    suites = sorted({e.suite for e in episodes})
    notes = []
    if not with_llm:
        free = sorted({e.suite for e in episodes if any(not p.answer for p in e.probes)})
        if free:
            notes.append(
                f"Overall not computed for {', '.join(free)}: answering and judging "
                "need an LLM (--llm MODEL@URL); VIA/IIR there are admission-level."
            )
        scored = [s for s in suites if s not in free]
        if scored:
            notes.append(
                f"Overall for {', '.join(scored)} comes from the offline reader (the "
                "most recent admitted value for each probe, else a seeded guess)."
            )
    return notes
