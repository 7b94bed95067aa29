"""What a return found no longer valid, for the memory layers that serve after it.

A layer never shows it, nor what is stated on it since (`readmit.integrations.following`,
the LangGraph lens).
"""

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.reasons import Reason, Stage


def fallen_at(decided: Decided) -> set[str]:
    """The items ``decided``'s return found no longer valid, and those its departure left out.

    Withdrawn, found stale, or resting on a premise that fell: the decision names each,
    and a later return excludes what is stated on one after it (``premise_invalidated``),
    where a memory layer served it (a review). With what in C rests on one, in a chain,
    excluded first for another reason (another principal's, a differential fuzz).
    """
    decided_ = decided.decision.decided
    fell = {e.item for e in decided_ if e.stage in _FALLING and e.reason not in _UNCHECKED}
    fell.update(decided.context.standing, (i.id for i in decided.context.left_out))
    decision, resting = decided.decision, dict[str, list[str]]()
    admitted = {i.id for i in decision.items} if isinstance(decision, Issued) else set()
    for item in decided.context.items:
        for premise in item.depends_on:
            resting.setdefault(premise, []).append(item.id)
    todo = list(fell)
    while todo:
        grown = [i for i in resting.get(todo.pop(), ()) if i not in fell and i not in admitted]
        fell.update(grown)
        todo += grown
    return fell


_FALLING = frozenset({Stage.EXPLICIT, Stage.IMPLICIT, Stage.PROPAGATION})
_UNCHECKED = frozenset({Reason.VERIFIER_UNAVAILABLE, Reason.UNSCREENED})
"""Withheld because they could not be judged, not found stale: a review (they are valid
to a return that judges them)."""
