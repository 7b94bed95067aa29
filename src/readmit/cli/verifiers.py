"""``readmit verifiers``: list installed verifiers and check one against known pairs."""

import os
import time

import click

from readmit.admission.invalidation.embeddings import Embedder, ranked
from readmit.admission.invalidation.implicit import Verifier
from readmit.errors import VerifierUnavailable
from readmit.plugins import make_embedder, make_verifier, verifier_names
from readmit.verifiers import gguf
from readmit.verifiers.pairs import LabeledPair
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
    answered = _check_verifier(make_verifier(spec, os.environ))
    embedded = _check_embedder(make_embedder(embedder_spec, os.environ)) if embedder_spec else True
    if answered < len(PROBES) or not embedded:
        raise SystemExit(1)


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
            click.echo(f"  {_kind(probe):<20} abstained: {verdict.reason[:60]}")
            continue
        right += verdict.invalidates == probe.invalidates
        mark = "ok " if verdict.invalidates == probe.invalidates else "MISS"
        click.echo(
            f"  {mark} {_kind(probe):<20} invalidates={verdict.invalidates!s:<5} "
            f"confidence={verdict.confidence:.2f}  {verdict.reason[:60]}"
        )
    elapsed = time.perf_counter() - start
    tokens = int(getattr(verifier, "tokens_used", 0))
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
        click.echo(f"  {mark} {_kind(probe):<20} nearest: {nearest.text[:60]}")
    click.echo(
        f"{embedder.name}: {right}/{len(broken)} nearest right among {len(items)} items, "
        f"{1000 * elapsed:.1f} ms"
    )
    return True


def _kind(probe: LabeledPair) -> str:
    return probe.kind.replace("_", " ")
