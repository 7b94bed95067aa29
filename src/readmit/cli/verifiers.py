"""``readmit verifiers``: list installed verifiers and check one against known pairs."""

import os
import time

import click

from readmit.plugins import make_verifier, verifier_names
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
def check(spec: str) -> None:
    """Probe verifier SPEC with known pairs: accuracy, latency and tokens.

    SPEC is e.g. builtin, openai-compat:MODEL@URL (key in READMIT_VERIFIER_API_KEY) or
    gguf:PATH. An unavailable verifier is reported per pair, not hidden.
    """
    from readmit.errors import VerifierUnavailable

    verifier = make_verifier(spec, os.environ)
    right = answered = 0
    start = time.perf_counter()
    for probe in PROBES:
        try:
            [verdict] = verifier.judge([probe.pair])
        except VerifierUnavailable as exc:
            click.echo(f"  {probe.kind:<20} unavailable: {exc}")
            continue
        answered += 1
        right += verdict.invalidates == probe.invalidates
        mark = "ok " if verdict.invalidates == probe.invalidates else "MISS"
        click.echo(
            f"  {mark} {probe.kind:<20} invalidates={verdict.invalidates!s:<5} "
            f"confidence={verdict.confidence:.2f}  {verdict.reason[:60]}"
        )
    elapsed = time.perf_counter() - start
    tokens = int(getattr(verifier, "tokens_used", 0))
    click.echo(
        f"{verifier.name}: {right}/{len(PROBES)} right, {answered} answered, "
        f"{1000 * elapsed / len(PROBES):.1f} ms per pair, {tokens} tokens"
    )
