"""Lifecycle links: which later event or item withdraws an earlier item, and why.

The rules of explicit invalidation (`readmit.admission.invalidation.explicit`): revoke,
supersede and close links from Δ's events, a close only once in force at the return's time
(`event_links`); and same-key replacements among the items, by an author who may read what
it replaces (`same_key_replacements`).
"""

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from itertools import compress
from operator import attrgetter

from readmit.admission.context import ReturnContext
from readmit.admission.memo import Grown, keep
from readmit.events import WITHDRAWING_OPS, Close, Recorded, Revoke, Supersede
from readmit.model import Agent, Item
from readmit.reasons import Exclusion, Reason, Stage

_EPOCH = attrgetter("epoch")

Link = tuple[Reason, tuple[str, ...], str]


class Exclusions(dict[tuple[str, Link], Exclusion]):
    """The exclusion of an item for a link, made on first use.

    A link stays in Δ from one return to the next, and an exclusion is an immutable
    value: each return after the first gets the same one, and the view's JSON of it is
    remembered with it (`readmit.admission.view`).
    """

    LIMIT = 1 << 17

    def __missing__(self, key: tuple[str, Link]) -> Exclusion:
        item, (reason, evidence, detail) = key
        made = Exclusion(
            item=item, reason=reason, stage=Stage.EXPLICIT, evidence=evidence, detail=detail
        )
        return keep(self, key, made, self.LIMIT)


EXCLUSIONS = Exclusions()


def event_links(
    delta: Iterable[Recorded], at: datetime, found: dict[str, Link] | None = None
) -> dict[str, Link]:
    """The first revoke, supersede or close link in ``delta`` for each target.

    A close links only if in force at ``at``. Given the links ``found`` in the events
    before ``delta``, it reads on from them.
    """
    found = {} if found is None else found
    for recorded in delta:
        event = recorded.event
        if event.op not in WITHDRAWING_OPS:  # by tag first: most of Δ asserts
            continue
        match event:
            case Revoke():
                link: Link = (Reason.REVOKED, (event.id,), f"revoked: {event.why}")
            case Supersede():
                link = (
                    Reason.STALE_OR_SUPERSEDED,
                    (event.id, event.item.id),
                    f"superseded by {event.item.id}",
                )
            case Close() if event.at <= at:
                link = (Reason.EXPIRED, (event.id,), "validity closed")
            case _:
                continue
        if event.target not in found or link[0] is Reason.REVOKED:
            found[event.target] = link
    return found


def same_key_replacements(ctx: ReturnContext, pool: Sequence[Item]) -> dict[str, Link]:
    """Items of ``pool`` a later item with the same key replaced, with what replaced it.

    Only a sourced item replaces: hearsay (no receipt) cannot retire recorded state. And
    only one whose author may read the earlier item: a key cannot reach across principals.
    The evidence is the first such item, the one the writer replaced the earlier with
    (`readmit.store.writer`). Until stop 59 it was the newest, so an item of another
    principal that came after, and replaced nothing (the earlier one gone), was named
    there, hidden from the agent: its missing evidence told that such an item held the key.
    The store's items include everything ever replaced; only those this return could admit
    (the pool's) are looked into.
    """
    groups = shared_keys(ctx.items)
    found: dict[str, Link] = {}
    wanted = ids_unless_all(pool, ctx.items) if groups else None
    for key, group in groups.items():
        asked = group if wanted is None else [item for item in group if item.id in wanted]
        if asked:
            found.update(group_replacements(ctx, key, group, asked))
    return found


def group_replacements(
    ctx: ReturnContext, key: str, group: list[Item], asked: Iterable[Item]
) -> dict[str, Link]:
    """`same_key_replacements` of the ``asked`` items of ``key``'s ``group``."""
    found: dict[str, Link] = {}
    sourced = sorted((m for m in group if m.receipt is not None), key=_EPOCH)
    for item in asked:
        first = _first_replacement(ctx, item, sourced)
        if first is not None and first.receipt is not None:
            found[item.id] = (
                Reason.STALE_OR_SUPERSEDED,
                (first.receipt.event_id, first.id),
                f"replaced by {first.id} (same key {key!r})",
            )
    return found


def shared_keys(items: tuple[Item, ...]) -> dict[str, list[Item]]:
    """The items of each key that two or more of ``items`` hold, in ``items``' order.

    Counted in C over every item's key; only the few items of a shared key are visited.
    Made once per tuple: a return at a later epoch gets an earlier return's tuple
    extended (`readmit.store.bodies.Departures`), and only the items that follow the
    part remembered are looked into.
    """
    known = _KEYS.found(items)
    if known is not None:
        return known[1]
    base = _KEYS.base(items)
    if base is not None:
        (n,), (first, groups) = base
        first, groups = dict(first), {k: list(group) for k, group in groups.items()}
        for item in items[n:]:
            key = item.key
            if key is None:
                continue
            if key in groups:
                groups[key].append(item)
            elif key in first:
                groups[key] = [first[key], item]
            else:
                first[key] = item
        return _KEYS.put((items,), (first, groups))[1]
    keys = list(map(_KEY, items))
    if keys.count(None) == len(keys):  # in C; no key at all is common (Memora's items)
        return _KEYS.put((items,), ({}, {}))[1]
    shared = {key for key, n in Counter(keys).items() if n > 1 and key is not None}
    groups = {}
    for item in compress(items, map(shared.__contains__, keys)):
        groups.setdefault(item.key, []).append(item)  # type: ignore[arg-type]
    first = dict(zip(reversed(keys), reversed(items), strict=True))  # in C: earliest first
    first.pop(None, None)  # type: ignore[call-overload]
    return _KEYS.put((items,), (first, groups))[1]


_KEYS: Grown[tuple[dict[str, Item], dict[str, list[Item]]]] = Grown()
"""`shared_keys` of recent item tuples, with the first item of every key they hold."""


_ID, _KEY = attrgetter("id"), attrgetter("key")


def ids_unless_all(pool: Sequence[Item], items: tuple[Item, ...]) -> set[str] | None:
    """The ids of ``pool``, or ``None`` when it starts with every item of C.

    A return's pool does (`readmit.admission.capture`): comparing the objects in C costs
    a tenth of collecting 100k ids.
    """
    if tuple(pool[: len(items)]) == items:
        return None
    return {item.id for item in pool}


def _first_replacement(ctx: ReturnContext, item: Item, oldest_first: Sequence[Item]) -> Item | None:
    """The first of ``oldest_first`` (``item``'s key group) after it that may replace it."""
    start = bisect_right(oldest_first, item.epoch, key=_EPOCH)
    return next((m for m in oldest_first[start:] if may_replace(ctx.agents, m.author, item)), None)


def may_replace(agents: Mapping[str, Agent], author: str, earlier: Item) -> bool:
    """Whether a keyed item ``author`` wrote replaces ``earlier`` (it must read it).

    With no ``agents`` known, every author may.
    """
    if not agents:
        return True
    found = agents.get(author)
    return found is not None and earlier.scope.readable_by(found.principal, found.role)
