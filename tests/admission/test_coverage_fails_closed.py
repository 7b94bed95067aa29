"""Coverage fails closed: an obligation needs its own record as well as its frontier, and a
view must meet both thresholds, γ on the obligations and ρ on the critical dependencies."""

from builders import item, obligation
from readmit.admission.coverage import Coverage, cover, measure
from readmit.model import Item
from readmit.policy import Policy

O_H = obligation("o_h", requires=("d_h",), critical=("d_h",))
H1 = item("h1", "Riverside Hotel is booked.", supports=("d_h",))


def test_an_obligation_without_its_own_record_is_not_covered() -> None:
    coverage = measure([O_H.frontier, H1], [O_H])

    (each,) = coverage.per_obligation
    assert (each.met, each.record, each.frontier, each.missing) == (False, False, True, ())
    assert coverage.obligations == 0.0
    assert coverage.critical == 1.0
    assert not coverage.meets(Policy())


def test_coverage_meets_a_policy_only_if_both_thresholds_hold() -> None:
    policy = Policy(gamma=0.5, rho=0.5)

    assert Coverage(obligations=0.5, critical=0.5).meets(policy)
    assert not Coverage(obligations=1.0, critical=0.4).meets(policy)
    assert not Coverage(obligations=0.4, critical=1.0).meets(policy)
    assert not Coverage(obligations=0.0, critical=0.0).meets(policy)


def test_an_item_the_screen_turns_down_is_neither_selected_nor_left_out() -> None:
    o = obligation("o", requires=("d_c",))
    stale = item("stale", "Quiet hotel near the station.", supports=("d_c",))
    fresh = item("fresh", "Quiet hotel by the river, near the station.", supports=("d_c",))
    other = item("other", "Nice weather today.", epoch=2)

    selection = cover(
        [o.item, o.frontier, stale, fresh, other],
        [o],
        Policy(),
        screen=lambda m: m.id != "stale",
    )

    assert [i.id for i in selection.items] == ["o", "f_o", "fresh", "other"]
    assert selection.left_out == ()
    assert "stale" not in {e.item for e in selection.dropped}


def test_the_screen_is_asked_about_an_item_once_and_its_no_stands() -> None:
    """The greedy cover offers the best supporter first; once turned down, the fill does not
    offer it again (each question may cost a judgment, and a later yes would admit an item
    already excluded)."""
    o = obligation("o", requires=("d_c",))
    stale = item("stale", "Quiet hotel.", supports=("d_c",))
    asked: list[str] = []

    def screen(m: Item) -> bool:
        asked.append(m.id)
        return m.id != "stale" or asked.count("stale") > 1  # a yes only when asked again

    selection = cover([o.item, o.frontier, stale], [o], Policy(fill=True), screen=screen)

    assert asked.count("stale") == 1
    assert "stale" not in [i.id for i in selection.items]
