"""Implicit invalidation: a grounded verifier judges the scanner's proposals (TRACE §3.2, C.2).

The verifier sees the two source texts and their order only. A confirmed
invalidation (``invalidates`` at or above the policy threshold τ) excludes the
older item; it does not admit the newer one, which still passes the gates.

Fail closed: when the verifier raises `VerifierUnavailable`, answers with the
wrong number of verdicts, or answers with a malformed verdict, every item it
was asked about in that call is withheld as ``verifier_unavailable``; so is an
item whose verdict abstains (the verifier says it cannot tell).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from readmit.errors import InvalidInput, VerifierUnavailable
from readmit.model import Item
from readmit.policy import Policy
from readmit.reasons import Exclusion, Reason, Stage


@dataclass(frozen=True, slots=True, kw_only=True)
class Later:
    """A later observation from Δ, as the verifier sees it."""

    event_id: str
    epoch: int
    op: str
    text: str
    """What the event says, in words (the observation)."""
    withdrawn_id: str | None = None
    """The item the event withdrew or replaced, if any."""
    withdrawn_text: str | None = None
    replacement_id: str | None = None
    """The item that replaced it, if any."""
    replacement_text: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Pair:
    """A proposed (later event, earlier item) dependency to be judged."""

    later: Later
    earlier: Item


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The verifier's judgment of one pair."""

    invalidates: bool
    confidence: float
    """Confidence in this verdict, in [0, 1]."""
    reason: str = ""
    terms: tuple[str, ...] = ()
    """The terms that linked the two texts, when the verifier reports them."""
    abstained: bool = False
    """The verifier cannot tell: the item is withheld as ``verifier_unavailable``, as for
    no answer, and ``reason`` says why (``invalidates`` is then False)."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.confidence <= 1.0:
            raise InvalidInput(f"verdict confidence {self.confidence!r} is outside [0, 1]")
        if self.abstained and self.invalidates:
            raise InvalidInput("a verdict cannot both abstain and invalidate")


class Verifier(Protocol):
    """Judges candidate pairs. Implementations live in ``readmit.verifiers``."""

    @property
    def name(self) -> str:
        """Identity of the verifier (used in explanations and judgment caches)."""
        ...

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        """Return one verdict per pair, in order.

        Raises:
            VerifierUnavailable: if no trustworthy answer can be given.
        """
        ...


Progress = Callable[[int, int], None]
"""Called with (pairs judged so far, pairs proposed) after every verifier call."""


def resolve_implicit(
    pool: Sequence[Item],
    pairs: Sequence[Pair],
    verifier: Verifier,
    policy: Policy,
    on_progress: Progress | None = None,
    unscreened: Sequence[Exclusion] = (),
) -> tuple[list[Item], list[Exclusion]]:
    """Judge ``pairs`` in bounded batches; exclude the items whose premise a later event changed.

    ``unscreened`` are items the scanner could not screen (withheld unless a verdict
    confirms their invalidation, which is the more specific reason).
    """
    confirmed: dict[str, Exclusion] = {}
    unavailable: dict[str, Exclusion] = {}
    batches = _batches(pairs, policy.batch_size)
    done = 0
    for batch in batches:
        for pair, verdict in _judge(verifier, batch):
            _record(pair, verdict, policy.threshold, verifier.name, confirmed, unavailable)
        done += len(batch)
        if on_progress is not None:
            on_progress(done, len(pairs))
    excluded = {**{e.item: e for e in unscreened}, **unavailable, **confirmed}
    kept = [item for item in pool if item.id not in excluded]
    return kept, list(excluded.values())


def _batches(pairs: Sequence[Pair], size: int) -> list[list[Pair]]:
    """One target item and at most ``size`` later observations per call."""
    by_item: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_item.setdefault(pair.earlier.id, []).append(pair)
    return [group[i : i + size] for group in by_item.values() for i in range(0, len(group), size)]


def _judge(verifier: Verifier, batch: list[Pair]) -> list[tuple[Pair, Verdict | None]]:
    try:
        verdicts = list(verifier.judge(batch))
    except VerifierUnavailable:
        return [(pair, None) for pair in batch]
    if len(verdicts) != len(batch) or not all(isinstance(v, Verdict) for v in verdicts):
        # A short or malformed answer is no answer: never guess which pairs it covers.
        return [(pair, None) for pair in batch]
    return list(zip(batch, verdicts, strict=True))


def _record(
    pair: Pair,
    verdict: Verdict | None,
    threshold: float,
    verifier: str,
    confirmed: dict[str, Exclusion],
    unavailable: dict[str, Exclusion],
) -> None:
    item = pair.earlier.id
    if verdict is None or verdict.abstained:
        event = pair.later.event_id
        unavailable.setdefault(
            item,
            Exclusion(
                item=item,
                reason=Reason.VERIFIER_UNAVAILABLE,
                stage=Stage.IMPLICIT,
                evidence=(event,),
                detail=f"verifier {verifier} could not tell whether {event} invalidates it: "
                f"{verdict.reason}"
                if verdict
                else f"verifier {verifier} gave no answer about {event}",
            ),
        )
    elif verdict.invalidates and verdict.confidence >= threshold and item not in confirmed:
        terms = f" (linked by {', '.join(verdict.terms)})" if verdict.terms else ""
        confirmed[item] = Exclusion(
            item=item,
            reason=Reason.IMPLICITLY_INVALIDATED,
            stage=Stage.IMPLICIT,
            evidence=(pair.later.event_id,),
            confidence=verdict.confidence,
            detail=f"{verifier}: {verdict.reason}{terms}",
        )
