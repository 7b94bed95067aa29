"""Benchmark: the LLM dependency scan's recall and cost against the scanner alone.

On the labeled pairs (one window per domain: its 15 earlier items and 75 later
observations, as in bench/verifiers.py), the scanner proposes observations for each
target; the dependency scan is then shown the ``--window`` observations it left out
(nearest first with the embedder, else newest first), ``--batch`` a call, and names
those that may change a premise. Recall is over the positive pairs (a withdrawn
reference or a premise change), for the scanner alone and with the scan, by kind and
by split; cost is the scan's calls, tokens and seconds per target, and the pairs it
adds for the verifier (what it named that is not a positive is extra verifier work,
never an exclusion by itself).

The model is any OpenAI-compatible endpoint, e.g. ``../shared/tools/bench-llm serve 8377``
(measurements only). ``--shown 4,8,16,32`` needs no model: for each window size
it counts the positives the scanner missed that the scan would be shown, ranked
nearest first (with ``--embeddings``) and newest first.

Usage:

    python bench/dependency_scan.py --scan MODEL@http://127.0.0.1:8377/v1 \\
        [--embeddings wordllama] [--window 8] [--batch 4] [--targets N]
    python bench/dependency_scan.py --shown 4,8,16,32 [--embeddings wordllama]
"""

import argparse
import logging
import os
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.scanner import Limits, Observations
from readmit.errors import VerifierUnavailable
from readmit.model import Item
from readmit.plugins import make_embedder
from readmit.verifiers.llm_scan import factory
from readmit.verifiers.pairs import SPLITS, LabeledPair, load_pairs

LABELED = Path(__file__).parent / "data" / "labeled_pairs.json"
"""The team's labeled pairs (evaluation material, not shipped)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scan", help="MODEL@BASE_URL of the scanning model")
    parser.add_argument("--shown", help="window sizes: what the scan is shown (no model)")
    parser.add_argument("--embeddings", default=None, help="embedder SPEC for the scanner")
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--targets", type=int, default=None, help="targets per domain (quick run)")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    embedder = make_embedder(args.embeddings, os.environ) if args.embeddings else None
    windows: dict[str, list[LabeledPair]] = defaultdict(list)
    for p in load_pairs(LABELED):
        windows[p.domain].append(p)
    if args.shown:
        _print_shown(windows, embedder, args)
    elif args.scan:
        _measure(windows, embedder, args)
    else:
        parser.error("give --scan MODEL@URL, or --shown SIZES")


def _print_shown(
    windows: dict[str, list[LabeledPair]], embedder: Embedder | None, args: argparse.Namespace
) -> None:
    for size in (int(n) for n in args.shown.split(",")):
        for ranking in (embedder, None) if embedder else (None,):
            shown, missed = _shown(windows, ranking, size, args.top_k)
            order = ranking.name if ranking else "newest first"
            print(f"window {size}, {order}: shown {shown} of {missed} missed positives")


def _measure(
    windows: dict[str, list[LabeledPair]], embedder: Embedder | None, args: argparse.Namespace
) -> None:
    scan = factory(args.scan, os.environ)
    scan.window, scan.batch = args.window, args.batch
    found: dict[tuple[str, str | None], list[tuple[bool, bool]]] = defaultdict(list)
    targets = named = failed = 0
    seconds = 0.0
    for window in windows.values():
        index, chosen = _window(window, embedder, args.targets)
        limits = Limits(top_k=args.top_k)
        for target in chosen:
            proposed = index.proposals(target, 0, limits)
            left = index.unproposed(target, 0, proposed, scan.window)
            flagged: set[str] = set()
            """The texts the scan named (it is shown each distinct text once)."""
            start = time.perf_counter()
            for offset in range(0, len(left), scan.batch):
                shown = left[offset:][: scan.batch]
                try:
                    flags = scan.scan(target.text, (), shown)
                except VerifierUnavailable:
                    failed += 1
                    continue
                flagged |= {x.text for x, f in zip(shown, flags, strict=True) if f}
            seconds += time.perf_counter() - start
            targets += 1
            named += len(flagged)
            # A positive counts as found when its text is proposed or named: the verifier
            # judges a text, whichever event brought it.
            texts = {x.text for x in proposed}
            for p in window:
                if p.invalidates and p.pair.earlier.id == target.id:
                    hit = p.pair.later.text in texts
                    scanned = hit or p.pair.later.text in flagged
                    for group in (("kind", p.kind), ("split", p.split), ("all", "all")):
                        found[group].append((hit, scanned))
    _report(found, targets, scan.calls, scan.tokens_used, seconds, named, failed, args, embedder)


def _shown(
    windows: dict[str, list[LabeledPair]], embedder: Embedder | None, size: int, top_k: int
) -> tuple[int, int]:
    """(missed positives the scan is shown, positives the scanner missed) at one window size."""
    shown = missed = 0
    for window in windows.values():
        index, targets = _window(window, embedder, None)
        for target in targets:
            proposed = index.proposals(target, 0, Limits(top_k=top_k))
            texts = {x.text for x in proposed}
            left = {x.text for x in index.unproposed(target, 0, proposed, size)}
            for p in window:
                if (
                    p.invalidates
                    and p.pair.earlier.id == target.id
                    and p.pair.later.text not in texts
                ):
                    missed += 1
                    shown += p.pair.later.text in left
    return shown, missed


def _window(
    window: Sequence[LabeledPair], embedder: Embedder | None, per_domain: int | None
) -> tuple[Observations, list[Item]]:
    laters = list({p.pair.later.event_id: p.pair.later for p in window}.values())
    earlier = list({p.pair.earlier.id: p.pair.earlier for p in window}.values())
    index = Observations(laters, embedder, earlier, embed_top_k=1)
    return index, earlier[:per_domain] if per_domain else earlier


def _report(
    found: dict[tuple[str, str | None], list[tuple[bool, bool]]],
    targets: int,
    calls: int,
    tokens: int,
    seconds: float,
    named: int,
    failed: int,
    args: argparse.Namespace,
    embedder: Embedder | None,
) -> None:
    ranking = embedder.name if embedder else "newest first"
    print(
        f"dependency scan: window {args.window}, batch {args.batch}, ranked by {ranking}; "
        f"{targets} targets"
    )
    print(
        f"  cost per target: {calls / targets:.2f} calls, {tokens / targets:.0f} tokens, "
        f"{seconds / targets:.2f} s; named {named / targets:.2f} observations for the "
        f"verifier; {failed} calls unusable"
    )
    print("  recall: scanner alone -> scanner + scan")
    order = [("all", "all"), *[("kind", k) for k in ("withdrawn_reference", "premise_change")]]
    order += [("split", s) for s in SPLITS]
    for key in order:
        hits = found.get(key, [])
        if hits:
            alone = sum(a for a, _ in hits) / len(hits)
            both = sum(b for _, b in hits) / len(hits)
            print(f"    {key[1]:<20} {alone:.3f} -> {both:.3f} ({len(hits)} positives)")


if __name__ == "__main__":
    main()
