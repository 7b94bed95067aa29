"""A judgment cache: the same (later event, earlier item) pair is never judged twice.

`CachedVerifier` wraps any verifier. Keys are the tagged digest of the pair's
texts and order and the verifier's identity, so a changed text or another
verifier never reuses a verdict. The store implements `JudgmentCache`, so
verdicts survive across returns and processes.
"""

from collections.abc import Mapping, Sequence
from typing import Protocol

from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import (
    Pair,
    Verdict,
    Verifier,
    judges_news,
    tokens_used,
)
from readmit.canonical import digest
from readmit.errors import VerifierUnavailable
from readmit.policy import Policy


class JudgmentCache(Protocol):
    """Persisted verdicts by key."""

    def judgments(self, keys: Sequence[str]) -> dict[str, Verdict]:
        """The stored verdicts of those keys that have one."""
        ...

    def remember_judgments(self, verifier: str, verdicts: Mapping[str, Verdict]) -> None:
        """Store verdicts (a key judged twice keeps its first verdict)."""
        ...


def pair_key(verifier: str, pair: Pair) -> str:
    """The cache key: the verifier's identity and everything it judges from."""
    later = pair.later
    return digest(
        {
            "verifier": verifier,
            "earlier": {"id": pair.earlier.id, "text": pair.earlier.text},
            **({"premises": list(pair.premises)} if pair.premises else {}),
            "later": {
                "event": later.event_id,
                "op": later.op,
                "text": later.text,
                "withdrawn": later.withdrawn_text,
                "replacement": later.replacement_text,
            },
        }
    )


def verifier_identity(verifier: Verifier) -> str:
    """The verifier's name and every cut-off that turns its model's P(yes) into a verdict.

    A model verifier's ``decide_at`` (a chain's second's too) changes what it answers for
    the same pair: verdicts made at one cut-off must not be read at another.
    """
    parts = (verifier, getattr(verifier, "second", None))
    cuts = [c for v in parts if isinstance(c := getattr(v, "decide_at", None), int | float)]
    return verifier.name + "".join(f"|decide_at={c!r}" for c in cuts)


def screening_key(
    verifier: Verifier, policy: Policy, embedder: Embedder | None, scan: DependencyScan | None
) -> str:
    """What a return's screening watermarks are kept under: all that decides what it judges.

    The verifier's identity (`verifier_identity`, behind any cache), the threshold that
    turns a verdict into an exclusion, the scanner's caps, and the embedder and dependency
    scan that add proposals. A screening under other settings (a judge ahead under its own
    policy, a model's other cut-off) may have kept an item this one would exclude, or never
    been shown an event this one would judge: it binds nothing here.
    """
    proposals = f"top_k={policy.scan_top_k}|per_item={policy.scan_per_item}"
    if embedder is not None:
        proposals += f"|embedder={embedder.name}|embed_top_k={policy.scan_embed_top_k}"
    if scan is not None:
        proposals += f"|scan={scan.name}"
    identity = verifier_identity(getattr(verifier, "inner", verifier))
    return f"{identity}|threshold={policy.threshold!r}|{proposals}"


def with_cache(verifier: Verifier, cache: JudgmentCache) -> Verifier:
    """``verifier`` behind the cache, unless it says judging is cheaper than caching."""
    if getattr(verifier, "cache_judgments", True):
        return CachedVerifier(verifier, cache)
    return verifier


class CachedVerifier:
    """A verifier that asks its inner verifier only about pairs it has not judged before."""

    def __init__(self, inner: Verifier, cache: JudgmentCache) -> None:
        self.inner = inner
        self.cache = cache
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def tokens_used(self) -> int:
        return tokens_used(self.inner)

    @property
    def judges_news(self) -> bool:
        return judges_news(self.inner)

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        keys = [pair_key(verifier_identity(self.inner), p) for p in pairs]
        known = self.cache.judgments(keys)
        todo = [(k, p) for k, p in zip(keys, pairs, strict=True) if k not in known]
        self.hits += len(pairs) - len(todo)
        self.misses += len(todo)
        if todo:
            fresh = list(self.inner.judge([p for _, p in todo]))
            if len(fresh) == len(todo) and all(isinstance(v, Verdict) for v in fresh):
                answered = {k: v for (k, _), v in zip(todo, fresh, strict=True)}
                # An abstention is asked again next time: only answers are remembered.
                self.cache.remember_judgments(
                    self.name, {k: v for k, v in answered.items() if not v.abstained}
                )
                known = {**known, **answered}
            else:  # no answer: with the pairs known it could match the batch's length
                raise VerifierUnavailable(
                    f"{self.name}: answered {len(fresh)} verdicts for {len(todo)} pairs, "
                    "or not verdicts"
                )
        return [known[k] for k in keys]
