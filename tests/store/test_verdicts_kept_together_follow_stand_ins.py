"""Verdicts one return keeps together each follow their stand-in from their own evidence,
the earliest included (`readmit.store.verdicts.remember`: the log is read from the earliest
evidence)."""

from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from trip import assert_item, at, depart, reason, replayed, ret


def test_a_stand_in_moved_before_a_later_verdicts_evidence_is_followed_to_the_end(
    store: WorkStateStore,
) -> None:
    """The booking is put in the place of one bounded to 18:00, which is replaced by another
    bounded one before the train is cancelled. A1's return keeps two verdicts: the pickup
    falls with the narrowed booking, the seats with the train. The bounded booking's
    replacement for the whole stay restores the booking: A3's return lets the pickup back
    (the verdict followed the stand-in to its second bounded booking) and keeps the seats
    out."""
    bounded = assert_item(5, "h1", "The booking is confirmed.", valid_to=at(600), readers="*")
    again = assert_item(
        6, "h1b", "The booking is confirmed, breakfast included.", valid_to=at(600), readers="*"
    )
    whole = assert_item(12, "h2", "The booking is confirmed for the whole stay.", readers="*")
    events = [
        assert_item(0, "h0", "Sunrise Hotel is booked."),
        assert_item(0, "t0", "The INC-42 train leaves at 9:10."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        assert_item(1, "q0", "Seats reserved on the INC-42 train."),
        depart(3),
        depart(3, "A3"),
        {**bounded, "op": "supersede", "target": "h0"},
        {**again, "op": "supersede", "target": "h1"},
        {"at": at(7), "author": "A2", "op": "revoke", "target": "t0", "why": "cancelled"},
        ret(8),
        {**whole, "op": "supersede", "target": "h1b"},
        ret(14, "A3"),
    ]

    first, later = replayed(store, events, make_verifier("builtin"))

    assert reason(first, "p0") == reason(first, "q0") == "implicitly_invalidated"
    assert "p0" in later["items"]
    assert reason(later, "p0") is None
    assert reason(later, "q0") == "implicitly_invalidated"
