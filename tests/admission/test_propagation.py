from datetime import timedelta

from builders import KEY, NOW, context, item
from readmit.admission import Issued, admit
from readmit.admission.invalidation.propagation import propagate
from readmit.model import Validity
from readmit.policy import Policy
from readmit.reasons import Exclusion, Reason, Stage
from readmit.signing import HmacSha256Signer

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


def test_an_item_whose_premise_expired_falls_with_it() -> None:
    """A premise whose validity ended is invalid for current use: a departure checkpoint
    does not hold what depends on it, and a return does not admit it (a review found the
    return admitting it: the gates ran after premises were propagated)."""
    room = item(
        "p", "The standup room is Room Delta.", validity=Validity(valid_to=NOW - timedelta(hours=1))
    )
    projector = item("t", "Bring the projector to the standup.", depends_on=("p",))
    other = item("o", "Quiet rooms preferred.")

    decision = admit(
        context((room, projector, other)),
        policy=Policy(),
        verifier=None,
        signer=HmacSha256Signer(KEY),
    )

    reasons = {e.item: e.reason for e in decision.decided}
    assert reasons == {"p": Reason.EXPIRED, "t": Reason.PREMISE_INVALIDATED}
    assert isinstance(decision, Issued)
    assert [i.id for i in decision.items if i.id in ("t", "o")] == ["o"]
