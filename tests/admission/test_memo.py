"""A bounded memo remembers up to its limit, then starts over."""

from dataclasses import replace

from builders import item
from readmit.admission.memo import Passes, keep


def test_a_memo_keeps_values_up_to_its_limit_then_starts_over() -> None:
    memo: dict[str, int] = {}
    assert [keep(memo, k, n, limit=3) for n, k in enumerate("abc")] == [0, 1, 2]
    assert memo == {"a": 0, "b": 1, "c": 2}

    assert keep(memo, "d", 3, limit=3) == 3

    assert memo == {"d": 3}


def test_a_pass_is_found_again_only_for_the_very_same_items_and_inputs() -> None:
    a, b = item("a"), item("b")
    passes: Passes[str] = Passes(size=2)
    passes.put([a, b], ("x",), None, "split")

    assert passes.get([a, b], ("x",)) == "split"  # a new list of the same objects
    assert passes.get([a, b], ("y",)) is None
    assert passes.get([a, replace(b)], ("x",)) is None  # equal, not the same object
    assert passes.get([a], ("x",)) is None
    passes.put([a], ("x",), None, "one")
    passes.put([b], ("x",), None, "other")
    assert passes.get([a, b], ("x",)) is None  # the oldest of more than two is dropped
