"""What a return found no longer valid, for the memory layers that serve after it.

A layer never shows it, nor what is stated on it since (`readmit.integrations.following`,
the LangGraph lens): `fallen_at` seeds what the layer holds out, and `spread` adds what
rests on it, over the premises the layer keeps.
"""

from collections.abc import Container, Iterable, Mapping

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.reasons import Reason, Stage


def fallen_at(decided: Decided) -> set[str]:
    """The items ``decided``'s return found no longer valid, and those its departure left out.

    Withdrawn, found stale, or resting on a premise that fell: the decision names each,
    and a later return excludes what is stated on one after it (``premise_invalidated``),
    where a memory layer served it (a review).
    """
    exclusions = decided.decision.decided
    fell = {e.item for e in exclusions if e.stage in _FALLING and e.reason not in _UNCHECKED}
    return fell.union(decided.context.standing, (i.id for i in decided.context.left_out))


def admitted_ids(decided: Decided) -> frozenset[str]:
    """The ids of the items ``decided``'s view admitted (none when it was withheld)."""
    decision = decided.decision
    return frozenset(i.id for i in decision.items) if isinstance(decision, Issued) else frozenset()


def spread(out: set[str], resting: Mapping[str, Iterable[str]], kept: Container[str]) -> None:
    """Add to ``out`` what rests, in a chain, on what it holds, but what ``kept`` holds.

    ``resting``: each premise's dependents. What the return excluded first for another
    reason (another principal's note on a stale item) falls too, and what is stated on
    it since (a differential fuzz); what the view admits stands, as the return said.
    """
    todo = list(out)
    while todo:
        grown = [i for i in resting.get(todo.pop(), ()) if i not in out and i not in kept]
        out.update(grown)
        todo += grown


_FALLING = frozenset({Stage.EXPLICIT, Stage.IMPLICIT, Stage.PROPAGATION})
_UNCHECKED = frozenset({Reason.VERIFIER_UNAVAILABLE, Reason.UNSCREENED})
"""Withheld because they could not be judged, not found stale: a review (they are valid
to a return that judges them)."""
