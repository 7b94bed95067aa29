"""Explicit invalidation: lifecycle evidence recorded in Δ (TRACE §3.2).

Rules, in order of precedence for one item:

- *revocation*: a ``revoke`` event targets it → ``revoked``;
- *supersession*: a ``supersede`` event targets it → ``stale_or_superseded``;
- *same-key replacement*: an item with the same ``key`` and a later epoch was
  asserted → ``stale_or_superseded`` (epochs order replacements: an item is
  only ever replaced by one recorded after it);
- *closed validity*: a ``close`` event ended its validity at or before the
  return time → ``expired``.

An item's own validity interval is checked by the temporal gate.
"""

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from itertools import compress
from operator import attrgetter, not_

from readmit.admission.context import ReturnContext
from readmit.admission.memo import Grown, keep
from readmit.events import WITHDRAWING_OPS, Close, Recorded, Revoke, Supersede
from readmit.model import Agent, Item
from readmit.reasons import Exclusion, Reason, Stage


def resolve_explicit(
    pool: Iterable[Item], ctx: ReturnContext
) -> tuple[list[Item], list[Exclusion]]:
    """Split ``pool`` into items no lifecycle link touches and the exclusions of the rest."""
    pool = list(pool)
    if _ids_unless_all(pool, ctx.items) is not None:
        return _resolved(pool, _links(ctx), _same_key_replacements(ctx, pool))
    # The pool is C's items, then the obligations' (what `capture` makes): C's part is
    # split as at the last return with the same items, Δ, agents and closings in force.
    n = len(ctx.items)
    links, replaced, kept, excluded = _of_items(ctx)
    tail_kept, tail_excluded = _resolved(pool[n:], links, replaced)
    return [*kept, *tail_kept], [*excluded, *tail_excluded]


_Split = tuple[dict[str, "_Link"], dict[str, "_Link"], list[Item], list[Exclusion]]


def _resolved(
    pool: list[Item], links: dict[str, "_Link"], replaced: dict[str, "_Link"]
) -> tuple[list[Item], list[Exclusion]]:
    """``pool`` split by ``links`` and same-key ``replaced`` items."""
    if not links and not replaced:
        return pool, []
    touched = links.keys() | replaced.keys()
    # One pass in C over the ids: most of a large pool is untouched.
    marks = list(map(touched.__contains__, map(_ID, pool)))
    kept = list(compress(pool, map(not_, marks)))
    hit = compress(pool, marks)
    excluded = [_EXCLUSIONS[item.id, links.get(item.id) or replaced[item.id]] for item in hit]
    return kept, excluded


def _of_items(ctx: ReturnContext) -> _Split:
    """`_resolved` of C's items, with its links, made once per inputs.

    The split is a function of C's items, Δ, the agents (who may replace what) and which
    of Δ's closings are in force at the return's time. A store hands every return at one
    epoch the same tuples of items and of Δ (`readmit.store.bodies.Departures`).
    """
    closings = _closings(ctx.delta)
    in_force = bisect_right(closings, ctx.returner.at)
    key = (id(ctx.items), id(ctx.delta), frozenset(ctx.agents.items()), in_force)
    known = _SPLITS.get(key)
    if known is not None and known[0] is ctx.items and known[1] is ctx.delta:
        return known[2]
    items = list(ctx.items)
    links = _links(ctx)
    replaced = _same_key_replacements(ctx, items)
    made: _Split = (links, replaced, *_resolved(items, links, replaced))
    return keep(_SPLITS, key, (ctx.items, ctx.delta, made), 4)[2]


_SPLITS: dict[
    tuple[int, int, frozenset[tuple[str, Agent]], int],
    tuple[tuple[Item, ...], tuple[Recorded, ...], _Split],
] = {}
"""`_of_items` of recent contexts, by the identity of their items and Δ (kept with it)."""


def _closings(delta: tuple[Recorded, ...]) -> list[datetime]:
    """The times of Δ's closings, in order (the log's times never go backwards)."""
    known = _CLOSINGS.get(id(delta))
    if known is not None and known[0] is delta:
        return known[1]
    times = sorted(r.event.at for r in delta if isinstance(r.event, Close))
    return keep(_CLOSINGS, id(delta), (delta, times), 4)[1]


_CLOSINGS: dict[int, tuple[tuple[Recorded, ...], list[datetime]]] = {}


_Link = tuple[Reason, tuple[str, ...], str]


class _Exclusions(dict[tuple[str, _Link], Exclusion]):
    """The exclusion of an item for a link, made on first use.

    A link stays in Δ from one return to the next, and an exclusion is an immutable
    value: each return after the first gets the same one, and the view's JSON of it is
    remembered with it (`readmit.admission.view`).
    """

    LIMIT = 1 << 17

    def __missing__(self, key: tuple[str, _Link]) -> Exclusion:
        item, (reason, evidence, detail) = key
        made = Exclusion(
            item=item, reason=reason, stage=Stage.EXPLICIT, evidence=evidence, detail=detail
        )
        return keep(self, key, made, self.LIMIT)


_EXCLUSIONS = _Exclusions()


def _links(ctx: ReturnContext) -> dict[str, _Link]:
    """The first revoke, supersede or close link recorded in Δ for each target."""
    found: dict[str, _Link] = {}
    for recorded in ctx.delta:
        event = recorded.event
        if event.op not in WITHDRAWING_OPS:  # by tag first: most of Δ asserts
            continue
        match event:
            case Revoke():
                link: _Link = (Reason.REVOKED, (event.id,), f"revoked: {event.why}")
            case Supersede():
                link = (
                    Reason.STALE_OR_SUPERSEDED,
                    (event.id, event.item.id),
                    f"superseded by {event.item.id}",
                )
            case Close() if event.at <= ctx.returner.at:
                link = (Reason.EXPIRED, (event.id,), "validity closed")
            case _:
                continue
        if event.target not in found or link[0] is Reason.REVOKED:
            found[event.target] = link
    return found


def _same_key_replacements(ctx: ReturnContext, pool: Sequence[Item]) -> dict[str, _Link]:
    """Items of ``pool`` a later item with the same key replaced, newest replacement as evidence.

    Only a sourced item replaces: hearsay (no receipt) cannot retire recorded state. And
    only one whose author may read the earlier item: a key cannot reach across principals.
    The store's items include everything ever replaced; only those this return could admit
    (the pool's) are looked into.
    """
    groups = _shared_keys(ctx.items)
    found: dict[str, _Link] = {}
    wanted = _ids_unless_all(pool, ctx.items) if groups else None
    for key, group in groups.items():
        asked = group if wanted is None else [item for item in group if item.id in wanted]
        if not asked:
            continue
        sourced = sorted(
            (m for m in group if m.receipt is not None), key=lambda m: m.epoch, reverse=True
        )
        for item in asked:
            latest = _latest_replacement(ctx, item, sourced)
            if latest is not None and latest.receipt is not None:
                found[item.id] = (
                    Reason.STALE_OR_SUPERSEDED,
                    (latest.receipt.event_id, latest.id),
                    f"replaced by {latest.id} (same key {key!r})",
                )
    return found


def _shared_keys(items: tuple[Item, ...]) -> dict[str, list[Item]]:
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
    shared = {key for key, n in Counter(keys).items() if n > 1 and key is not None}
    groups = {}
    for item in compress(items, map(shared.__contains__, keys)):
        groups.setdefault(item.key, []).append(item)  # type: ignore[arg-type]
    first = dict(zip(reversed(keys), reversed(items), strict=True))  # in C: earliest first
    first.pop(None, None)  # type: ignore[call-overload]
    return _KEYS.put((items,), (first, groups))[1]


_KEYS: Grown[tuple[dict[str, Item], dict[str, list[Item]]]] = Grown()
"""`_shared_keys` of recent item tuples, with the first item of every key they hold."""


_ID, _KEY = attrgetter("id"), attrgetter("key")


def _ids_unless_all(pool: Sequence[Item], items: tuple[Item, ...]) -> set[str] | None:
    """The ids of ``pool``, or ``None`` when it starts with every item of C.

    A return's pool does (`readmit.admission.capture`): comparing the objects in C costs
    a tenth of collecting 100k ids.
    """
    if tuple(pool[: len(items)]) == items:
        return None
    return {item.id for item in pool}


def _latest_replacement(
    ctx: ReturnContext, item: Item, newest_first: Sequence[Item]
) -> Item | None:
    """The newest of ``newest_first`` (``item``'s key group) after it that may replace it."""
    for later in newest_first:
        if later.epoch <= item.epoch:
            return None
        if _may_replace(ctx, later, item):
            return later
    return None


def _may_replace(ctx: ReturnContext, later: Item, earlier: Item) -> bool:
    author = ctx.agents.get(later.author)
    if not ctx.agents:
        return True
    return author is not None and earlier.scope.readable_by(author.principal, author.role)
