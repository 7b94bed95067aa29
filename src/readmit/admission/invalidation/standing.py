"""Standing verdicts: a confirmed implicit invalidation binds every later return.

The store keeps each invalidation a return confirmed, with its evidence, and
hands the ones that still stand to every later return context (any agent's).
They are applied before anything is judged, so a stale item never comes back
because a later return had nothing new to judge it against. The store lapses
a verdict when something restores its premise (see `readmit.store.verdicts`).
"""

from collections.abc import Container, Iterable, Mapping
from dataclasses import replace
from itertools import compress
from operator import attrgetter, not_

from readmit.admission.context import ReturnContext, Standing, events_by_id, receipt_events
from readmit.admission.memo import Passes
from readmit.events import Assert, Close, Evidence, Recorded, Revoke, Supersede
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
    return kept, [
        _sighted(_exclusion(verdict, known, reader), ctx, in_delta) for verdict in verdicts
    ]


def _sighted(made: Exclusion, ctx: ReturnContext, in_delta: Mapping[str, Recorded]) -> Exclusion:
    """``made``, its event `Exclusion.sighted` where it is in the returning agent's sight.

    An event of its Δ that brought an item it may read (whose receipt names the event), or
    withdrew one it may read and brought none, or evidence it may read: named to it,
    whatever else the event withdrew, and whichever of its observations the verdict
    rests on. That one is another reader's judgment: its words are not shown to another
    reader (`_exclusion`), so naming the event tells nothing of them, and hiding it told
    that the event was also about what the agent may not read (a review's finding).
    """
    said = in_delta.get(made.evidence[0]) if len(made.evidence) == 1 else None
    if said is None:
        return made
    event, who = said.event, ctx.returner
    if isinstance(event, Evidence):
        seen = ctx.reads_evidence_of(event.author)
    else:
        named = event.item.id if isinstance(event, Assert | Supersede) else None
        if isinstance(event, Revoke | Close):
            named = event.target
        found = None if named is None else ctx.by_id.get(named)
        seen = found is not None and found.scope.readable_by(who.principal, who.role)
    return replace(made, sighted=made.evidence) if seen else made


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
        confidence=verdict.confidence if own else None,  # it tells of the words, as they do
        detail=detail,
    )
