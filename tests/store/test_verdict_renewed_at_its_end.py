"""A verdict whose evidence has ended is replaced by the one a return confirms at that very
time (`readmit.store.verdicts.remember`: ``restore_until <= at``)."""

from typing import Any

from readmit.clock import parse_time
from readmit.events import ReturnRequest
from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from readmit.store.sql import SqlStore
from trip import assert_item, at, depart, reason, replayed, ret


def run(store: WorkStateStore, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return replayed(store, events, make_verifier("builtin"))


BOOKED = [  # the pickup rests on the booking (until 9:00) and on the train
    assert_item(0, "h0", "Sunrise Hotel is booked.", valid_to=at(60)),
    assert_item(0, "t0", "The INC-42 train leaves at 9:10."),
    assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel for the INC-42 train."),
    depart(3),
    {  # in the booking's place, until 8:30: the pickup falls until both have ended
        **assert_item(5, "h1", "The booking is confirmed.", valid_to=at(30)),
        "op": "supersede",
        "target": "h0",
    },
    ret(6),
]
CANCELLED = {"at": at(8), "author": "A2", "op": "revoke", "target": "t0", "why": "cancelled"}


def test_a_verdict_confirmed_when_the_last_one_ended_binds_the_next_return(
    store: WorkStateStore,
) -> None:
    """The booking (until 9:00) is put in the place of one confirmed until 8:30: the pickup
    falls until 9:00, when both have ended. At 9:00 the pickup's train is found revoked and
    the pickup falls again: that verdict replaces the ended one, so the next departure
    leaves the pickup out and the next return does not judge it again (kept instead, the
    ended verdict let it back, to be judged once more)."""
    events = [*BOOKED, depart(7), CANCELLED, ret(60), depart(61), ret(62)]

    first, renewed, last = run(store, events)

    assert reason(first, "p0") == "implicitly_invalidated"
    assert reason(renewed, "p0") == "implicitly_invalidated"
    assert "p0" not in last["items"]
    assert last["judgment"]["calls"] == 0


def test_a_verdict_renewed_with_nothing_new_since_the_departure_is_named_at_every_return(
    store: WorkStateStore,
) -> None:
    """The departure at 8:09 left the pickup out under a verdict that ends at 9:00. At
    9:00 it is let back and found stale again on the train's revocation, from before the
    departure: the new verdict is decided at the departure's own epoch. A second return
    to the same departure found it standing and named the pickup nowhere (a probe: the
    epoch could not tell the verdict that left it out from the one decided since)."""
    events = [*BOOKED, CANCELLED, depart(9), ret(60), ret(61), ret(62)]

    first, renewed, *again = run(store, events)

    assert reason(first, "p0") == "implicitly_invalidated"
    assert reason(renewed, "p0") == "implicitly_invalidated"
    assert [reason(d, "p0") for d in again] == ["implicitly_invalidated"] * 2
    assert all("p0" not in d["items"] for d in again)


def test_a_checkpoint_from_before_m030_keeps_out_what_its_own_verdict_still_holds(
    store: WorkStateStore,
) -> None:
    """A checkpoint made before m030 kept no verdict's number: its return lets an item
    back only where the verdict on it was decided after the departure, as before."""
    events = [
        assert_item(0, "t0", "The INC-42 train leaves at 9:10."),
        assert_item(1, "p0", "Pickup at 8:00 for the INC-42 train."),
        depart(3),
        {**CANCELLED, "at": at(4)},
        ret(6),
        depart(7),
    ]
    (first,) = run(store, events)
    assert isinstance(store, SqlStore)
    with store.conn.transaction():
        kept = store.conn.execute("SELECT item, verdict FROM checkpoint_left_out").fetchall()
        store.conn.execute("UPDATE checkpoint_left_out SET verdict = NULL")
    request = ReturnRequest(id="r", at=parse_time(at(10)), agent="A1", task="trip", purpose="p")

    ctx = store.return_context("trip", request)

    assert reason(first, "p0") == "implicitly_invalidated"
    assert [tuple(r) for r in kept] == [("p0", 1)]
    assert "p0" not in {i.id for i in ctx.items}
    assert "p0" in {i.id for i in ctx.left_out}
