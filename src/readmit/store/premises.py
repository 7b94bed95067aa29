"""Premises a return's C does not hold: whether each still stands, by the departure's rule.

D_a holds only what its agent may read, so an item it may read can rest on a premise it
may not (another principal's item), or, asserted during Δ, on one withdrawn or left out
before the departure. Propagation over C never sees such a premise fall. A departure
judges every premise, read or not (`readmit.store.absence.checkpoint`); a return asks
the store the same of each premise outside C: still active, its validity not ended at
the return, no standing verdict against it, and the same of its own premises.
"""

from collections.abc import Iterable, Mapping
from datetime import datetime
from itertools import compress
from operator import attrgetter

from readmit.admission.invalidation.propagation import propagate
from readmit.admission.memo import Passes
from readmit.model import Agent, Item
from readmit.reasons import Exclusion, Reason, Stage
from readmit.store.bodies import BodyCache, items_by
from readmit.store.connection import Connection
from readmit.store.rows import select_in

_DEPENDS_ON = attrgetter("depends_on")
_WITHDRAWN = "SELECT id FROM withdrawn"
_STANDING = "SELECT item FROM invalidations"


def fallen_outside(
    db: Connection,
    cache: BodyCache[str, Item],
    workspace: str,
    items: tuple[Item, ...],
    reader: Agent,
    at: datetime,
) -> Mapping[str, bool]:
    """The premises of ``items`` they do not hold that no longer stand at ``at``.

    Each with whether ``reader`` may read it: an id it may not is never shown to it.
    """
    named = _outside(items)
    if not named:
        return {}
    found: dict[str, Item] = {}
    missing: set[str] = set()  # never stored (a store the writer did not fill): fail closed
    wanted: set[str] = set(named)
    while wanted:  # the premises' own premises, to the end of each chain
        fetched = items_by(db, cache, workspace, "id", sorted(wanted))
        found.update((i.id, i) for i in fetched)
        missing |= wanted - found.keys()
        wanted = {p for i in fetched for p in i.depends_on} - found.keys() - missing
    ids = list(found)
    gone = {r[0] for r in select_in(db, workspace, _WITHDRAWN, "id", ids)}
    gone |= {r[0] for r in select_in(db, workspace, _STANDING, "item", ids, _STANDS)}
    gone |= {i.id for i in found.values() if i.validity.ended(at)}
    gone |= missing
    _, fell = propagate(list(found.values()), excluded=_seeds(gone))
    fallen = (gone | {e.item for e in fell}) & named
    return {
        p: p in found and found[p].scope.readable_by(reader.principal, reader.role)
        for p in sorted(fallen)
    }


_STANDS = "AND lapsed_epoch IS NULL"


def _seeds(ids: Iterable[str]) -> list[Exclusion]:
    fell = Reason.PREMISE_INVALIDATED
    return [Exclusion(item=i, reason=fell, stage=Stage.PROPAGATION) for i in sorted(ids)]


def _outside(items: tuple[Item, ...]) -> frozenset[str]:
    """The premises ``items`` name and do not hold, found once per tuple."""
    known = _NAMED.get(items, None)
    if known is None:
        built_on = list(compress(items, map(_DEPENDS_ON, items)))  # in C: most build on none
        held = {i.id for i in items} if built_on else set()
        named = frozenset(p for i in built_on for p in i.depends_on if p not in held)
        known = _NAMED.put(items, None, None, named)
    return known


_NAMED: Passes[frozenset[str]] = Passes()
"""The premises outside C of recent C's (a store hands returns at one epoch one tuple)."""
