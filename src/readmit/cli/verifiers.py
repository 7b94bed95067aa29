"""``readmit verifiers``: list installed verifiers and check one against known pairs."""

import os
import time
from collections import Counter
from pathlib import Path

import click

from readmit.admission.invalidation.embeddings import Embedder, ranked
from readmit.admission.invalidation.implicit import Verifier, tokens_used
from readmit.cli.progress import steps_bar
from readmit.cli.words import counted
from readmit.errors import VerifierUnavailable
from readmit.plugins import make_embedder, make_verifier, verifier_names
from readmit.verifiers import gguf
from readmit.verifiers.calibration import Calibration, calibrate, model_of, split_of
from readmit.verifiers.pairs import SPLITS, LabeledPair, load_pairs
from readmit.verifiers.probes import PROBES


@click.group()
def verifiers() -> None:
    """Installed implicit-invalidation verifiers."""


@verifiers.command("list")
def list_verifiers() -> None:
    """List installed verifier names (entry points in group readmit.verifiers)."""
    for name in verifier_names():
        click.echo(name)


@verifiers.command()
@click.argument("spec", default="builtin")
@click.option(
    "--embeddings",
    "embedder_spec",
    default=None,
    help="Also probe this embedder: is each invalidated item the nearest to what broke it?",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Show a gguf model server's own log here (by default it goes to a file, "
    "whose path is printed).",
)
def check(spec: str, embedder_spec: str | None, verbose: bool) -> None:
    """Probe verifier SPEC with known pairs: accuracy, latency and tokens.

    SPEC is e.g. builtin, openai-compat:MODEL@URL (key in READMIT_VERIFIER_API_KEY) or
    gguf:PATH. An unavailable verifier is reported per pair, not hidden, and the command
    then exits with status 1.
    """
    if verbose:
        gguf.log_to(None)
    verifier = make_verifier(spec, os.environ)  # both made first: a bad name is said at once
    embedder = make_embedder(embedder_spec, os.environ) if embedder_spec else None
    answered = _check_verifier(verifier)
    embedded = _check_embedder(embedder) if embedder is not None else True
    if answered < len(PROBES) or not embedded:
        raise SystemExit(1)


@verifiers.command("calibrate")
@click.argument("spec")
@click.argument("pairs_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--split",
    type=click.Choice(SPLITS),
    default=None,
    help="Choose the cut-off on this split (default tune); the others are scored at it.",
)
def calibrate_command(spec: str, pairs_file: Path, split: str | None) -> None:
    """Choose model verifier SPEC's cut-off on the labeled pairs of PAIRS_FILE.

    Every pair is judged once, with the cut-off at 0, so each verdict carries the model's
    P(yes); the cut-off of maximum F1 on the split SPLIT (every pair, when the file has
    no splits) is printed with the settings that apply it, and every split is scored at
    it. PAIRS_FILE has the shape of bench/data/labeled_pairs.json (docs/implicit-invalidation.md,
    "Calibrating a model's cut-off"). A pair the verifier could not judge is named, and the command
    then exits with status 1 and no cut-off.
    """
    labeled = load_pairs(pairs_file)
    split_of(labeled, split)  # refused before a model server is started
    verifier = make_verifier(spec, os.environ)
    model_of(verifier)
    start = time.perf_counter()
    with steps_bar(len(labeled), "judging pairs") as advance:
        found = calibrate(verifier, labeled, split, advance)
    elapsed = time.perf_counter() - start
    for pair in found.unavailable:
        click.echo(f"  unavailable: {pair.id} ({found.why.get(pair.id, 'it abstained')})")
    if found.unavailable:
        click.echo(f"{verifier.name}: {len(found.unavailable)} of {len(labeled)} pairs unjudged")
        raise SystemExit(1)
    _report(found, {id(p) for p, said in zip(labeled, found.said, strict=True) if said})
    from readmit.verifiers.openai_compat import DECIDE_AT_ENV  # a model's client: not loaded before

    calls = int(getattr(verifier, "calls", len(labeled)))
    tokens = tokens_used(verifier)
    click.echo(
        f"{verifier.name}: {calls / len(labeled):.2f} calls, {tokens / len(labeled):.1f} "
        f"tokens, {1000 * elapsed / len(labeled):.1f} ms per pair"
    )
    click.echo(
        f"cut-off {found.threshold:.3f}: set {DECIDE_AT_ENV}={found.threshold:.3f} "
        f"and the policy's threshold (τ) to {found.threshold:.3f}"
    )


def _report(found: Calibration, said: set[int]) -> None:
    """Each split's scores at the cut-off, and what was said of each kind of pair."""
    for split, (pairs, scores) in found.splits.items():
        name = split or ("all pairs" if found.chosen_on is None else "pairs with no split")
        how = "chosen on" if split == found.chosen_on else "scored at the cut-off"
        recall = f"{scores.recall:.3f}" if any(p.invalidates for p in pairs) else "n/a"
        click.echo(
            f"{name} ({counted(len(pairs), 'pair')}, {how}): P {scores.precision:.3f} "
            f"R {recall} F1 {scores.f1:.3f}"
        )
        yes = Counter(p.kind for p in pairs if id(p) in said)
        total = Counter(p.kind for p in pairs)
        click.echo(
            "    said invalidates: " + ", ".join(f"{k} {yes[k]}/{total[k]}" for k in sorted(total))
        )


def _check_verifier(verifier: Verifier) -> int:
    right = answered = 0
    start = time.perf_counter()
    for probe in PROBES:
        try:
            [verdict] = verifier.judge([probe.pair])
        except VerifierUnavailable as exc:
            click.echo(f"  {_kind(probe):<20} unavailable: {exc}")
            continue
        answered += 1
        if verdict.abstained:
            click.echo(f"  {_kind(probe):<20} abstained: {_clipped(verdict.reason)}")
            continue
        right += verdict.invalidates == probe.invalidates
        mark = "ok " if verdict.invalidates == probe.invalidates else "MISS"
        click.echo(
            f"  {mark} {_kind(probe):<20} invalidates={verdict.invalidates!s:<5} "
            f"confidence={verdict.confidence:.2f}  {_clipped(verdict.reason)}"
        )
    elapsed = time.perf_counter() - start
    tokens = tokens_used(verifier)
    click.echo(
        f"{verifier.name}: {right}/{len(PROBES)} right, {answered} answered, "
        f"{1000 * elapsed / len(PROBES):.1f} ms per pair, {tokens} tokens"
    )
    return answered


def _check_embedder(embedder: Embedder) -> bool:
    items = list({p.pair.earlier.id: p.pair.earlier for p in PROBES}.values())
    broken = [p for p in PROBES if p.invalidates]
    start = time.perf_counter()
    try:
        orders = ranked([p.pair.later.text for p in broken], [i.text for i in items], embedder)
    except VerifierUnavailable as exc:
        click.echo(f"{embedder.name}: unavailable: {exc}")
        return False
    elapsed = time.perf_counter() - start
    right = 0
    for probe, order in zip(broken, orders, strict=True):
        nearest = items[order[0]]
        right += nearest.id == probe.pair.earlier.id
        mark = "ok " if nearest.id == probe.pair.earlier.id else "MISS"
        click.echo(f"  {mark} {_kind(probe):<20} nearest: {_clipped(nearest.text)}")
    click.echo(
        f"{embedder.name}: {right}/{len(broken)} nearest right among {len(items)} items, "
        f"{1000 * elapsed:.1f} ms"
    )
    return True


def _kind(probe: LabeledPair) -> str:
    return probe.kind.replace("_", " ")


def _clipped(text: str, width: int = 72) -> str:
    """``text`` cut to fit a line of the probe's table, at a word if one ends late enough.

    With "…" where cut; a text without spaces (a URL, JSON, Japanese) is cut mid-word.
    """
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= width // 2 else cut).rstrip() + "…"
