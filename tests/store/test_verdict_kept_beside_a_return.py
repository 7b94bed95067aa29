"""A standing verdict is not replaced by one a return decided beside it, on a context read
before it was stored (`readmit.store.verdicts.remember`: the upsert's ``WHERE``)."""

from typing import Any

from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from trip import assert_item, at, depart, reason, replayed_beside, ret


def cited(record: dict[str, Any], item: str) -> list[str]:
    """The evidence ``record`` excluded ``item`` on."""
    return next(list(e["evidence"]) for e in record["excluded"] if e["item"] == item)


def test_a_verdict_stored_while_a_return_was_decided_stays_for_the_next_return(
    store: WorkStateStore,
) -> None:
    """A1 returns after the hotel booking was revoked and judges the pickup fallen with it.
    While its return is decided, the booking is stated again, the train is cancelled and A2
    returns: the booking came back, so A2 judges the pickup fallen with the train, and keeps
    that verdict. A1's verdict, recorded last, rests on the booking, restored since: the
    train's verdict stands, so A3's return excludes the pickup without judging it again
    (replaced by A1's, lapsed at once, the pickup would be screened anew)."""
    train = {"at": at(10), "author": "A2", "op": "revoke", "target": "t0", "why": "cancelled"}
    events = [
        assert_item(0, "h0", "Sunrise Hotel is booked."),
        assert_item(0, "t0", "The INC-42 train leaves at 9:10."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel for the INC-42 train."),
        depart(3),
        depart(3, "A2"),
        depart(3, "A3"),
        {"at": at(5), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
        ret(8),
        ret(14, "A3"),
    ]
    beside = [assert_item(9, "hx", "Sunrise Hotel is booked."), train, ret(11, "A2")]

    (by_a2, _), (by_a1, _), (by_a3, _) = replayed_beside(
        store, events, beside, make_verifier("builtin")
    )

    assert [r["agent"] for r in (by_a2, by_a1, by_a3)] == ["A2", "A1", "A3"]
    assert reason(by_a1, "p0") == reason(by_a2, "p0") == "implicitly_invalidated"
    assert (cited(by_a1, "p0"), cited(by_a2, "p0")) == (["e6"], ["beside-1"])
    assert reason(by_a3, "p0") == "implicitly_invalidated"
    assert cited(by_a3, "p0") == ["beside-1"]
    assert (by_a3["judgment"]["standing"], by_a3["judgment"]["calls"]) == (1, 0)
