"""A bounded memo remembers up to its limit, then starts over."""

import sys
import threading
from dataclasses import replace

import pytest

from builders import item
from readmit.admission import memo
from readmit.admission.memo import Grown, Newest, Passes, extends, grown_from, keep


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


def test_the_latest_pass_for_a_pool_is_found_first() -> None:
    a = item("a")
    passes: Passes[str] = Passes()
    passes.put([a], (), None, "stale")
    passes.put([a], (), None, "fresh")

    assert passes.get([a], ()) == "fresh"


def test_a_value_grows_from_the_longest_remembered_tuples_the_new_ones_extend() -> None:
    a, b, c = item("a"), item("b"), item("c")
    short, longer, other = (a,), (a, b), (b, c)
    grown: Grown[str] = Grown()
    grown.put((short,), "of a")
    grown.put((longer,), "of a, b")
    grown.put((other,), "of b, c")

    assert grown.found((a, b)) is None  # equal, not the same tuple
    assert grown.found(longer) == "of a, b"
    assert grown.base((a, b, c)) == ((2,), "of a, b")
    assert grown.base((replace(a), b, c)) is None  # an equal item is not the same one
    assert grown.base((b,)) is None  # starts (b, c) but does not extend it


def test_a_longer_remembered_tuple_that_is_not_extended_is_passed_over() -> None:
    a, b, c, d = item("a"), item("b"), item("c"), item("d")
    grown: Grown[str] = Grown()
    grown.put(((a, b),), "first of a, b")
    grown.put(((a, c, d),), "of a, c, d")
    grown.put(((a, b),), "second of a, b")

    # The longest remembered does not start the new tuple; of two as long, the earlier.
    assert grown.base((a, b, d)) == ((2,), "first of a, b")
    assert grown.base((a, c, d, b)) == ((3,), "of a, c, d")


def test_a_tuple_grown_from_another_extends_it_and_only_it() -> None:
    a, b, c = item("a"), item("b"), item("c")
    short = (a, b)
    longer = grown_from((*short, c), short)

    assert extends(longer, short)
    assert extends(longer, (a,))  # compared: not the tuple it was grown from
    assert not extends(longer, (replace(a), b))  # equal, not the same objects
    assert not extends((replace(a), b, c), short)  # not grown from it: compared


def test_a_pass_keeps_a_copy_of_its_pool_unless_the_pool_is_handed_over() -> None:
    a, b = item("a"), item("b")
    passes: Passes[str] = Passes()
    pool = [a, b]
    passes.put(pool, (), None, "copied")
    pool.append(item("c"))  # the caller's list changes; the pass does not

    assert passes.get([a, b], ()) == "copied"
    owned = [b, a]
    passes.put(owned, ("o",), None, "owned", owned=True)
    assert passes.get([b, a], ("o",)) == "owned"


def test_the_newest_values_are_kept_up_to_a_count_and_a_number_of_items(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memo, "ITEMS", 10)
    counted: Newest[str, int] = Newest(size=3)
    for n, key in enumerate("abcd"):
        counted.put(key, n, 0, key)
    assert counted.values() == [1, 2, 3]  # the oldest of four went

    counted.put("b", 4, 0, "b")  # put again: the newest
    assert counted.values() == [2, 3, 4]
    assert counted.get("a") is None
    assert counted.get("c") == 2

    sized: Newest[str, int] = Newest(size=8)
    for key, n in zip("wxyz", (4, 3, 4, 2), strict=True):
        sized.put(key, n, n, key)
    assert sized.values() == [3, 4, 2]  # 9 items; with the oldest, 13
    sized.put("big", 11, 11, "big")
    assert sized.values() == [11]  # the newest, whatever its size
    sized.put("big", 1, 1, "big")
    sized.put("w", 5, 5, "w")
    assert sized.values() == [1, 5]  # replacing a value counts its own items only


def test_a_lineage_keeps_its_last_few_values_and_leaves_the_others_alone() -> None:
    a, b = item("a"), item("b")
    kept: Newest[int, str] = Newest(size=8, per_lineage=2)
    kept.put(0, "b0", 1, b)
    for n in range(1, 5):
        kept.put(n, f"a{n}", 1, a)

    assert kept.values() == ["b0", "a3", "a4"]
    kept.put(3, "a3 again", 1, a)  # put again under its key: one of its lineage's two
    assert kept.values() == ["b0", "a4", "a3 again"]


def test_passes_are_remembered_for_many_pools_within_the_items_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pools = [[item(f"i{n}")] for n in range(memo.POOLS)]
    passes: Passes[int] = Passes()
    for n, pool in enumerate(pools):
        passes.put(pool, (), None, n)
    assert [passes.get(pool, ()) for pool in pools] == list(range(memo.POOLS))

    monkeypatch.setattr(memo, "ITEMS", 3)
    big = [item("a"), item("b")]
    passes.put(big, (), None, -1)
    assert passes.get(pools[-1], ()) == memo.POOLS - 1  # 1 + 2 items
    assert passes.get(pools[-2], ()) is None
    assert passes.get(big, ()) == -1


def test_puts_and_reads_from_several_threads_at_once_never_fail() -> None:
    """The service decides returns of different workspaces in threads at once."""
    shared: Newest[int, int] = Newest(size=8, per_lineage=2)
    lineages = [item(f"l{n}") for n in range(6)]
    failures: list[BaseException] = []

    def work(start: int) -> None:
        try:
            for n in range(start, start + 3000):
                shared.put(n % 40, n, n % 7, lineages[n % 6])
                assert len(shared.values()) <= 8
                shared.get(n % 40)
        except BaseException as exc:  # any failure in a thread is the finding
            failures.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        threads = [threading.Thread(target=work, args=(k * 10_000,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)

    assert failures == []
