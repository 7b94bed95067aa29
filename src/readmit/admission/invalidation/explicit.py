"""Explicit invalidation: lifecycle evidence recorded in Δ (TRACE §3.2).

Rules, in order of precedence for one item:

- *revocation*: a ``revoke`` event targets it → ``revoked``;
- *supersession*: a ``supersede`` event targets it → ``stale_or_superseded``;
- *same-key replacement*: an item with the same ``key`` and a later epoch was
  asserted → ``stale_or_superseded`` (epochs order replacements: an item is
  only ever replaced by one recorded after it);
- *closed validity*: a ``close`` event ended its validity at or before the
  return time → ``expired``.

An item's own validity interval is checked by the temporal gate. The rules are
`readmit.admission.invalidation.links`; this module splits a return's pool by them, and
grows a later return's split of C's items from an earlier return's.
"""

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from datetime import datetime
from itertools import compress, count
from operator import attrgetter, not_
from typing import NamedTuple

from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.links import (
    EXCLUSIONS,
    Link,
    event_links,
    group_replacements,
    ids_unless_all,
    same_key_replacements,
    shared_keys,
)
from readmit.admission.memo import Grown, Newest, lineage
from readmit.events import Close, Recorded
from readmit.model import Agent, Item
from readmit.reasons import Exclusion


def resolve_explicit(
    pool: Iterable[Item], ctx: ReturnContext
) -> tuple[list[Item], list[Exclusion]]:
    """Split ``pool`` into items no lifecycle link touches and the exclusions of the rest."""
    pool = list(pool)
    if ids_unless_all(pool, ctx.items) is not None:
        links = event_links(ctx.delta, ctx.returner.at)
        return _resolved(pool, links, same_key_replacements(ctx, pool))
    # The pool is C's items, then the obligations' (what `capture` makes): C's part is
    # split as at the last return with the same items, Δ, agents and closings in force, or
    # grown from the split of the tuples these extend.
    n = len(ctx.items)
    split = _of_items(ctx)
    tail_kept, tail_excluded = _resolved(pool[n:], split.links, split.replaced)
    return [*split.kept, *tail_kept], [*split.excluded, *tail_excluded]


def _resolved(
    pool: list[Item], links: dict[str, Link], replaced: dict[str, Link]
) -> tuple[list[Item], list[Exclusion]]:
    """``pool`` split by ``links`` and same-key ``replaced`` items."""
    if not links and not replaced:
        return pool, []
    kept, excluded, _ = _marked(pool, links, replaced)
    return kept, excluded


def _marked(
    pool: Sequence[Item], links: dict[str, Link], replaced: dict[str, Link]
) -> tuple[list[Item], list[Exclusion], list[bool]]:
    """`_resolved`, with whether each item of ``pool`` was excluded."""
    touched = links.keys() | replaced.keys()
    if not touched:
        return list(pool), [], [False] * len(pool)
    # One pass in C over the ids: most of a large pool is untouched.
    marks = list(map(touched.__contains__, map(_ID, pool)))
    kept = list(compress(pool, map(not_, marks)))
    hit = compress(pool, marks)
    excluded = [EXCLUSIONS[item.id, links.get(item.id) or replaced[item.id]] for item in hit]
    return kept, excluded, marks


class _Split:
    """C's items split by Δ's links, with what the split read: `_of_items`'s value.

    ``at`` holds each exclusion's item's index in C's items, so a split grown from this
    one (`_grown`) can place an item a later event touched without a pass over the rest;
    ``places``, once a split needed one, the index of C's ids those are found by.
    """

    __slots__ = (
        "agents",
        "at",
        "closings",
        "excluded",
        "in_force",
        "kept",
        "links",
        "places",
        "replaced",
    )

    def __init__(
        self,
        links: dict[str, Link],
        replaced: dict[str, Link],
        kept: list[Item],
        excluded: list[Exclusion],
        at: list[int],
        inputs: "_Inputs",
    ) -> None:
        self.links = links
        self.replaced = replaced
        self.kept = kept
        self.excluded = excluded
        self.at = at
        self.agents, self.closings, self.in_force = inputs
        self.places: _Places | None = None


class _Inputs(NamedTuple):
    """What a split reads of a return besides C's items and Δ."""

    agents: frozenset[tuple[str, Agent]]
    closings: list[datetime]
    """The times of Δ's closings, in order."""
    in_force: int
    """How many of them are in force at the return's time."""


def _of_items(ctx: ReturnContext) -> _Split:
    """`_resolved` of C's items, with its links, made once per inputs.

    The split is a function of C's items, Δ, the agents (who may replace what) and which
    of Δ's closings are in force at the return's time. A store hands every return at one
    epoch the same tuples of items and of Δ, and a return at a later epoch those tuples
    extended (`readmit.store.bodies.Departures`): its split is grown from the last one.
    """
    closings = _closings(ctx.delta)
    inputs = _Inputs(
        frozenset(ctx.agents.items()), closings, bisect_right(closings, ctx.returner.at)
    )
    known = _GROWN.found(ctx.items, ctx.delta)
    if known is not None and (known.agents, known.in_force) == (inputs.agents, inputs.in_force):
        return known  # the same tuples have the same closings
    base = _GROWN.base(ctx.items, ctx.delta)
    made = None if base is None else _grown(ctx, base, inputs)
    if made is None:
        made = _whole(ctx, inputs)
    return _GROWN.put((ctx.items, ctx.delta), made)


_GROWN: Grown[_Split] = Grown()
"""Recent splits by their tuples (kept with them): found again for the same tuples, or
grown for a return whose tuples extend theirs."""


def _whole(ctx: ReturnContext, inputs: _Inputs) -> _Split:
    """`_of_items` made from nothing."""
    links = event_links(ctx.delta, ctx.returner.at)
    replaced = same_key_replacements(ctx, ctx.items)
    kept, excluded, marks = _marked(ctx.items, links, replaced)
    return _Split(links, replaced, kept, excluded, list(compress(count(), marks)), inputs)


_MOVED = 64
"""Earlier items whose link a later epoch changes, past which a split is made whole again
(each is placed with a search of its own)."""


def _grown(
    ctx: ReturnContext,
    base: tuple[tuple[int, ...], _Split],
    inputs: _Inputs,
) -> _Split | None:
    """`_of_items` grown from the split of tuples these extend, or ``None`` if it cannot be.

    The earlier split stands for the earlier items while the agents and the earlier
    closings in force are the same. The new events add links (`event_links` reads Δ in order,
    so reading on from the earlier links is reading all of Δ); the new items are split
    alone, and a key they share makes its group's replacements again. Only the earlier
    items whose link changed are moved, each found by its id's index in C.
    """
    (n, m), old = base
    if old.agents != inputs.agents or bisect_right(old.closings, ctx.returner.at) != old.in_force:
        return None
    items = ctx.items
    links = event_links(ctx.delta[m:], ctx.returner.at, dict(old.links))
    groups = shared_keys(items)
    replaced = dict(old.replaced)
    changed = [t for t, link in links.items() if old.links.get(t) is not link]
    for key in {item.key for item in items[n:] if item.key in groups}:
        group = groups[key]
        for member in group:
            replaced.pop(member.id, None)
            changed.append(member.id)
        replaced.update(group_replacements(ctx, key, group, group))
    found = _moved(items, n, changed, old, links, replaced)
    if found is None:
        return None
    moved, places = found
    kept, excluded, at = list(old.kept), list(old.excluded), list(old.at)
    for index, link in moved:  # each placed by where C's earlier indexes now stand
        item = items[index]
        j = bisect_left(at, index)
        exclusion = EXCLUSIONS[item.id, link]
        if j < len(at) and at[j] == index:
            excluded[j] = exclusion
            continue
        if kept[index - j] is not item:
            return None
        del kept[index - j]
        excluded.insert(j, exclusion)
        at.insert(j, index)
    for index in range(n, len(items)):
        item = items[index]
        made = links.get(item.id) or replaced.get(item.id)
        if made is None:
            kept.append(item)
        else:
            excluded.append(EXCLUSIONS[item.id, made])
            at.append(index)
    grown = _Split(links, replaced, kept, excluded, at, inputs)
    grown.places = places
    return grown


_Places = tuple[dict[str, int], int]
"""An index of the ids of C's first items, and how many it holds. C's first items never
move, so one index serves every split grown from the one it was made for."""
_UNINDEXED = 4096
"""Items after an index's that are searched one by one, past which it is made again."""


def _moved(
    items: tuple[Item, ...],
    n: int,
    changed: list[str],
    old: _Split,
    links: dict[str, Link],
    replaced: dict[str, Link],
) -> tuple[list[tuple[int, Link]], _Places | None] | None:
    """The earlier items whose link ``changed`` from ``old``'s: C's indexes, with new links.

    The earlier items are the first ``n``. ``None`` past `_MOVED` of them, if one lost its
    link, or if an id is held twice (a store's ids are unique; a split made whole marks
    every item with the id). With them, the index of C's ids they were found by (`_Places`).
    """
    moved: list[tuple[int, Link]] = []
    places, after = old.places, None
    for item_id in dict.fromkeys(changed):
        link = links.get(item_id) or replaced.get(item_id)
        before = old.links.get(item_id) or old.replaced.get(item_id)
        if link == before:
            continue
        if places is None or n - places[1] > _UNINDEXED:
            places = (dict(zip(map(_ID, items[:n]), range(n), strict=True)), n)
            if len(places[0]) < n:
                return None  # an id twice (no store's C): only a whole split marks both
        if after is None:
            after = list(map(_ID, items[places[1] : n]))
            if len(set(after)) < len(after) or not places[0].keys().isdisjoint(after):
                return None
        index = places[0].get(item_id)
        if index is None:
            if item_id not in after:
                continue  # a link to no earlier item (a new one's, or none of C's)
            index = places[1] + after.index(item_id)
        if link is None or len(moved) == _MOVED:
            return None
        moved.append((index, link))
    return moved, places


def _closings(delta: tuple[Recorded, ...]) -> list[datetime]:
    """The times of Δ's closings, in order (the log's times never go backwards)."""
    known = _CLOSINGS.get(id(delta))
    if known is not None and known[0] is delta:
        return known[1]
    # Most deltas close nothing: their ops are read in C, with no Python frame an event.
    closes = "close" in map(_OP, delta)
    times = sorted(r.event.at for r in delta if isinstance(r.event, Close)) if closes else []
    return _CLOSINGS.put(id(delta), (delta, times), len(delta), lineage(delta))[1]


_CLOSINGS: Newest[int, tuple[tuple[Recorded, ...], list[datetime]]] = Newest()


_ID = attrgetter("id")
_OP = attrgetter("event.op")
