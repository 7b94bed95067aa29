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

An item the returning agent may read that its checkpoint left out as no longer valid (a
standing verdict, an ended validity, a fallen premise) is quoted all the same
(`quoted`): an item that names it must be screened against its withdrawal as it would
have been had the checkpoint held it.
"""

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from readmit.admission.context import ReturnContext
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
    """The items Δ withdraws that C lacks and the returning agent may quote (`left_out`)."""
    made = _made(ctx)
    if ctx.left_out is None or not (made.targets or made.keys):
        return ()
    return ctx.left_out(sorted(made.targets), sorted(made.keys))


def _made(ctx: ReturnContext) -> "_Unquoted":
    known = _MADE.found(ctx.items, ctx.delta)
    if known is not None:
        return known
    base = _MADE.base(ctx.items, ctx.delta)
    if base is None:
        start, seen, held, targets = 0, frozenset[str](), None, frozenset[str]()
        epochs: list[int] = []
        keys: tuple[str, ...] = ()
    else:
        start, made = base[0][1], base[1]
        seen, held, targets, keys = made.seen, made.held, made.targets, made.keys
        epochs = list(made.epochs)
    named, first = _scan(ctx.delta[start:], ctx.by_id, seen, epochs)
    hidden: tuple[str, ...] = ()
    if first:
        held = _held(ctx) if held is None else held
        asked = [key for key in first if key not in held]
        if asked:
            hidden = tuple(asked if ctx.keys_before is None else ctx.keys_before(asked))
            epochs += (first[key] for key in hidden)
    grown = _Unquoted(
        tuple(sorted(epochs)), seen | first.keys(), held, targets | named, (*keys, *hidden)
    )
    return _MADE.put((ctx.items, ctx.delta), grown)


def _scan(
    delta: Sequence[Recorded], by_id: Mapping[str, Item], seen: frozenset[str], epochs: list[int]
) -> tuple[set[str], dict[str, int]]:
    """What ``delta`` withdraws unquoted: ids ``by_id`` lacks, and new keys' first epochs.

    The epochs of the ids' withdrawals are added to ``epochs``; a key is new if not in
    ``seen``.
    """
    named: set[str] = set()
    first: dict[str, int] = {}  # each new key's first assert: later ones replace C's items
    for recorded in delta:
        event = recorded.event
        op = event.op  # told apart by tag first: most of Δ is news that names nothing
        if (
            op in _NAMING
            and isinstance(event, Revoke | Close | Supersede)
            and event.target not in by_id
        ):
            epochs.append(recorded.epoch)
            named.add(event.target)
        if (  # a keyed supersession replaces what held its key, as a keyed assert does
            op in _KEYING
            and isinstance(event, Assert | Supersede)
            and (key := event.item.key) is not None
            and key not in seen
        ):
            first.setdefault(key, recorded.epoch)
    return named, first


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
    targets: frozenset[str]
    """The ids Δ's revocations, closings and supersessions name that C does not hold."""
    keys: tuple[str, ...]
    """The keys Δ asserts that D_a lacks and some item held before the departure."""


_MADE: Grown[_Unquoted] = Grown()


def _held(ctx: ReturnContext) -> frozenset[str]:
    """The keys of D_a's items (C's items from before the departure)."""
    departed = ctx.departure.epoch
    return frozenset(i.key for i in ctx.items if i.key is not None and i.epoch <= departed)


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
