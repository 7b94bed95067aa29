from dataclasses import replace

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from builders import item, obligation
from readmit.admission import coverage
from readmit.admission.coverage import cover, gain, measure
from readmit.model import Item, Obligation
from readmit.policy import Policy
from readmit.reasons import Reason
from strategies import items

O_H = obligation("o_h", requires=("d_h", "d_c"), critical=("d_h", "d_c"))
O_T = obligation("o_t", requires=("d_t", "d_p", "d_c"), critical=("d_t", "d_p", "d_c"))
STRUCTURE = [O_H.item, O_H.frontier, O_T.item, O_T.frontier]
C = item("c", "Quiet hotel under $300.", supports=("d_c",))
H1 = item("h1", "Riverside Hotel is booked.", supports=("d_h",))
T1 = item("t1", "Train at 9:30.", supports=("d_t",))
P1 = item("p1", "Pickup 8:30 at Riverside.", supports=("d_p",))


def test_structure_is_found_by_id_when_eligible_holds_copies_of_it() -> None:
    """The obligations' items are looked for by identity first; equal copies count too."""
    copies = [replace(i) for i in STRUCTURE]
    for eligible in ([C, *STRUCTURE], [C, *copies], [*copies[:2], C, *STRUCTURE[2:]]):
        selection = cover(eligible, [O_H, O_T], Policy.paper())

        assert [i.id for i in selection.items][:4] == ["o_h", "f_o_h", "o_t", "f_o_t"]
    absent = cover([C, *STRUCTURE[:2]], [O_H, O_T], Policy.paper())
    assert [i.id for i in absent.items][:2] == ["o_h", "f_o_h"]
    assert "o_t" not in [i.id for i in absent.items]


def test_the_papers_coverage_before_confirmation() -> None:
    coverage = measure([*STRUCTURE, C, H1, T1], [O_H, O_T])

    assert (coverage.obligations, coverage.critical) == (0.5, 0.75)


def test_the_papers_coverage_after_confirmation() -> None:
    coverage = measure([*STRUCTURE, C, H1, T1, P1], [O_H, O_T])

    assert (coverage.obligations, coverage.critical) == (1.0, 1.0)


def test_no_obligations_means_full_coverage() -> None:
    coverage = measure([], [])

    assert (coverage.obligations, coverage.critical) == (1.0, 1.0)


def test_an_obligation_without_its_frontier_is_not_covered() -> None:
    coverage = measure([O_H.item, C, H1], [O_H])

    assert coverage.obligations == 0.0
    assert coverage.critical == 1.0


def test_gain_weighs_critical_dependencies_twice_per_character() -> None:
    weights = {"d_h": 2, "d_x": 1}
    both = item("m", "x" * 10, supports=("d_h", "d_x", "d_other"))

    assert gain(both, frozenset(), weights) == pytest.approx(3 / 10)
    assert gain(both, frozenset({"d_h"}), weights) == pytest.approx(1 / 10)


def test_selection_takes_structure_first_then_best_gain() -> None:
    selection = cover([*STRUCTURE, C, H1, T1, P1], [O_H, O_T], Policy.paper())

    assert [i.id for i in selection.items][:4] == ["o_h", "f_o_h", "o_t", "f_o_t"]
    assert [i.id for i in selection.items][4:] == ["t1", "c", "p1", "h1"]


def test_redundant_and_irrelevant_items_are_not_selected() -> None:
    longer = item(
        "h_long", "Riverside Hotel is booked, with breakfast included.", supports=("d_h",)
    )
    chatter = item("chat", "Nice weather today.")

    selection = cover([*STRUCTURE, C, H1, longer, chatter], [O_H], Policy(fill=False))

    assert {e.item: e.reason for e in selection.dropped} == {
        "o_t": Reason.NOT_SELECTED,
        "f_o_t": Reason.NOT_SELECTED,
        "h_long": Reason.NOT_SELECTED,
        "chat": Reason.NOT_SELECTED,
    }


def test_item_budget_is_never_exceeded() -> None:
    selection = cover([*STRUCTURE, C, H1, T1, P1], [O_H, O_T], Policy(max_items=5))

    assert len(selection.items) == 5
    assert not selection.coverage.meets(Policy())


def test_character_budget_is_never_exceeded() -> None:
    budget = sum(len(i.text) for i in STRUCTURE) + len(T1.text)

    selection = cover([*STRUCTURE, C, H1, T1, P1], [O_H, O_T], Policy(max_chars=budget))

    assert sum(len(i.text) for i in selection.items) <= budget
    assert [i.id for i in selection.items][4:] == ["t1"]


def test_ties_break_on_length_then_id() -> None:
    b = item("b", "same", supports=("d_c",))
    a = item("a", "same", supports=("d_c",))
    o = obligation("o", requires=("d_c",))

    selection = cover([o.item, o.frontier, b, a], [o], Policy(fill=False))

    assert [i.id for i in selection.items] == ["o", "f_o", "a"]


def test_fill_adds_the_most_recent_remaining_items_within_budget() -> None:
    old = item("old", "Old note.", epoch=2)
    new = item("new", "New note.", epoch=4)
    newer = item("newer", "Newest note.", epoch=5)

    selection = cover([C, old, new, newer], [], Policy(max_items=3))

    assert [i.id for i in selection.items] == ["newer", "new", "old"]
    assert [e.item for e in selection.dropped] == ["c"]


def test_relevance_selection_ranks_by_overlap_with_the_open_work() -> None:
    pickup = obligation("o_p", requires=("d_p",))
    on_topic = item("x", "Obligation o_p pickup frontier note.", epoch=1)
    recent = item("y", "Unrelated weather note.", epoch=9)

    selection = cover([recent, on_topic, P1], [pickup], Policy(selection="relevance", max_items=2))

    assert [i.id for i in selection.items] == ["x", "y"]


def test_coverage_names_each_missing_requirement_and_who_needs_it() -> None:
    coverage = measure([*STRUCTURE, C, H1, T1], [O_H, O_T])

    assert [(m.requirement, m.obligations, m.critical) for m in coverage.missing] == [
        ("d_p", ("o_t",), True)
    ]


def test_coverage_per_obligation_says_what_each_lacks() -> None:
    coverage = measure([O_H.item, C, H1, T1, O_T.item, O_T.frontier], [O_H, O_T])

    by_id = {o.obligation: o for o in coverage.per_obligation}
    assert (by_id["o_h"].met, by_id["o_h"].record, by_id["o_h"].frontier) == (False, True, False)
    assert by_id["o_h"].missing == ()
    assert (by_id["o_t"].met, by_id["o_t"].missing) == (False, ("d_p",))


def test_full_coverage_misses_nothing() -> None:
    coverage = measure([*STRUCTURE, C, H1, T1, P1], [O_H, O_T])

    assert coverage.missing == ()
    assert all(o.met for o in coverage.per_obligation)


@given(st.data())
def test_with_no_query_the_fill_takes_the_newest_then_the_smallest_id(data: st.DataObject) -> None:
    # The fill ranks by words shared with the query, then newest, then id: with no query
    # (every overlap 0) that order is built without per-item keys, and must not change.
    pool = list(data.draw(items(n_max=12)))
    shuffled = data.draw(st.permutations(pool))
    policy = Policy(max_items=data.draw(st.integers(1, 12)), max_chars=100_000)

    unshared = cover(shuffled, (), policy, query="xylophone").items  # words no item has
    none = cover(shuffled, (), policy, query=None).items

    assert none == unshared
    expected = sorted(pool, key=lambda m: (-m.epoch, m.id))[: policy.max_items]
    assert [m.id for m in none] == [m.id for m in expected]


def test_not_selected_records_stay_right_when_their_table_starts_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table of ``not_selected`` records is bounded: when it fills it starts over, and
    every item still gets its own record."""
    monkeypatch.setattr(coverage._NotSelected, "LIMIT", 2)
    items = [item(f"m{n}", f"fact {n}", epoch=n + 1) for n in range(5)]

    for _ in range(2):
        selection = cover(items, [], Policy(max_items=1))

        assert [e.item for e in selection.dropped] == ["m0", "m1", "m2", "m3"]
        assert {e.reason for e in selection.dropped} == {Reason.NOT_SELECTED}


@given(st.data())
def test_newest_first_is_the_relevance_order_when_no_word_is_shared(data: st.DataObject) -> None:
    """Ties of epoch (one event, several items) fall back to id order, whatever the input."""
    pool = data.draw(st.permutations(data.draw(items(n_max=30))))

    expected = sorted(pool, key=coverage.relevance(frozenset()))
    assert list(coverage._newest_first(pool)) == expected


def test_the_same_pool_under_another_budget_is_selected_and_dropped_afresh() -> None:
    """A pool's order and its dropped records are remembered; a return that chooses
    differently from the same pool drops what it did not choose."""
    old, new, newer = (item(n, epoch=e) for n, e in (("old", 1), ("new", 2), ("newer", 3)))
    cover([old, new, newer], [], Policy(max_items=1))

    selection = cover([old, new, newer], [], Policy(max_items=2))

    assert [i.id for i in selection.items] == ["newer", "new"]
    assert [e.item for e in selection.dropped] == ["old"]


def _rescanning_greedy(
    eligible: list[Item],
    obligations: list[Obligation],
    turned_down: set[str],
    items: int,
    chars: int,
) -> list[str]:
    """The greedy cover as eq. 5 states it: rescan every supporter for the best gain."""
    weights = {d: 1 for o in obligations for d in o.requires}
    weights.update({d: 2 for o in obligations for d in o.critical})
    left, covered, taken = list(eligible), frozenset[str](), list[str]()
    while True:
        scored = [
            ((-g, len(m.text), m.id), m)
            for m in left
            if (g := gain(m, covered, weights)) > 0 and items >= 1 and chars >= len(m.text)
        ]
        if not scored:
            return taken
        best = min(scored, key=lambda s: s[0])[1]
        left.remove(best)
        if best.id not in turned_down:
            taken.append(best.id)
            covered |= best.supports
            items, chars = items - 1, chars - len(best.text)


@given(
    st.lists(
        st.tuples(
            st.sets(st.sampled_from(["d1", "d2", "d3", "d4", "dx"]), max_size=3),
            st.integers(1, 30),
            st.booleans(),
        ),
        max_size=30,
    ),
    st.integers(1, 8),
    st.integers(10, 200),
)
@example([({"d1", "d3"}, 20, False), ({"d1"}, 10, False)], 1, 200)  # a tie: the shorter
def test_the_greedy_cover_takes_what_rescanning_for_the_best_gain_takes(
    specs: list[tuple[set[str], int, bool]], max_items: int, max_chars: int
) -> None:
    """The cover keeps items in a heap by their last gain; it must take exactly what a
    rescan of every supporter at each step takes, ties and turned-down items included."""
    task = obligation("o", requires=("d1", "d2", "d3"), critical=("d2",))
    other = obligation("o2", requires=("d4",), critical=())
    eligible = [
        item(f"m{n:02}", "x" * size, supports=tuple(sorted(supports)))
        for n, (supports, size, _) in enumerate(specs)
    ]
    turned_down = {f"m{n:02}" for n, (_, _, no) in enumerate(specs) if no}
    structure = [task.item, task.frontier, other.item, other.frontier]
    room = sum(len(i.text) for i in structure)
    policy = Policy(max_items=max_items + 4, max_chars=max_chars + room, fill=False)

    selection = cover(
        [*structure, *eligible], [task, other], policy, screen=lambda m: m.id not in turned_down
    )

    expected = _rescanning_greedy(eligible, [task, other], turned_down, max_items, max_chars)
    assert [i.id for i in selection.items][4:] == expected
