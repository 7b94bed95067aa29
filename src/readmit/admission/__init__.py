"""The TRACE return pipeline: ``admit()`` reads top to bottom as the stages of spec §3."""

import math
from collections.abc import Callable, Sequence
from itertools import compress
from operator import attrgetter
from typing import Literal

from readmit.admission.capture import capture
from readmit.admission.context import ReturnContext
from readmit.admission.coverage import cover
from readmit.admission.decision import Decision, Issued, Withheld
from readmit.admission.gates import DEFAULT_GATES, apply_gates, max_chars
from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.admission.invalidation.implicit import Progress, Verifier
from readmit.admission.invalidation.judgment import Judgment
from readmit.admission.invalidation.propagation import outside_seeds, propagate
from readmit.admission.invalidation.screening import Screener
from readmit.admission.invalidation.standing import apply_standing
from readmit.admission.readmission import readmit
from readmit.admission.view import issue
from readmit.canonical import UNSTORABLE
from readmit.collector import paused
from readmit.errors import InvalidInput
from readmit.model import Item
from readmit.policy import OnIncomplete, Policy
from readmit.reasons import Exclusion, Reason
from readmit.signing import Signer


# A return allocates thousands of objects and frees them all by reference counting: none
# forms a cycle, so the cyclic collector is paused while it runs (`readmit.collector`).
@paused()
def admit(
    ctx: ReturnContext,
    *,
    policy: Policy,
    verifier: Verifier | None,
    signer: Signer,
    on_progress: Progress | None = None,
    embedder: Embedder | None = None,
    query: str | None = None,
    dependency_scan: DependencyScan | None = None,
    waited: float = 0.0,
    between: Callable[[], None] | None = None,
) -> Decision:
    """Run the TRACE return pipeline on one immutable context.

    Args:
        ctx: C = D_a ⊕ Δ for this return.
        policy: budgets, thresholds and what to do when coverage falls short.
        verifier: judges implicit invalidation; ``None`` runs the explicit stages only.
        signer: signs (and re-verifies) the Return View.
        on_progress: called after each verifier call with (judged, proposed).
        embedder: lets the scanner also propose each later event's nearest items.
        query: what the agent returns to do, in words: the selector fills the view's
            remaining budget with the items closest to it (and judges only those).
        dependency_scan: lets a model also name later events that may change a premise
            of an item where the scanner proposed none (its calls count against the budget).
        waited: seconds the return already waited before this decision (its workspace's
            turn in a service): they count against ``policy.max_judgment_seconds``.
        between: called between stages; may raise to stop the return there (judging
            ahead gives way to a return with it, `readmit.service.ahead`).

    Raises:
        ViewRejected: if a freshly signed view fails its own verification.
        ValueError: if ``waited`` is not a finite number of seconds, 0 or more.
        InvalidInput: if ``verifier`` has no ``name`` or ``judge`` (a plain function).
    """
    if not 0.0 <= waited < math.inf:  # NaN too: a budget it would not bound
        raise ValueError(f"waited must be a finite number of seconds, 0 or more (not {waited})")
    _check_verifier(verifier)
    step = between or _nothing
    pool = list(capture(ctx))
    pool, explicit = resolve_explicit(pool, ctx)
    step()
    pool, standing = apply_standing(pool, ctx)
    # Outside C first: a premise of C named before one the agent may not read (`propagate`).
    pool, premise = propagate(pool, excluded=(*outside_seeds(ctx), *explicit, *standing))
    step()
    eligible, gated = apply_gates(pool, ctx, (*DEFAULT_GATES, max_chars(policy.max_item_chars)))
    step()
    # A premise whose validity ended is invalid for current use, as a departure holds it:
    # gated for that, or for another reason first (another principal's, stated while the
    # agent was away), and through items gated on the way (what rested on it was admitted
    # past its end, a differential fuzz).
    expired = [e for e in gated if e.reason is Reason.EXPIRED or _ended(ctx, e.item)]
    if expired:
        eligible, premise = _lapsed(pool, eligible, gated, expired, premise)
    screener = (
        Screener(ctx, pool, verifier, policy, embedder, on_progress, dependency_scan, waited)
        if verifier is not None and policy.implicit
        else None
    )
    screen = stop = None
    if screener is not None:
        screen, limit = screener.admits, policy.unscreened_limit
        stop = lambda: screener.past_budget >= limit  # noqa: E731
    selection = cover(eligible, ctx.role_obligations, policy, screen, query, stop)
    implicit, left_out = _screened_out(ctx, screener, gated, selection.left_out, eligible)
    decided = (*explicit, *standing, *premise, *gated, *implicit)
    # Not what the gates drop, nor a premise outside C: the agent is not told of those.
    unscreened = sum(e.reason is Reason.UNSCREENED for e in implicit)
    judgment = (
        screener.judgment(len(standing), unscreened)
        if screener is not None
        else Judgment(verifier="", standing=len(standing))
    )
    if policy.complete_view_gate and not selection.coverage.meets(policy):
        outcome: Literal["blocked", "reset"] = (
            "reset" if policy.on_incomplete is OnIncomplete.RESET else "blocked"
        )
        return Withheld(
            outcome=outcome,
            selected=selection.items,
            coverage=selection.coverage,
            decided=decided,
            not_selected=tuple(left_out),
            withheld=ctx.experiences,
            judgment=judgment,
        )
    step()
    # The view never lists not_selected items, so it is built from the decided ones only.
    verified = issue(ctx, selection, decided, policy, signer)
    readmitted, withheld = (
        readmit(verified, ctx.experiences)
        if policy.source_bound_readmission
        else (ctx.experiences, ())
    )
    return Issued(
        view=verified,
        items=selection.items,
        coverage=selection.coverage,
        decided=decided,
        not_selected=tuple(left_out),
        readmitted=readmitted,
        withheld=withheld,
        judgment=judgment,
    )


def _lapsed(
    pool: list[Item],
    eligible: list[Item],
    gated: Sequence[Exclusion],
    expired: list[Exclusion],
    premise: list[Exclusion],
) -> tuple[list[Item], list[Exclusion]]:
    """``eligible`` less what rests on ``expired`` in ``pool``; ``premise`` with why."""
    _, lapsed = propagate(pool, excluded=expired)
    if not lapsed:
        return eligible, premise
    fell, kept_out = {e.item for e in lapsed}, {e.item for e in gated}
    eligible = [i for i in eligible if i.id not in fell]
    return eligible, [*premise, *(e for e in lapsed if e.item not in kept_out)]


def _ended(ctx: ReturnContext, item_id: str) -> bool:
    """Whether the validity of ``item_id`` (an item of C) ended by the return."""
    item = ctx.by_id.get(item_id)
    return item is not None and item.validity.ended(ctx.returner.at)


def _check_verifier(verifier: object) -> None:
    """Refuse a verifier without the `Verifier` protocol's ``name`` and ``judge``.

    Its verdicts and screenings are stored under its name, and a judgment with none is
    taken for the explicit stages' alone: a verifier named ``""`` would bind no later return.

    Raises:
        InvalidInput: saying what it needs (a plain function is the usual mistake).
    """
    if verifier is None:
        return
    if not (hasattr(verifier, "name") and hasattr(verifier, "judge")):
        raise InvalidInput(
            f"verifier {verifier!r} needs a name and a judge(pairs) method (the Verifier "
            "protocol); readmit.testing.FunctionVerifier(fn) wraps a function of one pair"
        )
    name = verifier.name
    if not isinstance(name, str) or not name.strip() or UNSTORABLE.search(name):
        raise InvalidInput(
            f"verifier {verifier!r} needs a name that is a non-empty string with no NUL or lone "
            f"surrogate, not {name!r}: its verdicts are stored under it, to bind later returns"
        )


def _nothing() -> None:
    """``between`` when none is given."""


def _screened_out(
    ctx: ReturnContext,
    screener: Screener | None,
    gated: Sequence[Exclusion],
    left_out: Sequence[str],
    eligible: Sequence[Item],
) -> tuple[list[Exclusion], Sequence[str]]:
    """The screener's exclusions, and the ids left ``not_selected``: each item once.

    An item the gates already excluded keeps that reason (its confirmed verdict is still
    stored); an item left unselected whose premise the screener invalidated is
    ``premise_invalidated`` rather than ``not_selected``.
    """
    if screener is None:
        return [], left_out
    gated_ids = {e.item for e in gated}
    # A premise outside C was screened too: its verdict is stored, never listed.
    implicit = [e for i, e in screener.excluded.items() if i not in gated_ids and i in ctx.by_id]
    judged = {e.item for e in implicit}
    # Only a confirmed invalidation takes what rests on it down: an item whose premise could
    # not be screened (unavailable verifier, spent budget) is not stale, and one the selector
    # never reached stays `not_selected` (a review's finding: it was `premise_invalidated`).
    stale = [e for e in implicit if e.reason in _STALE]
    # Tested in C first: most of a large pool is left out, and rarely one that was judged.
    if judged and not judged.isdisjoint(left_out):
        left_out = [i for i in left_out if i not in judged]
    # Only an item with premises can fall, so only those need propagating.
    built_on = list(compress(eligible, map(_DEPENDS_ON, eligible))) if stale else []
    if not built_on:
        return implicit, left_out
    left = set(left_out)
    beyond = outside_seeds(ctx, {e.item for e in stale}) if ctx.outside else []
    _, fallen = propagate([m for m in built_on if m.id in left], excluded=(*beyond, *stale))
    if not fallen:
        return implicit, left_out
    gone = {e.item for e in fallen}
    return implicit + fallen, [i for i in left_out if i not in gone]


_DEPENDS_ON = attrgetter("depends_on")
_STALE = (Reason.IMPLICITLY_INVALIDATED, Reason.PREMISE_INVALIDATED)


__all__ = ["Decision", "Issued", "Judgment", "ReturnContext", "Withheld", "admit"]
