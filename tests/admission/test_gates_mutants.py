"""Gates the fused check must not pass over: extra gates and more than one size budget."""

from builders import context, item
from readmit.admission.context import ReturnContext
from readmit.admission.gates import DEFAULT_GATES, apply_gates, max_chars
from readmit.model import Item
from readmit.reasons import Reason

SHORT = item("s", "Short note.")
MIDDLE = item("m", "A note of some fifty characters, give or take a few.")
CTX = context((SHORT, MIDDLE))


def _no_middle(candidate: Item, ctx: ReturnContext) -> Reason | None:
    """A caller's own gate after the default ones: it turns down one item."""
    return Reason.NOT_APPLICABLE if candidate.id == "m" else None


def test_a_callers_gate_after_the_default_ones_still_excludes_what_it_fails() -> None:
    kept, excluded = apply_gates([SHORT, MIDDLE], CTX, (*DEFAULT_GATES, _no_middle))

    assert kept == [SHORT]
    assert [(e.item, e.reason) for e in excluded] == [("m", Reason.NOT_APPLICABLE)]


def test_a_callers_gate_after_a_size_budget_still_excludes_what_it_fails() -> None:
    gates = (*DEFAULT_GATES, max_chars(1000), _no_middle)

    kept, excluded = apply_gates([SHORT, MIDDLE], CTX, gates)

    assert kept == [SHORT]
    assert [(e.item, e.reason) for e in excluded] == [("m", Reason.NOT_APPLICABLE)]


def test_of_several_size_budgets_the_smallest_holds() -> None:
    assert len(SHORT.text) <= 20 < len(MIDDLE.text) <= 100

    for gates in (
        (*DEFAULT_GATES, max_chars(100), max_chars(20)),
        (*DEFAULT_GATES, max_chars(20), max_chars(100)),
    ):
        kept, excluded = apply_gates([SHORT, MIDDLE], CTX, gates)

        assert kept == [SHORT]
        assert [(e.item, e.reason) for e in excluded] == [("m", Reason.OVER_ITEM_BUDGET)]
