"""A judgment cache: the same (later event, earlier item) pair is never judged twice.

`CachedVerifier` wraps any verifier. Keys are the tagged digest of the pair's
texts and order and the verifier's identity, so a changed text or another
verifier never reuses a verdict. The store implements `JudgmentCache`, so
verdicts survive across returns and processes.
"""

from collections.abc import Mapping, Sequence
from typing import Protocol

from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier, judges_news
from readmit.canonical import digest


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
        return int(getattr(self.inner, "tokens_used", 0))

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
            else:  # a short or malformed answer is passed on for the stage to reject
                return fresh
        return [known[k] for k in keys]
