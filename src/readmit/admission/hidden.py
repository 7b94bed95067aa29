"""What a returning agent may not see of its return: ids, and the details that name them.

An item it may not read is never named to it, nor the event that stated it, nor one that
withdrew it or replaced it by its key, nor a premise outside its context it may not read;
an exclusion whose evidence names one is shown without it and without its detail
(docs/security.md). So is an exclusion citing an event from before the departure that no
item of C came from, unless the store tells it is about only what the agent may read.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from readmit.admission.context import ReturnContext, events_by_id, receipt_events
from readmit.admission.invalidation.observations import observations
from readmit.admission.invalidation.unquoted import quoted
from readmit.admission.memo import Grown, Passes
from readmit.events import Assert, Close, Evidence, Revoke, Supersede
from readmit.model import Item, Scope
from readmit.reasons import Exclusion, Reason, Stage


def hidden_ids(ctx: ReturnContext, exclusions: Sequence[Exclusion]) -> frozenset[str]:
    """Ids the returning agent may not see: what is hidden of items it may not read.

    The excluded items it may not read and the events that stated them; the events in
    Δ about an item it may not read (`_unreadable`: their ids are a teammate's free
    text); the premises outside its context it may not read. Whatever excluded an item:
    one revoked, replaced or fallen with its premise leaves before the authorization gate
    would have named it ``unauthorized``, and is no more the agent's to know of. An item
    the context does not hold is hidden (fail closed). Remembered for the last few
    returns: a return's view and its decision record ask about the same exclusions. What
    it reads of the context is the returner, the id index and Δ (immutable, kept with
    the answer so that their ids are not reused), and whether it has a store to ask.
    """
    inputs = (ctx.returner, id(ctx.by_id), id(ctx.delta), ctx.quote is None, ctx.named is None)
    known = _HIDDEN.get(exclusions, inputs)
    if known is None:
        held = (ctx.by_id, ctx.delta)
        known = _HIDDEN.put(exclusions, inputs, held, _hidden_ids(ctx, exclusions))
    return known


_HIDDEN: Passes[frozenset[str]] = Passes()


def _hidden_ids(ctx: ReturnContext, exclusions: Sequence[Exclusion]) -> frozenset[str]:
    who = ctx.returner
    readable: dict[int, tuple[Scope, bool]] = {}  # items of one store share their scopes

    def hidden(item: Item | None) -> bool:
        if item is None:
            return True
        known = readable.get(id(item.scope))
        if known is None:
            known = readable[id(item.scope)] = (
                item.scope,  # kept, so its id is not reused while this runs
                item.scope.readable_by(who.principal, who.role),
            )
        return not known[1]

    items = {e.item for e in exclusions if hidden(ctx.by_id.get(e.item))}
    events = {r.event_id for i in items if (m := ctx.by_id.get(i)) is not None and (r := m.receipt)}
    premises = {p for p, o in ctx.outside.items() if not o.readable}
    cited = _cited(ctx, exclusions, hidden)
    return frozenset(items | events | premises | cited | _unreadable(ctx, hidden))


def _cited(
    ctx: ReturnContext, exclusions: Sequence[Exclusion], hidden: Callable[[Item | None], bool]
) -> set[str]:
    """The events the screener's exclusions cite that the agent may not be told of.

    Evidence another principal's agent recorded in Δ (read as that principal's alone,
    `readmit.store.writer`; Δ's events about what it may not read are `_unreadable`'s);
    one from before the departure that the store does not tell to be about only what
    the agent may read (`ReturnContext.named`; without it, one no item of C came from).
    """
    cited = {x for e in exclusions if e.stage is Stage.IMPLICIT for x in e.evidence}
    if not cited:
        return set()
    in_delta = events_by_id(ctx.delta)
    found = {
        x
        for x in cited
        if (r := in_delta.get(x)) is not None
        and isinstance(r.event, Evidence)
        and not ctx.reads_evidence_of(r.event.author)
    }
    # Item ids are no events (tested one by one: a set less C's keys copies C's 100k ids).
    known = (in_delta, ctx.by_id, ctx.outside)
    if before := {x for x in cited if not any(x in held for held in known)}:
        if ctx.named is None:  # as a standing verdict's evidence: C's receipts only
            found |= before - receipt_events(ctx.items)
        else:  # a receipt of C's too: its key may have replaced what the agent may not read
            found |= before - _about_readable(ctx, before, hidden)
    return found


def _about_readable(
    ctx: ReturnContext, events: set[str], hidden: Callable[[Item | None], bool]
) -> set[str]:
    """Of ``events`` (ids from before the departure), those about what the agent may read.

    An assert, a supersession, a revocation or a closing all of whose items it may read
    (what it stated or withdrew, and what its key replaced), or evidence it may read; as
    the store tells (`ReturnContext.named`; none without it). Whatever else is hidden.
    """
    if not events or ctx.named is None:
        return set()
    shown = set()
    for event_id, (r, about) in ctx.named(sorted(events)).items():
        if isinstance(r.event, Evidence):
            readable = ctx.reads_evidence_of(r.event.author)
        else:
            readable = bool(about) and not any(map(hidden, about))
        if readable:
            shown.add(event_id)
    return shown


def _unreadable(ctx: ReturnContext, hidden: Callable[[Item | None], bool]) -> frozenset[str]:
    """The events of Δ about an item the returner may not read.

    One that stated or withdrew such an item, or whose key replaced one (as the writer
    does: `observations` quote each item a keyed item replaced, the store's quote among
    them). A teammate names such an event freely: its id may tell what it withdrew, and
    hearsay has no receipt to hide it by. Remembered per Δ (the store hands returns at one
    epoch the same tuple) and reader, and grown from a shorter Δ's (a later epoch's
    extends it): an event's answer depends on the items before it, which an id names
    forever (made whole, 10k events took 6 ms at every next return).
    """
    # A context `detached` from its store shares Δ, and quotes nothing: kept apart.
    reader = (ctx.returner.principal, ctx.returner.role, ctx.departure.digest, ctx.quote is None)
    delta = ctx.delta
    known = _UNREADABLE.found(delta)
    if known is not None and reader in known:
        return known[reader]
    base = _UNREADABLE.base(delta)
    start, was = (0, frozenset[str]())
    if base is not None and reader in base[1]:
        start, was = base[0][0], base[1][reader]
    made, find, keyed = set(was), ctx.by_id.get, False
    for r in delta[start:]:
        event = r.event
        if isinstance(event, Revoke | Close | Supersede) and hidden(find(event.target)):
            made.add(event.id)
        if isinstance(event, Assert | Supersede):
            keyed |= event.item.key is not None
            if hidden(find(event.item.id)):
                made.add(event.id)
    if keyed:  # what keyed items replaced: each is one observation with its id
        after = ctx.departure.epoch + 1 + start  # Δ holds one event an epoch
        quotable = {i.id: i for i in (*ctx.left_out, *quoted(ctx))}
        made.update(
            later.event_id
            for later in observations(ctx, news=False)
            if later.epoch >= after
            and later.withdrawn_id is not None
            and hidden(find(later.withdrawn_id) or quotable.get(later.withdrawn_id))
        )
    _UNREADABLE.put((delta,), {**(known or {}), reader: frozenset(made)})
    return frozenset(made)


_UNREADABLE: Grown[dict[tuple[str, str, str, bool], frozenset[str]]] = Grown()
"""`_unreadable` of recent Δs, by reader: principal, role, the departure (C), and whether
the context quotes nothing."""


RULE = 3
"""The rule `without` redacts by: 3 since stop 59 (an exclusion's `Exclusion.sighted`
events named, an ``unscreened`` one's reason kept, a confidence left out with the
detail), 2 since stop 58 (an item replaced by one the agent may read shown whole), 1
before. A view is rebuilt by the rule it was signed under (`readmit.store.audit.restored`)."""


def redact(
    excluded: Sequence[Mapping[str, Any]], hidden: frozenset[str], rule: int = RULE
) -> list[dict[str, Any]]:
    """The exclusions (in wire form) the agent may see, with hidden ids removed from evidence.

    ``not_selected`` items are left out: they are valid, just not needed, and
    the audit log keeps them. The view tells the agent what went stale. ``rule``: as
    `without`.
    """
    visible = []
    for e in excluded:
        if not seen_by_agent(e, hidden):
            continue
        if hidden.isdisjoint(e["evidence"]):
            visible.append({**e, "evidence": list(e["evidence"])})
        else:
            visible.append(without(dict(e), hidden, rule))
    return visible


def seen_by_agent(e: Mapping[str, Any], hidden: frozenset[str]) -> bool:
    """Whether `redact` shows exclusion ``e``: one the agent may see, not ``not_selected``."""
    return e["item"] not in hidden and e["reason"] != Reason.NOT_SELECTED


def without(shown: dict[str, Any], hidden: frozenset[str], rule: int = RULE) -> dict[str, Any]:
    """``shown`` (a fresh wire exclusion) without the hidden ids its evidence names.

    An item replaced (by its key or a supersession) by one the agent may read is shown
    whole, the event with it: that event may be hidden as about another item, one the
    agent may not read that its key replaced too, but it replaced this one, in the
    agent's sight. Hiding it there told the agent that an item it may not read held the
    key (a review's finding, stop 58). So are the events whose observation a verifier read
    with the item the agent may read whole (``sighted``, `Exclusion.sighted`): hiding one
    told that it also withdrew what the agent may not read. Else the detail goes with a
    hidden id (it may name it), and the verifier's confidence with it, but an
    ``unscreened`` item's detail, which names nothing
    (`readmit.admission.invalidation.implicit.SPENT`). ``rule``: the rules before (`RULE`),
    by which views signed then are rebuilt.
    """
    evidence, sighted = shown["evidence"], shown.pop("sighted", ())
    replaced = rule >= 2 and shown["reason"] == Reason.STALE_OR_SUPERSEDED and len(evidence) == 2
    if replaced and evidence[1] not in hidden:  # (the event, the item that replaced this one)
        shown["evidence"] = list(evidence)
        return shown
    named = sighted if rule >= 3 else ()
    shown["evidence"] = [x for x in evidence if x not in hidden or x in named]
    said = rule >= 3 and shown["reason"] == Reason.UNSCREENED
    if len(shown["evidence"]) < len(evidence) and not said:
        shown.pop("detail", None)  # the detail may name what was hidden
        if rule >= 3:  # a model's confidence tells of the words it read (a review, stop 59)
            shown.pop("confidence", None)
    return shown
