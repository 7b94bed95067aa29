from builders import item
from readmit.admission.invalidation.propagation import propagate
from readmit.reasons import Exclusion, Reason, Stage

GONE = Exclusion(item="a", reason=Reason.REVOKED, stage=Stage.EXPLICIT)


def test_a_chain_of_premises_fails_as_a_whole() -> None:
    b = item("b", depends_on=("a",))
    c = item("c", depends_on=("b",))
    d = item("d")

    kept, fallen = propagate([b, c, d], [GONE])

    assert kept == [d]
    assert {(e.item, e.reason, e.evidence) for e in fallen} == {
        ("b", Reason.PREMISE_INVALIDATED, ("a",)),
        ("c", Reason.PREMISE_INVALIDATED, ("b",)),
    }


def test_items_with_surviving_premises_are_kept() -> None:
    b = item("b", depends_on=("z",))

    kept, fallen = propagate([b], [GONE])

    assert kept == [b]
    assert fallen == []


def test_cycles_terminate() -> None:
    b = item("b", depends_on=("a", "c"))
    c = item("c", depends_on=("b",))

    kept, fallen = propagate([b, c], [GONE])

    assert kept == []
    assert len(fallen) == 2


def test_the_same_pool_falls_again_from_what_is_excluded_this_time() -> None:
    """A closure is remembered per pool and exclusions: other exclusions, another closure."""
    b = item("b", depends_on=("a",))
    c = item("c", depends_on=("z",))
    propagate([b, c], [GONE])

    kept, fallen = propagate(
        [b, c], [Exclusion(item="z", reason=Reason.REVOKED, stage=Stage.EXPLICIT)]
    )

    assert kept == [b]
    assert [(e.item, e.evidence) for e in fallen] == [("c", ("z",))]
