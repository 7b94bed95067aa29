"""Standing verdicts: a confirmed implicit invalidation binds every later return.

The store keeps each invalidation a return confirmed, with its evidence, and
hands the ones that still stand to every later return context (any agent's).
They are applied before anything is judged, so a stale item never comes back
because a later return had nothing new to judge it against. The store lapses
a verdict when something restores its premise (see `readmit.store.verdicts`).
"""

from collections.abc import Container, Iterable
from itertools import compress
from operator import attrgetter, not_

from readmit.admission.context import ReturnContext, Standing, events_by_id, receipt_events
from readmit.admission.memo import Passes
from readmit.model import Item
from readmit.reasons import Exclusion, Reason, Stage

_ID = attrgetter("id")


def apply_standing(pool: Iterable[Item], ctx: ReturnContext) -> tuple[list[Item], list[Exclusion]]:
    """Split ``pool`` into items no standing verdict covers and the exclusions of the rest."""
    if not ctx.standing:
        return list(pool), []
    pool = list(pool)
    reader = (ctx.returner.principal, ctx.returner.role)  # the wording shown depends on it
    inputs = (dict(ctx.standing), id(ctx.delta), id(ctx.items), reader)
    known = _PASSES.get(pool, inputs)
    if known is None:
        made = _split(pool, ctx)
        known = _PASSES.put(pool, inputs, (ctx.delta, ctx.items), made, owned=True)
    return list(known[0]), list(known[1])


_PASSES: Passes[tuple[list[Item], list[Exclusion]]] = Passes()
"""Recent splits, by pool, verdicts, Δ and C (by identity: a verdict's evidence is shown
when they hold it) and reader."""


def _split(pool: list[Item], ctx: ReturnContext) -> tuple[list[Item], list[Exclusion]]:
    marks = list(map(ctx.standing.__contains__, map(_ID, pool)))  # in C: most have none
    kept = list(compress(pool, map(not_, marks)))
    verdicts = [ctx.standing[item.id] for item in compress(pool, marks)]
    if not verdicts:
        return kept, []
    in_delta = events_by_id(ctx.delta)  # most verdicts cite an event of Δ
    known: Container[str] = in_delta
    if any(e not in in_delta for verdict in verdicts for e in verdict.evidence):
        known = in_delta.keys() | receipt_events(ctx.items)
    reader = (ctx.returner.principal, ctx.returner.role)
    return kept, [_exclusion(verdict, known, reader) for verdict in verdicts]


def _exclusion(verdict: Standing, known: Container[str], reader: tuple[str, str]) -> Exclusion:
    """The exclusion a standing verdict makes in this return.

    Its evidence is shown only when this return's C holds it (then the view's
    redaction hides what the agent may not read); evidence from outside C is left
    out, and so is the verifier's wording, which may quote it. The wording may also
    name what the evidence withdrew, which only readers like the one that confirmed the
    verdict may read: any other ``reader`` is told the evidence, not the wording, nor when
    it was confirmed (the epoch of another principal's return, a review's finding).
    """
    own = verdict.reader == reader
    decided = f"confirmed at epoch {verdict.decided_epoch}" if own else "confirmed earlier"
    visible = all(e in known for e in verdict.evidence)
    if visible and own:
        detail = f"{decided} by {verdict.detail}"
    elif visible:
        detail = f"{decided} by {verdict.verifier}: the events given invalidated it"
    else:
        detail = (
            f"{decided} by {verdict.verifier}: an event before this return's departure "
            "invalidated it"
        )
    return Exclusion(
        item=verdict.item,
        reason=Reason.IMPLICITLY_INVALIDATED,
        stage=Stage.IMPLICIT,
        evidence=verdict.evidence if visible else (),
        confidence=verdict.confidence,
        detail=detail,
    )
