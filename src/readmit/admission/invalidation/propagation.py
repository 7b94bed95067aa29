"""Premise propagation: an item whose premise was invalidated is invalid for current use.

Truth maintenance over ``depends_on`` (Doyle 1979; TRACE §3.2): the closure is
taken to a fixpoint, so a chain of premises fails as a whole.
"""

from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import compress
from operator import attrgetter

from readmit.admission.context import ReturnContext
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
                fallen[item.id] = premise_fell(item.id, premise, Reason.PREMISE_INVALIDATED)
                invalid.append(item.id)
    if not fallen:  # nothing depended on what was excluded
        return list(pool), []
    kept = [item for item in pool if item.id not in fallen]
    return kept, list(fallen.values())


def premise_fell(item: str, premise: str, why: Reason) -> Exclusion:
    """``item`` excluded as its ``premise`` was excluded for ``why``.

    Stale (`implicitly_invalidated` or `premise_invalidated`), it falls with it; else the
    premise could not be screened, and neither can the item, for the same reason.
    """
    stale = why in (Reason.IMPLICITLY_INVALIDATED, Reason.PREMISE_INVALIDATED)
    return Exclusion(
        item=item,
        reason=Reason.PREMISE_INVALIDATED if stale else why,
        stage=Stage.PROPAGATION if stale else Stage.IMPLICIT,
        evidence=(premise,),
        detail=f"depends on {premise}, which "
        + ("was invalidated" if stale else "could not be screened"),
    )


def held_as(premise: str, ctx: ReturnContext, pool: Mapping[str, Item]) -> Item | None:
    """The item a return screens for ``premise`` (``None``: none).

    In ``pool`` (C's, as screened), or outside C while it stands (`Outside.item`, screened
    after its own premises, as C's are).
    """
    outside = ctx.outside.get(premise)
    return pool.get(premise) if outside is None else outside.item


def fell_outside(premise: str, ctx: ReturnContext) -> bool:
    """Whether ``premise`` is outside C and no longer stands (`Outside.fallen`)."""
    outside = ctx.outside.get(premise)
    return outside is not None and outside.fallen


def outside_seeds(ctx: ReturnContext, fell: Collection[str] | None = None) -> list[Exclusion]:
    """Premises outside C to propagate from.

    Those that fell by the store's rule (``fell`` ``None``), or those that stand resting,
    through premises outside C, on an item of ``fell``, which this return excluded: found
    walking up from those items, each premise once (a chain of any length, however many
    items of C it rests on).
    """
    if fell is None:
        seeds = [p for p, o in ctx.outside.items() if o.fallen]
    else:
        resting: dict[str, list[str]] = {}
        for p, o in ctx.outside.items():
            for premise in o.item.depends_on if o.item is not None and not o.fallen else ():
                resting.setdefault(premise, []).append(p)
        reached: set[str] = set()
        todo = list(fell)
        while todo:
            grown = [p for p in resting.get(todo.pop(), ()) if p not in reached]
            reached.update(grown)
            todo += grown
        seeds = [p for p in ctx.outside if p in reached]
    reason = Reason.PREMISE_INVALIDATED
    return [Exclusion(item=p, reason=reason, stage=Stage.PROPAGATION) for p in seeds]


def premise_texts(item: Item, ctx: ReturnContext) -> tuple[str, ...]:
    """The texts of ``item``'s premises, in C or outside it: a verifier reads them with it."""
    return tuple(p.text for p in _premises(item, ctx) if p is not None)


def premises_readable(item: Item, ctx: ReturnContext) -> bool:
    """Whether the returning agent may read every premise of ``item`` a verifier reads.

    A verifier's wording may quote them: unless it may, the wording is not shown to it.
    """
    who = ctx.returner
    found = _premises(item, ctx)
    return all(p is None or p.scope.readable_by(who.principal, who.role) for p in found)


def _premises(item: Item, ctx: ReturnContext) -> Iterable[Item | None]:
    return (ctx.by_id.get(p) or held_as(p, ctx, {}) for p in sorted(item.depends_on))
