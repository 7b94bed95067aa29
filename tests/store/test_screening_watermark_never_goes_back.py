"""A reader's screening watermark never goes back: a return decided beside a later one of a
reader like its own, and recorded after it, leaves the later one's reach
(`readmit.store.verdicts.remember`: ``through`` is the greater of the two)."""

from readmit.admission.invalidation.implicit import Verdict
from readmit.store import WorkStateStore
from readmit.testing import FunctionVerifier
from trip import AGENTS, assert_item, depart, replayed_beside, ret

ITINERARY = [*AGENTS, {"id": "A4", "principal": "family", "role": "itinerary"}]
"""A1, A3 and A4 read as one reader: the family's itinerary role."""


def test_a_return_recorded_after_a_later_one_of_its_reader_leaves_that_ones_reach(
    store: WorkStateStore,
) -> None:
    """A1 returns after one note on the hotel and judges the pickup against it. While its
    return is decided, a second note comes and A3, read as A1 is, returns and judges the
    pickup against both. A1's return, recorded last, reached only the first note: A3's
    reach stands, so A4, a third such reader away since before both notes, judges nothing
    (sent back to A1's reach, it would judge the pickup against the second note again)."""
    verifier = FunctionVerifier(lambda pair: Verdict(invalidates=False, confidence=1.0))
    events = [
        assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        depart(3),
        depart(3, "A3"),
        depart(3, "A4"),
        assert_item(5, "n1", "Sunrise Hotel moved breakfast to 7:00."),
        ret(8),
        ret(14, "A4"),
    ]
    beside = [assert_item(9, "n2", "Sunrise Hotel changed its check-in desk."), ret(10, "A3")]

    (by_a3, a3_judged), (by_a1, _), (by_a4, a4_judged) = replayed_beside(
        store, events, beside, verifier, ITINERARY
    )

    assert [r["agent"] for r in (by_a3, by_a1, by_a4)] == ["A3", "A1", "A4"]
    assert {(p.later.event_id, p.earlier.id) for p in a3_judged} >= {
        ("e4", "p0"),
        ("beside-0", "p0"),
    }
    assert "p0" in by_a4["items"]
    assert a4_judged == []
    assert by_a4["judgment"]["calls"] == 0
