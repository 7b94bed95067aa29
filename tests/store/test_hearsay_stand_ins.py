"""Hearsay never stands in for a withdrawn statement: not even for a statement that was
hearsay itself (`readmit.admission.invalidation.narrowed.holds_in_place`)."""

from typing import Any

from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from trip import assert_item, at, depart, reason, replayed, ret


def run(store: WorkStateStore, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return replayed(store, events, make_verifier("builtin"))


def test_hearsay_replacing_a_bounded_stand_in_restores_nothing(store: WorkStateStore) -> None:
    """An unconfirmed booking is superseded by one bounded to 18:00 (the pickup naming the
    hotel falls); unconfirmed news that the booking holds for the whole stay, in the
    bounded one's place, replaces nothing, so the pickup stays out at every later return."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", unconfirmed=True)
    bounded = {
        **assert_item(5, "h1", "The booking is confirmed.", valid_to=at(600)),
        "op": "supersede",
        "target": "h0",
    }
    whole = {
        **assert_item(7, "h2", "The booking is confirmed for the whole stay.", unconfirmed=True),
        "op": "supersede",
        "target": "h1",
    }
    pickup = assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel.")
    events = [booked, pickup, depart(3), depart(4, "A3"), bounded, ret(6), whole, ret(8, "A3")]

    first, other = run(store, events)

    assert reason(first, "p0") == "implicitly_invalidated"
    assert reason(other, "p0") == "implicitly_invalidated"
