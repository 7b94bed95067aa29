"""A verdict whose evidence has ended is replaced by the one a return confirms at that very
time (`readmit.store.verdicts.remember`: ``restore_until <= at``)."""

from typing import Any

from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from trip import assert_item, at, depart, reason, replayed, ret


def run(store: WorkStateStore, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return replayed(store, events, make_verifier("builtin"))


def test_a_verdict_confirmed_when_the_last_one_ended_binds_the_next_return(
    store: WorkStateStore,
) -> None:
    """The booking (until 9:00) is put in the place of one confirmed until 8:30: the pickup
    falls until 9:00, when both have ended. At 9:00 the pickup's train is found revoked and
    the pickup falls again: that verdict replaces the ended one, so the next departure
    leaves the pickup out and the next return does not judge it again (kept instead, the
    ended verdict let it back, to be judged once more)."""
    bounded = assert_item(5, "h1", "The booking is confirmed.", valid_to=at(30))
    events = [
        assert_item(0, "h0", "Sunrise Hotel is booked.", valid_to=at(60)),
        assert_item(0, "t0", "The INC-42 train leaves at 9:10."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel for the INC-42 train."),
        depart(3),
        {**bounded, "op": "supersede", "target": "h0"},
        ret(6),
        depart(7),
        {"at": at(8), "author": "A2", "op": "revoke", "target": "t0", "why": "cancelled"},
        ret(60),
        depart(61),
        ret(62),
    ]

    first, renewed, last = run(store, events)

    assert reason(first, "p0") == "implicitly_invalidated"
    assert reason(renewed, "p0") == "implicitly_invalidated"
    assert "p0" not in last["items"]
    assert last["judgment"]["calls"] == 0
