"""Δ as observations: each later event as the verifier reads it (`Later`).

An assert that replaced an item of the same key, a supersession, a revocation and
a closing withdrew state, and carry the withdrawn item's text (a supersession whose
new item has a key also replaced the item that held it: a second observation); a new fact or a
piece of evidence is news. A verifier that cannot judge news is shown none
(`readmit.admission.invalidation.implicit.judges_news`), so for it no news is
even built.
"""

import bisect
from collections.abc import Iterable, Mapping

from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.unquoted import quoted
from readmit.admission.memo import Grown
from readmit.events import WITHDRAWING_OPS, Assert, Close, Evidence, Recorded, Revoke, Supersede
from readmit.model import Item


def observations(ctx: ReturnContext, news: bool = True) -> list[Later]:
    """The later observations of Δ that can change a premise, in epoch order.

    With ``news`` false, only those that withdrew state (whose withdrawn text is known):
    what a verifier that cannot judge news (`judges_news`) may be shown. A withdrawn
    item C lacks is quoted where the returning agent may read it (`unquoted.quoted`).

    Made once per tuples of C's items and Δ (not to be changed). A return at a later
    epoch gets both extended (`readmit.store.bodies.Departures`), and an event's
    observation depends only on the items before it and the item it withdrew, which
    no later item changes (an id names one item, forever): only the events that
    follow the part remembered are read.
    """
    left_out = quoted(ctx)
    if left_out:  # rare (an item left out as invalid, withdrawn since): not remembered
        items = (*ctx.items, *left_out)
        by_id = {**ctx.by_id, **{i.id: i for i in left_out}}
        return observations_of(ctx.delta, items, by_id, news)
    made = _MADE[news]
    known = made.found(ctx.items, ctx.delta)
    if known is not None:
        return known
    base = made.base(ctx.items, ctx.delta)
    start, laters = (0, []) if base is None else (base[0][1], base[1])
    laters = laters + observations_of(ctx.delta[start:], ctx.items, ctx.by_id, news)
    return made.put((ctx.items, ctx.delta), laters)


_MADE: dict[bool, Grown[list[Later]]] = {True: Grown(), False: Grown()}
"""`observations` of recent contexts' tuples of items and Δ, with and without news."""


def observations_of(
    events: Iterable[Recorded],
    items: Iterable[Item],
    by_id: Mapping[str, Item],
    news: bool = True,
) -> list[Later]:
    """``events`` as observations; ``items`` name same-key predecessors, ``by_id`` targets.

    With ``news`` false, only the withdrawals whose withdrawn text is known.
    """
    if news:
        events = list(events)
    else:  # only what can withdraw: a supersession, a revocation, a closing, a keyed assert
        events = [
            r
            for r in events
            if (op := r.event.op) in WITHDRAWING_OPS
            or (op == "assert" and isinstance(r.event, Assert) and r.event.item.key is not None)
        ]
    by_key = _same_key(events, items)
    if not news:  # an assert withdraws only where it replaced an item of its key
        events = [
            r for r in events if not isinstance(r.event, Assert) or r.event.item.key in by_key
        ]
    found: list[Later] = []
    for recorded in events:
        later = _observation(recorded, by_id, by_key)
        if later is not None and (news or later.withdrawn_text is not None):
            found.append(later)
        if by_key and recorded.event.op == "supersede":
            also = _key_held(recorded, by_key)
            if also is not None and (news or also.withdrawn_text is not None):
                found.append(also)
    return found


_SameKey = tuple[list[int], list[Item]]
"""Items sharing a key, oldest first, and their epochs."""


def _same_key(events: list[Recorded], items: Iterable[Item]) -> dict[str, _SameKey]:
    """Of ``items``, those sharing a key some of ``events`` asserts anew, by key."""
    asserted = {r.event.item.key for r in events if isinstance(r.event, Assert | Supersede)}
    asserted.discard(None)
    if not asserted:
        return {}
    grouped: dict[str, list[Item]] = {}
    for item in items:
        if item.key is not None and item.key in asserted:
            grouped.setdefault(item.key, []).append(item)
    for group in grouped.values():
        group.sort(key=lambda i: i.epoch)
    return {key: ([i.epoch for i in group], group) for key, group in grouped.items()}


def _observation(
    recorded: Recorded, by_id: Mapping[str, Item], by_key: dict[str, _SameKey]
) -> Later | None:
    event, epoch = recorded.event, recorded.epoch
    # Positional fields (see `Later`): Δ can hold thousands of events a return.
    match event:
        case Assert():
            item = event.item
            old = _predecessor(by_key.get(item.key or ""), epoch)
            if old is None:
                return Later(
                    event.id, epoch, event.op, item.text, None, None, item.id, item.text,
                    item.depends_on,
                )  # fmt: skip
            return Later(
                event.id, epoch, event.op, item.text, old.id, old.text, item.id, item.text,
                item.depends_on,
            )  # fmt: skip
        case Supersede():
            item = event.item
            old = by_id.get(event.target)
            return Later(
                event.id, epoch, event.op, item.text, event.target,
                old.text if old else None, item.id, item.text, item.depends_on,
            )  # fmt: skip
        case Revoke() | Close():
            old = by_id.get(event.target)
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
            return Later(event.id, epoch, event.op, event.text)
        case _:
            return None


def _key_held(recorded: Recorded, by_key: dict[str, _SameKey]) -> Later | None:
    """The other withdrawal of a keyed supersession: the item its key held, if not the target."""
    event = recorded.event
    if not isinstance(event, Supersede) or event.item.key is None:
        return None
    old = _predecessor(by_key.get(event.item.key), recorded.epoch)
    if old is None or old.id == event.target:
        return None
    item = event.item
    return Later(
        event.id, recorded.epoch, event.op, item.text, old.id, old.text, item.id, item.text,
        item.depends_on,
    )  # fmt: skip


def _predecessor(same_key: _SameKey | None, epoch: int) -> Item | None:
    """The newest of ``same_key`` recorded before ``epoch``."""
    if same_key is None:
        return None
    epochs, items = same_key
    before = bisect.bisect_left(epochs, epoch)
    return items[before - 1] if before else None
