"""A bounded memo remembers up to its limit, then starts over."""

from readmit.admission.memo import keep


def test_a_memo_keeps_values_up_to_its_limit_then_starts_over() -> None:
    memo: dict[str, int] = {}
    assert [keep(memo, k, n, limit=3) for n, k in enumerate("abc")] == [0, 1, 2]
    assert memo == {"a": 0, "b": 1, "c": 2}

    assert keep(memo, "d", 3, limit=3) == 3

    assert memo == {"d": 3}
