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
from types import MappingProxyType

from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.links import may_replace
from readmit.admission.memo import Grown
from readmit.events import WITHDRAWING_OPS, Assert, Close, Evidence, Recorded, Revoke, Supersede
from readmit.model import Agent, Item


def observations(ctx: ReturnContext, news: bool = True) -> list[Later]:
    """The later observations of Δ that can change a premise, in epoch order.

    With ``news`` false, only those that withdrew state (whose withdrawn text is known):
    what a verifier that cannot judge news (`judges_news`) may be shown. An item D_a
    left out as no longer valid is quoted as if C held it (`ReturnContext.left_out`).

    Made once per tuples of C's items and Δ (not to be changed). A return at a later
    epoch gets both extended (`readmit.store.bodies.Departures`), and an event's
    observation depends only on the items before it and the item it withdrew, which
    no later item changes (an id names one item, forever): only the events that
    follow the part remembered are read.
    """
    if ctx.left_out:  # quoted too (rare: not remembered)
        items = (*ctx.items, *ctx.left_out)
        by_id = {**ctx.by_id, **{i.id: i for i in ctx.left_out}}
        return observations_of(ctx.delta, items, by_id, news, ctx.agents)
    made = _MADE[news]
    known = made.found(ctx.items, ctx.delta)
    if known is not None:
        return known
    base = made.base(ctx.items, ctx.delta)
    start, laters = (0, []) if base is None else (base[0][1], base[1])
    laters = laters + observations_of(ctx.delta[start:], ctx.items, ctx.by_id, news, ctx.agents)
    return made.put((ctx.items, ctx.delta), laters)


_MADE: dict[bool, Grown[list[Later]]] = {True: Grown(), False: Grown()}
"""`observations` of recent contexts' tuples of items and Δ, with and without news."""


def observations_of(
    events: Iterable[Recorded],
    items: Iterable[Item],
    by_id: Mapping[str, Item],
    news: bool = True,
    agents: Mapping[str, Agent] = MappingProxyType({}),
) -> list[Later]:
    """``events`` as observations; ``items`` name same-key predecessors, ``by_id`` targets.

    With ``news`` false, only the withdrawals whose withdrawn text is known. A keyed item
    replaced each item of its key its author may read (``agents``: none known, any),
    one observation each.
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
        event = recorded.event
        if by_key and isinstance(event, Assert | Supersede) and event.item.key in by_key:
            replaced = _replacing(recorded, event, by_id, by_key[event.item.key], agents)
            found += replaced if news else [x for x in replaced if x.withdrawn_text is not None]
            continue
        later = _observation(recorded, by_id)
        if later is not None and (news or later.withdrawn_text is not None):
            found.append(later)
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


def _observation(recorded: Recorded, by_id: Mapping[str, Item]) -> Later | None:
    """``recorded`` as an observation, but a keyed item that replaced items (`_replacing`)."""
    event, epoch = recorded.event, recorded.epoch
    # Positional fields (see `Later`): Δ can hold thousands of events a return.
    match event:
        case Assert():
            item = event.item
            return Later(
                event.id, epoch, event.op, item.text, None, None, item.id, item.text,
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


def _replacing(
    recorded: Recorded,
    event: Assert | Supersede,
    by_id: Mapping[str, Item],
    same_key: _SameKey,
    agents: Mapping[str, Agent],
) -> list[Later]:
    """A keyed item's observations: one for each item it replaced or superseded.

    Having withdrawn none, it is news.
    """
    epoch, item = recorded.epoch, event.item

    def later(withdrawn_id: str | None, withdrawn_text: str | None) -> Later:
        return Later(
            event.id, epoch, event.op, item.text, withdrawn_id, withdrawn_text, item.id,
            item.text, item.depends_on,
        )  # fmt: skip

    withdrawn = _replaced(event, epoch, same_key, agents)
    laters = []
    if isinstance(event, Supersede):
        target = by_id.get(event.target)
        laters.append(later(event.target, target.text if target else None))
        withdrawn = [held for held in withdrawn if held.id != event.target]
    elif not withdrawn:
        return [later(None, None)]
    return laters + [later(held.id, held.text) for held in withdrawn]


def _replaced(
    event: Assert | Supersede, epoch: int, same_key: _SameKey, agents: Mapping[str, Agent]
) -> list[Item]:
    """The items of ``same_key`` ``event``'s keyed item replaced, newest first.

    As the writer does (`readmit.store.writer`): each still held the key (no confirmed
    item of the key between them replaced it) and the event's author may read it; hearsay
    (``unconfirmed``) replaces nothing.
    """
    if event.item.unconfirmed:
        return []
    epochs, group = same_key
    replaced: list[Item] = []
    newer: list[Item] = []  # confirmed items of the key after the one looked at
    for held in reversed(group[: bisect.bisect_left(epochs, epoch)]):
        held_then = not any(may_replace(agents, n.author, held) for n in newer)
        if held_then and may_replace(agents, event.author, held):
            replaced.append(held)
        if held.receipt is not None:
            newer.append(held)
    return replaced
