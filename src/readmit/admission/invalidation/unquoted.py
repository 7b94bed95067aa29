"""How far a return's screening holds for every reader: the watermarks it may keep.

A return screens an item against the later events as its own context quotes them. A
withdrawal of an item its checkpoint does not hold (one its agent may not read, or one
no longer valid when it departed) cannot be quoted: a verifier that judges only
withdrawals is not shown it, one that judges news sees no withdrawal in it. An agent
whose checkpoint holds that item is shown the withdrawal, and may find the item
invalidated by it. Screening watermarks bind every later return, of every agent
(`readmit.store.verdicts`), so each is kept only up to the event before the first such
withdrawal after the item's start: the next return screens the item from there, with
its own context.

What a checkpoint left out as no longer valid but its agent may read is quoted all the
same (`ReturnContext.left_out`), and so is not counted here; so is what the store
quotes (`quoted`): then only a withdrawal it could not find the item of is.
"""

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from readmit.admission.context import ReturnContext, grown_base
from readmit.admission.memo import Grown
from readmit.events import Assert, Close, Recorded, Revoke, Supersede
from readmit.model import Item


def unquoted(ctx: ReturnContext) -> tuple[int, ...]:
    """The epochs, in order, of Δ's withdrawals of items C does not hold.

    A revocation, closing or supersession names its target. A keyed assert withdraws
    the item its key held: one of D_a's where D_a holds the key, else one from before the
    departure that D_a lacks if the store says a key was held then
    (`ReturnContext.keys_before`; without it, every key is taken to be, which only keeps
    less). Made once per C and Δ, and grown from the last when they grow.
    """
    return _made(ctx).epochs


def quoted(ctx: ReturnContext) -> tuple[Item, ...]:
    """The items, held at the departure, that Δ withdraws and C does not hold.

    As the store holds them (`ReturnContext.quote`; ``()`` without it): another
    principal's, which D_a could not hold. Quoted to the verifier as Δ's withdrawals of
    them (`readmit.admission.invalidation.observations`), as the same history without the
    departure quotes them, its Δ holding their assertions (`readmit.store.quoted`).
    """
    return _made(ctx).quoted


def _made(ctx: ReturnContext) -> "_Unquoted":
    memo = _MADE[len(ctx.tuples), ctx.quote is not None]
    known = memo.found(*ctx.tuples)
    if known is not None:
        return known
    base = grown_base(memo, ctx)  # never another reader's
    if base is None:
        made = _grown(ctx, 0, _Unquoted((), frozenset(), None, ()))
    else:
        start, was = base
        made = _grown(ctx, start, was)
    return memo.put(ctx.tuples, made)


def _grown(ctx: ReturnContext, start: int, was: "_Unquoted") -> "_Unquoted":
    """What `_made` holds, grown past Δ's first ``start`` events (``was``: made for them)."""
    by_id = ctx.by_id if not ctx.left_out else {**ctx.by_id, **{i.id: i for i in ctx.left_out}}
    targets: dict[str, int] = {}
    first = _scan(ctx.delta[start:], by_id, was.seen, targets)
    epochs, held, found = list(was.epochs), was.held, was.quoted
    if ctx.quote is not None:  # the store answers which items held each, when D_a was taken
        if targets or first:
            had = {i.id for i in found}
            new = ctx.quote(list(targets), list(first))
            found += tuple(i for i in new if i.id not in by_id and i.id not in had)
            had.update(i.id for i in found)
            epochs += (epoch for target, epoch in targets.items() if target not in had)
    else:
        epochs += targets.values()
        if first:
            held = _held(ctx) if held is None else held
            asked = [key for key in first if key not in held]
            if asked:
                hidden = asked if ctx.keys_before is None else ctx.keys_before(asked)
                epochs += (first[key] for key in hidden)
    return _Unquoted(tuple(sorted(epochs)), was.seen | first.keys(), held, found)


def _scan(
    delta: Sequence[Recorded],
    by_id: Mapping[str, Item],
    seen: frozenset[str],
    targets: dict[str, int],
) -> dict[str, int]:
    """The first epoch in ``delta`` of each key it asserts that ``seen`` lacks.

    The ids ``by_id`` lacks that it withdraws go into ``targets``, with their epochs.
    """
    first: dict[str, int] = {}  # each new key's first assert: later ones replace C's items
    for recorded in delta:
        event = recorded.event
        op = event.op  # told apart by tag first: most of Δ is news that names nothing
        if (
            op in _NAMING
            and isinstance(event, Revoke | Close | Supersede)
            and event.target not in by_id
        ):
            targets[event.target] = recorded.epoch
        if (  # a keyed supersession replaces what held its key, as a keyed assert does
            op in _KEYING
            and isinstance(event, Assert | Supersede)
            and (key := event.item.key) is not None
            and key not in seen
        ):
            first.setdefault(key, recorded.epoch)
    return first


_NAMING = frozenset({"revoke", "close", "supersede"})
"""The ops whose event names the item it withdraws (``target``)."""
_KEYING = frozenset({"assert", "supersede"})
"""The ops whose new item may replace the item its key held."""


@dataclass(frozen=True, slots=True)
class _Unquoted:
    epochs: tuple[int, ...]
    seen: frozenset[str]
    """The keys asserted in Δ."""
    held: frozenset[str] | None
    """The keys D_a holds (``None``: not needed yet, no key asserted in Δ)."""
    quoted: tuple[Item, ...]
    """`quoted`: what the store quotes of Δ's withdrawals of items C lacks."""


_MADE: dict[tuple[int, bool], Grown[_Unquoted]] = {
    (n, store): Grown() for n in (2, 3) for store in (True, False)
}
"""`unquoted` of recent contexts' tuples of items and Δ (and of what D_a left out), with
and without a store to quote from (a context `detached` from its store shares its tuples)."""


def _held(ctx: ReturnContext) -> frozenset[str]:
    """The keys of D_a's items (C's items from before the departure) and of those it left out."""
    departed = ctx.departure.epoch
    before = (i for i in (*ctx.items, *ctx.left_out) if i.epoch <= departed)
    return frozenset(i.key for i in before if i.key is not None)


def kept(
    screened: Mapping[str, int], starts: Mapping[str, int], withdrawals: Sequence[int]
) -> dict[str, int]:
    """``screened``'s watermarks, each cut before the first of ``withdrawals`` after its start.

    ``withdrawals``: `unquoted`'s epochs, in order.
    """
    if not withdrawals:
        return dict(screened)
    cut = {}
    for item, through in screened.items():
        after = bisect.bisect_right(withdrawals, starts[item])
        cut[item] = min(through, withdrawals[after] - 1) if after < len(withdrawals) else through
    return cut
