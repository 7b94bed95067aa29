"""Gates the fused check must not pass over: a caller's own gates, several size budgets,
and a size budget that changed since a pool's split was remembered."""

from dataclasses import replace

from builders import context, item
from readmit.admission.context import ReturnContext
from readmit.admission.gates import DEFAULT_GATES, Gate, apply_gates, max_chars
from readmit.model import Item
from readmit.reasons import Reason

SHORT = item("s", "Short note.")
MIDDLE = item("m", "A note of some fifty characters, give or take a few.")
CTX = context((SHORT, MIDDLE))


def _pool() -> list[Item]:
    """`SHORT` and `MIDDLE` as objects no earlier split has seen (splits are remembered)."""
    return [replace(SHORT), replace(MIDDLE)]


def _no_middle(candidate: Item, ctx: ReturnContext) -> Reason | None:
    """A caller's own gate after the default ones: it turns down one item."""
    return Reason.NOT_APPLICABLE if candidate.id == "m" else None


def _split(pool: list[Item], gates: tuple[Gate, ...]) -> tuple[list[Item], list[tuple[str, str]]]:
    kept, excluded = apply_gates(pool, CTX, gates)
    return kept, [(e.item, e.reason) for e in excluded]


def test_a_callers_gate_after_the_default_ones_still_excludes_what_it_fails() -> None:
    pool = _pool()

    assert _split(pool, (*DEFAULT_GATES, _no_middle)) == (pool[:1], [("m", "not_applicable")])


def test_a_callers_gate_after_a_size_budget_still_excludes_what_it_fails() -> None:
    pool = _pool()
    gates = (*DEFAULT_GATES, max_chars(1000), _no_middle)

    assert _split(pool, gates) == (pool[:1], [("m", "not_applicable")])


def test_of_several_size_budgets_the_smallest_holds() -> None:
    assert len(SHORT.text) <= 20 < len(MIDDLE.text) <= 100

    for gates in (
        (*DEFAULT_GATES, max_chars(100), max_chars(20)),
        (*DEFAULT_GATES, max_chars(20), max_chars(100)),
    ):
        pool = _pool()

        assert _split(pool, gates) == (pool[:1], [("m", "over_item_budget")])


def test_a_pool_split_under_one_size_budget_is_split_afresh_under_a_smaller_one() -> None:
    """The fused check remembers a pool's split: a later return with the same returner and
    items but a smaller item budget (another policy) must not be handed the earlier split."""
    pool = _pool()
    assert _split(pool, (*DEFAULT_GATES, max_chars(1000))) == (pool, [])

    assert _split(pool, (*DEFAULT_GATES, max_chars(20))) == (pool[:1], [("m", "over_item_budget")])
