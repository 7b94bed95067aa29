"""Premises a return's C does not hold: whether each still stands, by the departure's rule.

D_a holds only what its agent may read, so an item it may read can rest on a premise it
may not (another principal's item), or, asserted during Δ, on one withdrawn or left out
before the departure. Propagation over C never sees such a premise fall. A departure
judges every premise, read or not (`readmit.store.absence.checkpoint`); a return asks
the store the same of each premise outside C: still active, its validity not ended at
the return, no standing verdict against it, and the same of its own premises. One that
stands may still rest on items of C that this return finds stale: the context holds each
item of the chains outside C (`Outside.item`), and the return screens those that stand as
it screens C's own premises, each after its own, down to the items of C they rest on, as
the same history without the departure would: its Δ held them.

The chains never change once written (bodies are immutable), so they are traced once
per tuple of C's items; each return reads only what may have changed since: which of
their items are withdrawn or under a standing verdict, and whose validity has ended.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import compress
from operator import attrgetter

from readmit.admission.context import Outside
from readmit.admission.memo import Grown, keep
from readmit.model import Agent, Item
from readmit.store.bodies import items_by
from readmit.store.connection import Connection, stamp
from readmit.store.decoded import BodyCache
from readmit.store.rows import WITHDRAWN, select_in

_DEPENDS_ON = attrgetter("depends_on")
_STANDING = "SELECT item, restore_until FROM invalidations"
_STANDS = "AND lapsed_epoch IS NULL"


@dataclass(frozen=True, slots=True)
class _Chains:
    """The premises C's items name outside C, and what they rest on, as stored."""

    named: frozenset[str]
    items: Mapping[str, Item]
    """Every item of the chains: the premises outside C and what they rest on, in C or not."""
    missing: frozenset[str]
    """Ids a chain names that no stored item has (a store the writer did not fill)."""
    dependents: Mapping[str, tuple[str, ...]]
    """Each item of the chains: the items of the chains that rest on it."""
    beyond: frozenset[str]
    """Each premise named, and each item of the chains outside C."""


def outside(
    db: Connection,
    cache: BodyCache[str, Item],
    workspace: str,
    items: tuple[Item, ...],
    reader: Agent,
    at: datetime,
) -> Mapping[str, Outside]:
    """The premises of ``items`` they do not hold: whether each stands at ``at``, and more.

    With whether ``reader`` may read it (an id it may not is never shown to it), and the
    items of C it rests on.
    """
    chains = _CHAINS.found(items)
    if chains is None:
        chains = _CHAINS.put((items,), _traced(db, cache, workspace, items))
    if not chains.named:
        return {}
    gone = frozenset(_gone(db, workspace, chains, at))
    asked = (id(chains), reader.principal, reader.role, gone)
    made = _MADE.get(asked)
    if made is None or made[0] is not chains:
        made = keep(_MADE, asked, (chains, _made(chains, gone, reader)), _MADE_LIMIT)
    return made[1]


def _made(chains: _Chains, gone: frozenset[str], reader: Agent) -> Mapping[str, Outside]:
    fell = _fell(gone, chains.dependents)
    found = chains.items
    return {
        p: Outside(
            fallen=p in fell,
            readable=p in found and found[p].scope.readable_by(reader.principal, reader.role),
            item=None if p in fell else found.get(p),
        )
        for p in sorted(chains.beyond)
    }


_CHAINS: Grown[_Chains] = Grown()
"""The chains of recent C's (a store hands returns at one epoch one tuple of C's items)."""
_MADE: dict[tuple[object, ...], tuple[_Chains, Mapping[str, Outside]]] = {}
"""The answers for recent chains, readers and what no longer stood (each kept with its
chains, so their id is not reused while it is remembered)."""
_MADE_LIMIT = 64


def _traced(
    db: Connection, cache: BodyCache[str, Item], workspace: str, items: tuple[Item, ...]
) -> _Chains:
    built_on = list(compress(items, map(_DEPENDS_ON, items)))  # in C: most build on none
    held = {i.id for i in items} if built_on else set()
    named = frozenset(p for i in built_on for p in i.depends_on if p not in held)
    return _chained(db, cache, workspace, named, held)


def chains_of(
    db: Connection, cache: BodyCache[str, Item], workspace: str, named: frozenset[str], at: datetime
) -> tuple[dict[str, frozenset[str]], set[str], dict[str, datetime]]:
    """The items on the chains of ``named``, which of them no longer stand at ``at``, their ends.

    Each item with what it rests on; fallen by the rule `outside` reads (withdrawn, ended,
    under a standing verdict, or resting on one that is, to the end of each chain). Every
    item of the chains that fell, not only the named: a layer that keeps a chain asks no
    more of its items, and one found stale further down was taken to stand, and what was
    stated on it later served (a differential fuzz).

    For a memory layer serving between returns: a statement made since its return that
    rests on an item stated before it outside C (another principal's, found stale then),
    which nothing it followed says anything of (`readmit.integrations.following`).
    """
    chains = _chained(db, cache, workspace, named, set())
    fell = _fell(_gone(db, workspace, chains, at), chains.dependents)
    found = chains.items.values()
    ends = {i.id: end for i in found if (end := i.validity.valid_to) is not None}
    return {i.id: i.depends_on for i in found}, fell, ends


def _chained(
    db: Connection, cache: BodyCache[str, Item], workspace: str, named: frozenset[str],
    held: set[str],
) -> _Chains:  # fmt: skip
    if not named:
        return _Chains(named, {}, frozenset(), {}, named)
    found: dict[str, Item] = {}
    missing: set[str] = set()
    wanted: set[str] = set(named)
    while wanted:  # the premises' own premises, to the end of each chain
        fetched = _decoded(db, cache, workspace, wanted)
        found.update((i.id, i) for i in fetched)
        missing.update(w for w in wanted if w not in found)  # not `- found.keys()`: that
        # copies what was found at every step, and a chain of N steps took N² / 2 of them
        wanted = {p for i in fetched for p in i.depends_on if p not in found and p not in missing}
    dependents: dict[str, list[str]] = {}
    for item in found.values():  # an item of C on a chain falls with its premises too
        for premise in item.depends_on:
            dependents.setdefault(premise, []).append(item.id)
    frozen = {p: tuple(d) for p, d in dependents.items()}
    return _Chains(named, found, frozenset(missing), frozen, named | (found.keys() - held))


def _decoded(
    db: Connection, cache: BodyCache[str, Item], workspace: str, ids: set[str]
) -> list[Item]:
    """The stored items of ``ids``: a body, once decoded, is the cache's to give again."""
    known = cache.get(workspace, list(ids))
    rest = sorted(ids - known.keys())
    return [*known.values(), *(items_by(db, cache, workspace, "id", rest) if rest else ())]


def _gone(db: Connection, workspace: str, chains: _Chains, at: datetime) -> set[str]:
    """The items of the chains that no longer stand themselves, by the store's rule."""
    ids = chains.items.keys()  # probed by index: a workspace's withdrawals only grow
    gone = {r[0] for r in select_in(db, workspace, WITHDRAWN, "id", ids)}
    standing, now = select_in(db, workspace, _STANDING, "item", ids, _STANDS), stamp(at)
    gone |= {item for item, until in standing if until is None or until > now}
    gone |= {i.id for i in chains.items.values() if i.validity.ended(at)}
    return gone | chains.missing


def _fell(gone: Iterable[str], dependents: Mapping[str, tuple[str, ...]]) -> set[str]:
    """``gone`` and every item of the chains resting on one of them (truth maintenance)."""
    fell = set(gone)
    todo = list(fell)
    while todo:
        for item in dependents.get(todo.pop(), ()):
            if item not in fell:
                fell.add(item)
                todo.append(item)
    return fell
