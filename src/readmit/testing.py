"""Test doubles that are real implementations of readmit's protocols.

Use them in your own tests of code built on readmit: mypy checks them against
the protocols, so they cannot drift from the real interfaces.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.errors import VerifierUnavailable


@dataclass
class FunctionVerifier:
    """A verifier whose verdicts come from a plain function of one pair."""

    fn: Callable[[Pair], Verdict]
    name: str = "function"
    calls: list[list[Pair]] = field(default_factory=list)
    """Every batch it was asked to judge, in order."""

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.calls.append(list(pairs))
        return [self.fn(pair) for pair in pairs]


@dataclass
class SlowVerifier:
    """A verifier that takes at least ``seconds`` a call and finds nothing.

    As a model on a CPU does: for tests of ``max_judgment_seconds``.
    """

    seconds: float
    name: str = "slow"
    calls: int = 0

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.calls += 1
        time.sleep(self.seconds)
        return [Verdict(invalidates=False, confidence=1.0) for _ in pairs]


@dataclass
class UnavailableVerifier:
    """A verifier that is always down: every call raises `VerifierUnavailable`."""

    name: str = "unavailable"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        raise VerifierUnavailable("verifier is down (test double)")


@dataclass
class ShortVerifier:
    """A verifier that answers one verdict too few: a malformed answer."""

    name: str = "short"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [Verdict(invalidates=False, confidence=1.0)] * (len(pairs) - 1)


@dataclass
class FunctionEmbedder:
    """An embedder whose vectors come from a plain function of one text."""

    fn: Callable[[str], list[float]]
    name: str = "function-embedder"
    calls: list[list[str]] = field(default_factory=list)
    """Every batch of texts it was asked to embed, in order."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.fn(text) for text in texts]


@dataclass
class UnavailableEmbedder:
    """An embedder that is always down: every call raises `VerifierUnavailable`."""

    name: str = "unavailable-embedder"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise VerifierUnavailable("embedder is down (test double)")
