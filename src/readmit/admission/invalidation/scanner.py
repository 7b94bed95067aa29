"""The scanner: high-recall proposals of (later event, earlier item) pairs (TRACE §3.2).

A proposal is a hypothesis, not a decision. The scanner links a later event in
Δ to an earlier candidate when they share a content token, when the item
depends on what the event withdrew, or when the item carries the key the event
replaced. Obligations and frontiers are the mandatory structure of the view and
are never challenged.
"""

from collections.abc import Iterable, Sequence

from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.implicit import Later, Pair
from readmit.events import Assert, Close, Evidence, Recorded, Revoke, Supersede
from readmit.model import Item, Kind
from readmit.terms import content_tokens

_STRUCTURE = frozenset({Kind.OBLIGATION, Kind.FRONTIER})


def observations(ctx: ReturnContext) -> list[Later]:
    """The later observations of Δ that can change a premise, in epoch order."""
    by_key: dict[str, list[Item]] = {}
    for item in ctx.items:
        if item.key is not None:
            by_key.setdefault(item.key, []).append(item)
    found = (_observation(recorded, ctx, by_key) for recorded in ctx.delta)
    return [later for later in found if later is not None]


def scan(pool: Sequence[Item], ctx: ReturnContext) -> list[Pair]:
    """Propose every (later, earlier) pair that may share a premise, in a deterministic order."""
    candidates = [item for item in pool if item.kind not in _STRUCTURE]
    by_token: dict[str, list[Item]] = {}
    by_premise: dict[str, list[Item]] = {}
    for item in candidates:
        for token in content_tokens(item.text):
            by_token.setdefault(token, []).append(item)
        for premise in item.depends_on:
            by_premise.setdefault(premise, []).append(item)
    pairs: list[Pair] = []
    for later in observations(ctx):
        linked: dict[str, Item] = {}
        for item in _related(later, by_token, by_premise):
            if item.epoch < later.epoch and item.id not in (
                later.withdrawn_id,
                later.replacement_id,
            ):
                linked[item.id] = item
        pairs.extend(Pair(later=later, earlier=item) for item in linked.values())
    return pairs


def _related(
    later: Later, by_token: dict[str, list[Item]], by_premise: dict[str, list[Item]]
) -> Iterable[Item]:
    text = " ".join(t for t in (later.text, later.withdrawn_text, later.replacement_text) if t)
    for token in sorted(content_tokens(text)):
        yield from by_token.get(token, ())
    if later.withdrawn_id is not None:
        yield from by_premise.get(later.withdrawn_id, ())


def _observation(
    recorded: Recorded, ctx: ReturnContext, by_key: dict[str, list[Item]]
) -> Later | None:
    event, epoch = recorded.event, recorded.epoch
    match event:
        case Assert():
            old = _predecessor(by_key.get(event.item.key or "", []), epoch)
            return Later(
                event_id=event.id,
                epoch=epoch,
                op=event.op,
                text=event.item.text,
                withdrawn_id=old.id if old else None,
                withdrawn_text=old.text if old else None,
                replacement_id=event.item.id,
                replacement_text=event.item.text,
            )
        case Supersede():
            old = ctx.by_id.get(event.target)
            return Later(
                event_id=event.id,
                epoch=epoch,
                op=event.op,
                text=event.item.text,
                withdrawn_id=event.target,
                withdrawn_text=old.text if old else None,
                replacement_id=event.item.id,
                replacement_text=event.item.text,
            )
        case Revoke() | Close():
            old = ctx.by_id.get(event.target)
            why = f" Reason: {event.why}" if isinstance(event, Revoke) else ""
            return Later(
                event_id=event.id,
                epoch=epoch,
                op=event.op,
                text=f"No longer valid: {old.text if old else event.target}.{why}",
                withdrawn_id=event.target,
                withdrawn_text=old.text if old else None,
            )
        case Evidence():
            return Later(event_id=event.id, epoch=epoch, op=event.op, text=event.text)
        case _:
            return None


def _predecessor(same_key: list[Item], epoch: int) -> Item | None:
    return max((i for i in same_key if i.epoch < epoch), key=lambda i: i.epoch, default=None)
