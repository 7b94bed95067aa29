"""Premise propagation: an item whose premise was invalidated is invalid for current use.

Truth maintenance over ``depends_on`` (Doyle 1979; TRACE §3.2): the closure is
taken to a fixpoint, so a chain of premises fails as a whole.
"""

from collections.abc import Iterable, Sequence
from itertools import compress
from operator import attrgetter

from readmit.admission.memo import Passes
from readmit.model import Item
from readmit.reasons import Exclusion, Reason, Stage

_DEPENDS_ON = attrgetter("depends_on")


def propagate(
    pool: Sequence[Item], excluded: Iterable[Exclusion]
) -> tuple[list[Item], list[Exclusion]]:
    """Exclude every item of ``pool`` that depends, directly or transitively, on an excluded one."""
    invalid = [e.item for e in excluded]
    if not invalid:
        return list(pool), []
    inputs = tuple(invalid)
    known = _PASSES.get(pool, inputs)
    if known is None:
        known = _PASSES.put(pool, inputs, None, _propagated(pool, invalid))
    return list(known[0]), list(known[1])


_PASSES: Passes[tuple[list[Item], list[Exclusion]]] = Passes()
"""Recent closures, by pool and the ids excluded before."""


def _propagated(pool: Sequence[Item], invalid: list[str]) -> tuple[list[Item], list[Exclusion]]:
    dependents: dict[str, list[Item]] = {}
    for item in compress(pool, map(_DEPENDS_ON, pool)):  # in C: most depend on nothing
        for premise in item.depends_on:
            dependents.setdefault(premise, []).append(item)
    fallen: dict[str, Exclusion] = {}
    while invalid:
        premise = invalid.pop()
        for item in dependents.get(premise, ()):
            if item.id not in fallen:
                fallen[item.id] = Exclusion(
                    item=item.id,
                    reason=Reason.PREMISE_INVALIDATED,
                    stage=Stage.PROPAGATION,
                    evidence=(premise,),
                    detail=f"depends on {premise}, which was invalidated",
                )
                invalid.append(item.id)
    if not fallen:  # nothing depended on what was excluded
        return list(pool), []
    kept = [item for item in pool if item.id not in fallen]
    return kept, list(fallen.values())
