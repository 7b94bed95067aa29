"""Δ as observations: each later event as the verifier reads it (`Later`).

An assert that replaced an item of the same key, a supersession, a revocation and
a closing withdrew state, and carry the withdrawn item's text (one observation for each
item withdrawn: a keyed item replaces every holder of its key its author may read, see
`readmit.admission.invalidation.holders`), and what replaced it, unless that holds for
fewer uses (`_replaced`); a new fact or a piece of evidence is news.
A verifier that cannot judge news is shown none
(`readmit.admission.invalidation.implicit.judges_news`), so for it no news is even built.
"""

from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType

from readmit.admission.context import ReturnContext, grown_base
from readmit.admission.invalidation.holders import Holders, SameKey
from readmit.admission.invalidation.implicit import Later, Readers
from readmit.admission.invalidation.narrowed import narrowed as narrowed_for
from readmit.admission.invalidation.propagation import premises_readable
from readmit.admission.invalidation.readers import fewer
from readmit.admission.invalidation.unquoted import quoted
from readmit.admission.memo import Grown
from readmit.events import (
    WITHDRAWING_OPS,
    Assert,
    Close,
    Evidence,
    Recorded,
    Revoke,
    Supersede,
    restates,
)
from readmit.model import Agent, Item


def observations(ctx: ReturnContext, news: bool = True) -> list[Later]:
    """The later observations of Δ that can change a premise, in epoch order.

    With ``news`` false, only those that withdrew state (whose withdrawn text is known):
    what a verifier that cannot judge news (`judges_news`) may be shown. An item D_a
    left out as no longer valid is quoted as if C held it (`ReturnContext.left_out`), and
    so is one it lacks that was held when it was taken (`quoted`).

    Made once per tuples of C's items and Δ (not to be changed). A return at a later
    epoch gets both extended (`readmit.store.bodies.Departures`), and an event's
    observation depends only on the items before it and the item it withdrew, which
    no later item changes (an id names one item, forever): only the events that
    follow the part remembered are read (never another reader's: `grown_base`).
    """
    made = _MADE[news, len(ctx.tuples), ctx.quote is not None]
    agents = tuple(ctx.agents.items())  # whom `_readers` and `Holders` let read what
    known = made.found(*ctx.tuples)
    if known is not None and known[0] == agents:
        return known[1]
    base = grown_base(made, ctx)
    start, laters = (base[0], base[1][1]) if base and base[1][0] == agents else (0, [])
    items, by_id = ctx.items, ctx.by_id
    if quotable := (*ctx.left_out, *quoted(ctx)):  # quoted as if C held them
        items, by_id = (*items, *quotable), {**by_id, **{i.id: i for i in quotable}}
    later = ctx.delta[start:]
    gone = _withdrawn(ctx.delta[:start]) if start and _keyed(later) else ()
    laters = laters + observations_of(later, items, by_id, news, ctx.agents, gone)
    return made.put(ctx.tuples, (agents, laters))[1]


_Agents = tuple[tuple[str, Agent], ...]


def _keyed(events: Iterable[Recorded]) -> bool:
    """Whether some of ``events`` brings a keyed item (which may replace another)."""
    return any(isinstance(r.event, Assert | Supersede) and r.event.item.key for r in events)


def _withdrawn(events: Iterable[Recorded]) -> set[str]:
    """The ids ``events`` revoked, closed or superseded."""
    return {
        r.event.target
        for r in events
        if r.event.op in WITHDRAWING_OPS and isinstance(r.event, Revoke | Close | Supersede)
    }


_MADE: dict[tuple[bool, int, bool], Grown[tuple[_Agents, list[Later]]]] = {
    (news, n, store): Grown() for news in (True, False) for n in (2, 3) for store in (True, False)
}
"""`observations` of recent contexts' tuples of items and Δ (and of what D_a left out,
when it left out anything), with and without news, and with and without a store to quote
from (a context `detached` from its store shares its tuples), each with the agents it was
made for: hand-built contexts may share tuples and differ in their agents."""


def observations_of(
    events: Iterable[Recorded],
    items: Iterable[Item],
    by_id: Mapping[str, Item],
    news: bool = True,
    agents: Mapping[str, Agent] = MappingProxyType({}),
    gone: Collection[str] = (),
) -> list[Later]:
    """``events`` as observations; ``items`` name same-key predecessors, ``by_id`` targets.

    With ``news`` false, only the withdrawals whose withdrawn text is known. A keyed item
    replaced each item of its key its author may read (``agents``: none known, any),
    one observation each; ``gone``: ids of ``items`` withdrawn before ``events``.
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
    holders = Holders(by_key, agents, gone) if by_key else None
    found: list[Later] = []
    for recorded in events:
        event = recorded.event
        if holders is not None:
            if isinstance(event, Revoke | Close | Supersede):
                holders.withdraw(by_id.get(event.target))
            if isinstance(event, Assert | Supersede) and event.item.key in by_key:
                replaced = _replacing(recorded, event, by_id, holders, agents)
                found += replaced if news else [x for x in replaced if x.withdrawn_text]
                continue
        later = _observation(recorded, by_id, agents)
        if later is None or not (news or later.withdrawn_text is not None):
            continue
        if news and isinstance(event, Supersede):
            found += _with_news([later], event, recorded.epoch)
        else:
            found.append(later)
    return found


def readable(
    later: Later,
    ctx: ReturnContext,
    earlier: Item,
    before: Mapping[str, Item] = MappingProxyType({}),
    logged: Mapping[str, Recorded] = MappingProxyType({}),
) -> bool:
    """Whether the returning agent may read what a verifier read with ``earlier``.

    The items ``later`` brought and withdrew, and ``earlier``'s premises
    (`premises_readable`): a verifier's wording may quote any of them. Evidence is read
    as its author's principal's alone (`readmit.store.writer`); an item only the store
    quotes (`quoted`) is another principal's. ``before`` and ``logged``: the items the
    log withdrew before the departure and its events there, by id (`History`), for an
    observation from there.
    """
    who = ctx.returner
    if not premises_readable(earlier, ctx):
        return False
    if later.op == "evidence" and ctx.agents:
        at = later.epoch - ctx.departure.epoch - 1  # Δ holds one event an epoch
        said = ctx.delta[at] if 0 <= at < len(ctx.delta) else logged.get(later.event_id)
        event = None if said is None else said.event
        if event is None or event.id != later.event_id:  # not known here
            return False
        return ctx.reads_evidence_of(event.author)
    for named in (later.withdrawn_id, later.replacement_id):
        if named is None:
            continue
        found = (
            ctx.by_id.get(named)
            or before.get(named)
            or next((i for i in ctx.left_out if i.id == named), None)
        )
        if found is None or not found.scope.readable_by(who.principal, who.role):
            return False
    return True


def _same_key(events: list[Recorded], items: Iterable[Item]) -> dict[str, SameKey]:
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
    recorded: Recorded, by_id: Mapping[str, Item], agents: Mapping[str, Agent]
) -> Later | None:
    """``recorded`` as an observation, but a keyed item that replaced items (`_replacing`)."""
    event, epoch = recorded.event, recorded.epoch
    # Positional fields (see `Later`): Δ can hold thousands of events a return.
    match event:
        case Assert():
            return _news(event, epoch)
        case Supersede():
            return _replaced(event, epoch, event.target, by_id, agents)
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


def _news(event: Assert | Supersede, epoch: int) -> Later:
    """``event``'s item as news."""
    item = event.item
    return Later(
        event.id, epoch, event.op, item.text, None, None, item.id, item.text, item.depends_on,
        None, item.validity.valid_to,
    )  # fmt: skip


def _replacing(
    recorded: Recorded,
    event: Assert | Supersede,
    by_id: Mapping[str, Item],
    holders: Holders,
    agents: Mapping[str, Agent],
) -> list[Later]:
    """A keyed item's observations: one for each item it replaced or superseded.

    Having withdrawn none, it is news.
    """
    epoch, item = recorded.epoch, event.item

    withdrawn = holders.replace(event, epoch, by_id.get(item.id))
    laters = []
    if isinstance(event, Supersede):
        laters.append(_replaced(event, epoch, event.target, by_id, agents))
        withdrawn = [held for held in withdrawn if held.id != event.target]
    elif not withdrawn:
        return [_replaced(event, epoch, None, by_id, agents)]
    laters += [_replaced(event, epoch, held.id, by_id, agents, held) for held in withdrawn]
    return _with_news(laters, event, epoch)


def _with_news(laters: list[Later], event: Assert | Supersede, epoch: int) -> list[Later]:
    """``laters``, and ``event``'s item as news where none of them shows it in its place.

    A replacement for fewer uses is shown as a withdrawal (`_replaced`), which an item
    older than what it withdrew cannot rest on; what the new item says is still news to it
    ("the pool is closed until tonight", filed again by its key, to a swim at nine). The
    news comes first: a verdict both confirm rests on the new item, whose withdrawal
    restores it, not on a statement no one may state again.
    """
    if any(later.replacement_text is not None for later in laters):
        return laters
    return [_news(event, epoch), *laters]


def _replaced(
    event: Assert | Supersede,
    epoch: int,
    withdrawn_id: str | None,
    by_id: Mapping[str, Item],
    agents: Mapping[str, Agent],
    withdrawn: Item | None = None,
) -> Later:
    """``event``'s observation as what replaced ``withdrawn_id`` (none: news).

    An item that states the withdrawn text again, word for word, but for fewer uses than
    the withdrawn item held it for (`_holds_as`) replaces the statement for none of the
    others: the verifier is shown the withdrawal, and where the words still hold, as a
    restatement of that kind restores no premise (`readmit.store.verdicts`). One for fewer
    readers is news filed again to an item whose readers of the first may all read it, and a
    withdrawal to the others (`readmit.admission.invalidation.readers`).
    One in other words that holds for fewer uses (`narrowed`) is shown as a withdrawal
    too, with what replaced it, and where (a booking "confirmed until Friday" in the place
    of one with no end kept a pickup that rested on it after Friday, when nothing stated
    the booking any more). Either way the new item is news as well (`_with_news`).
    """
    item = event.item
    old = withdrawn or (by_id.get(withdrawn_id) if withdrawn_id is not None else None)
    readers = None if old is None else _readers(event, by_id, agents)
    narrowed = None if old is None else narrowed_for(event, old)
    if old is not None and (
        not _holds_as(event, narrowed, readers) if item.text == old.text else narrowed
    ):
        where = f" (in its place, {narrowed}: {item.text})" if narrowed else ""
        text = f"No longer valid: {old.text}{where}"
        return Later(
            event.id, epoch, event.op, text, withdrawn_id, old.text, item.id, None,
            item.depends_on, None, item.validity.valid_to, old.validity.valid_to,
        )  # fmt: skip
    if withdrawn_id is None:
        return _news(event, epoch)
    return Later(
        event.id, epoch, event.op, item.text, withdrawn_id, old.text if old else None, item.id,
        item.text, item.depends_on, fewer(old.scope, readers) if old and readers else None,
        item.validity.valid_to, old.validity.valid_to if old else None,
    )  # fmt: skip


def _holds_as(event: Assert | Supersede, narrowed: str | None, readers: Readers | None) -> bool:
    """Whether ``event``'s item holds the text it replaced for every use and time it did.

    For every use when it `restates` (no bound, no premise, not hearsay), or wherever the
    replaced item held when it is bounded no tighter (``narrowed`` is ``None``: a copy of
    a booking that ends on Friday, or one that ends later). Its readers (``readers``,
    `_readers`) may be fewer: then it stands in only for an item whose readers of the
    replaced one may all read it (`readmit.admission.invalidation.readers`). Readers
    unknown (no author known, nor the item loaded): it holds for nobody, failing closed.
    """
    return readers is not None and (restates(event) or narrowed is None)


def _readers(
    event: Assert | Supersede, by_id: Mapping[str, Item], agents: Mapping[str, Agent]
) -> Readers | None:
    """Who may read ``event``'s item: from the event, else from the item if loaded."""
    draft = event.item
    author, new = agents.get(event.author), by_id.get(draft.id)
    if draft.principals is not None or author is not None:
        return draft.readers(author.principal if author else None)
    return None if new is None else (new.scope.principals, new.scope.roles)


def distinct(laters: Sequence[Later]) -> list[Later]:
    """``laters`` with one observation per text a verifier reads, the earliest of each.

    A verifier sees an observation's words (its op, text, and what it withdrew or
    brought), not its id or epoch, so observations that say the same thing (four
    teammates asserting the same answer) get one verdict: judging each again would
    spend a call, and an LLM's tokens, for nothing. The earliest is kept, as the
    evidence a confirmed invalidation cites, in the place of the first. Whoever returns:
    a verdict binds every agent, and its evidence must not depend on who judged it (a
    review's finding, stop 59, against keeping one the returning agent may read).
    """
    kept: dict[tuple[str | None, ...], Later] = {}
    for later in laters:
        seen = (
            later.op,
            later.text,
            later.withdrawn_id,
            later.withdrawn_text,
            later.replacement_text,
        )
        if seen not in kept or later.epoch < kept[seen].epoch:
            kept[seen] = later
    return list(kept.values())
