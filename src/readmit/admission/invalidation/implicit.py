"""Implicit invalidation: a grounded verifier judges the scanner's proposals (TRACE §3.2, C.2).

The verifier sees the two source texts and their order only. A confirmed
invalidation (``invalidates`` at or above the policy threshold τ) excludes the
older item; it does not admit the newer one, which still passes the gates.

Fail closed: when the verifier raises (`VerifierUnavailable`, or anything else: a
user's verifier whose server went away), answers with the wrong number of verdicts or
with no sequence, or answers with a malformed verdict, every item it
was asked about in that call is withheld as ``verifier_unavailable``; so is an
item whose verdict abstains (the verifier says it cannot tell). The stage that
drives the verifier, in budget and selection order, is
`readmit.admission.invalidation.screening`.
"""

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from readmit.admission.memo import keep
from readmit.canonical import UNSTORABLE
from readmit.errors import InvalidInput, VerifierUnavailable
from readmit.model import Item
from readmit.reasons import Exclusion, Reason, Stage

log = logging.getLogger("readmit.verifier")


Readers = tuple[frozenset[str], frozenset[str]]
"""Who may read an item: its principals and its roles (``*`` for everyone)."""


class Later(NamedTuple):
    """A later observation from Δ, as the verifier sees it.

    A named tuple rather than a frozen dataclass: a return makes one per event of Δ,
    and a tuple is several times cheaper to make.
    """

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
    depends_on: frozenset[str] = frozenset()
    """What the event's item declares it depends on: items it builds on, so it is never
    evidence against them."""
    fewer: "tuple[Readers, Readers] | None" = None
    """For a replacement shown in its words: who read what it replaced and who reads it,
    where some of the former may not read it (`readmit.admission.invalidation.readers`)."""
    until: datetime | None = None
    """When the item the event brought ends (its ``valid_to``; none: it holds for good)."""
    withdrawn_until: datetime | None = None
    """When the item it withdrew would have ended (none: never, or unknown): with ``until``,
    when the observation stops saying anything of the state (`ended`)."""


def ends(brought: datetime | None, withdrawn: datetime | None, replaced: bool) -> datetime | None:
    """When an observation that brought an item ending at ``brought`` stops saying anything.

    News (nothing ``replaced``): when its item ends. In the place of an item that would
    end at ``withdrawn``: once both have ended (a withdrawal stands however its replacement
    is bounded, while what it withdrew would hold). Never, if either holds for good.
    """
    if not replaced:
        return brought
    return None if brought is None or withdrawn is None else max(brought, withdrawn)


def ended(later: Later) -> datetime | None:
    """When ``later`` stops saying anything of the state (`ends`); none: never."""
    if later.replacement_id is None:
        return None  # a revocation or closing withdrew, and brought nothing
    return ends(later.until, later.withdrawn_until, replaced=later.withdrawn_id is not None)


def in_force(laters: list[Later], at: datetime) -> list[Later]:
    """``laters`` but those that `ended` by ``at``: no evidence at ``at``.

    A pool "closed until 8:20" keeps no swim out at 8:30: it is ``expired`` in the view,
    and its verdicts lapse then too (`readmit.store.verdicts`).
    """
    if any(x.until is not None and x.until <= at for x in laters):
        return [x for x in laters if (end := ended(x)) is None or end > at]
    return laters


@dataclass(frozen=True, slots=True, kw_only=True)
class Pair:
    """A proposed (later event, earlier item) dependency to be judged."""

    later: Later
    earlier: Item
    premises: tuple[str, ...] = ()
    """The texts of the items ``earlier`` depends on (its premises), in id order: what a
    verifier needs to judge a premise change in context (a question, for an answer)."""


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
        said: object = self.invalidates  # typed bool; "no" would count as invalidating
        if type(said) is not bool:
            if type(said).__name__ not in ("bool", "bool_"):  # numpy's are taken
                raise InvalidInput(f"verdict invalidates must be True or False, not {said!r}")
            object.__setattr__(self, "invalidates", bool(said))
        confidence: object = self.confidence  # typed float; a caller may give anything
        if not isinstance(confidence, int | float) or isinstance(confidence, bool):
            raise InvalidInput(f"verdict confidence must be a number, not {confidence!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise InvalidInput(f"verdict confidence {self.confidence!r} is outside [0, 1]")
        if self.abstained and self.invalidates:
            raise InvalidInput("a verdict cannot both abstain and invalidate")
        reason, terms = _words(self.reason, self.terms)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "terms", terms)


def _words(reason: object, terms: object) -> tuple[str, tuple[str, ...]]:
    """A verdict's reason and terms as strings a store can hold.

    None broke the judgment cache's row and bytes its type (a review); a list of terms is
    taken as a tuple. A model's reason may hold what no store can: the verdict is kept,
    that character not (a NUL made the return's record fail, and the cached answer every
    return after).

    Raises:
        InvalidInput: if the reason is no string, or the terms are not strings.
    """
    if not isinstance(reason, str):
        raise InvalidInput(f"verdict reason must be a string, not {reason!r}"[:200])
    if not isinstance(terms, tuple | list) or not all(isinstance(t, str) for t in terms):
        raise InvalidInput(f"verdict terms must be a tuple of strings, not {terms!r}"[:200])
    return UNSTORABLE.sub("\ufffd", reason), tuple(UNSTORABLE.sub("\ufffd", t) for t in terms)


class Verifier(Protocol):
    """Judges candidate pairs. Implementations live in ``readmit.verifiers``."""

    @property
    def name(self) -> str:
        """Identity of the verifier, non-empty (explanations, caches, stored verdicts)."""
        ...

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        """Return one verdict per pair, in order.

        Raises:
            VerifierUnavailable: if no trustworthy answer can be given.
        """
        ...


def judges_news(verifier: object) -> bool:
    """Whether ``verifier`` can confirm an invalidation from news.

    News is a later event that withdrew no state (a new fact, evidence). A verifier
    says it cannot with ``judges_news = False`` (the built-in verifier: only a
    withdrawal links for it); the screener then never proposes news to it, since every
    such pair would come back "does not invalidate" at the cost of ranking and a call.
    Absent, it can. A wrapper forwards its inner verifier's answer.
    """
    return bool(getattr(verifier, "judges_news", True))


Progress = Callable[[int, int], None]
"""Called with (verifier calls made, calls allowed) after every verifier call."""


def judge_batch(verifier: Verifier, batch: Sequence[Pair]) -> list[tuple[Pair, Verdict | None]]:
    """Each pair with its verdict, or ``None`` where the verifier gave no trustworthy answer."""
    try:
        verdicts = list(verifier.judge(batch))
    except VerifierUnavailable as exc:  # why, for the operator: the exclusions say only that
        _unavailable(verifier.name, str(exc).removeprefix(f"{verifier.name}: "))
        return [(pair, None) for pair in batch]
    except Exception:  # any other failure is no answer too, never an item let through
        log.warning("verifier %r failed; its pairs are withheld", verifier.name, exc_info=True)
        return [(pair, None) for pair in batch]
    if len(verdicts) != len(batch) or not all(isinstance(v, Verdict) for v in verdicts):
        # A short or malformed answer is no answer: never guess which pairs it covers.
        return [(pair, None) for pair in batch]
    return list(zip(batch, verdicts, strict=True))


_SAID: dict[tuple[str, str], float] = {}
"""When each verifier's failure was last logged, by verifier and message."""
SAY_AGAIN_AFTER = 60.0
"""Seconds before the same failure of the same verifier is logged again: a verifier down
fails every batch of every return, and once a minute tells the operator as much."""


def _unavailable(verifier: str, why: str) -> None:
    """Log that ``verifier`` gave no answer, and ``why``, unless it was said just before."""
    now = time.monotonic()
    said = _SAID.get((verifier, why))
    if said is not None and now - said < SAY_AGAIN_AFTER:
        return
    keep(_SAID, (verifier, why), now, 1 << 10)
    log.warning("verifier %r gave no answer, so its pairs are withheld: %s", verifier, why)


def confirms(verdict: Verdict | None, threshold: float) -> bool:
    """Whether ``verdict`` confirms an invalidation at threshold τ."""
    return verdict is not None and verdict.invalidates and verdict.confidence >= threshold


def invalidated(pair: Pair, verdict: Verdict, verifier: str, shown: bool = True) -> Exclusion:
    """The exclusion of a confirmed invalidation.

    Unless ``shown``, the verifier's wording is left out: it may quote an item the
    returning agent may not read, which the later event brought or withdrew.
    """
    terms = f" (linked by {', '.join(verdict.terms)})" if verdict.terms else ""
    detail = f"{verifier}: {verdict.reason}{terms}"
    if not shown:
        detail = f"{verifier}: an event about what you may not read invalidated it"
    return Exclusion(
        item=pair.earlier.id,
        reason=Reason.IMPLICITLY_INVALIDATED,
        stage=Stage.IMPLICIT,
        evidence=(pair.later.event_id,),
        confidence=verdict.confidence,
        detail=detail,
        sighted=(pair.later.event_id,) if shown else (),
    )


def unanswered(pair: Pair, verdict: Verdict | None, verifier: str, shown: bool = True) -> Exclusion:
    """The exclusion of an item whose pair got no answer or an abstention (fail closed).

    Unless ``shown``, the verifier's wording is left out (as in `invalidated`).
    """
    event = pair.later.event_id
    said = f": {verdict.reason}" if verdict and shown else ""
    return Exclusion(
        item=pair.earlier.id,
        reason=Reason.VERIFIER_UNAVAILABLE,
        stage=Stage.IMPLICIT,
        evidence=(event,),
        detail=f"verifier {verifier} could not tell whether {event} invalidates it{said}"
        if verdict
        else f"verifier {verifier} gave no answer about {event}",
        sighted=(event,) if shown else (),
    )


SPENT = (
    "the return's judgment budget was spent before later events proposed against it could be judged"
)
"""Why an item is ``unscreened`` when the budget's calls, tokens or seconds ran out."""
UNFOLLOWED = (
    "the return's judgment budget was spent (its `Policy.walk_steps`, reading what replaced "
    "or restated withdrawn statements to see whether they were restored) before later events "
    "proposed against it could be judged"
)
"""Why an item is ``unscreened`` when its return's steps (`Policy.walk_steps`) ran out."""


def unscreened(
    item: str, left: Sequence[Later], detail: str, sees: Callable[[Later], bool]
) -> Exclusion:
    """The exclusion of an item the return's budget left partly judged (fail closed).

    ``detail``: which part of the budget ran out (`SPENT`, `UNFOLLOWED`). Its evidence names
    each event once, however many of its observations were left: an event that also
    withdrew what the agent may not read is listed as one that did not. ``sees``: whether
    the agent may read an observation whole (`Exclusion.sighted`).
    """
    evidence = tuple(dict.fromkeys(later.event_id for later in left))
    sighted = tuple(dict.fromkeys(later.event_id for later in left if sees(later)))
    return Exclusion(
        item=item,
        reason=Reason.UNSCREENED,
        stage=Stage.IMPLICIT,
        evidence=evidence,
        detail=detail,
        sighted=sighted,
    )


def unembedded(item: str, news: Later, failure: Exception) -> Exclusion:
    """The exclusion of an item whose embedding proposals failed while ``news`` could matter."""
    return Exclusion(
        item=item,
        reason=Reason.VERIFIER_UNAVAILABLE,
        stage=Stage.IMPLICIT,
        evidence=(news.event_id,),
        detail=f"not screened against later events: {failure}",
    )


def tokens_used(model: object) -> int:
    """The LLM tokens ``model`` (a verifier, a dependency scan) says it used; 0 if it does not."""
    return int(getattr(model, "tokens_used", 0))
