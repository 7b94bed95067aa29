"""`Held.judged_since`: the verdicts stored once the log had reached an epoch (m031), for
the memory layers that serve between returns (`readmit.integrations.following`)."""

from readmit.clock import parse_time
from readmit.events import Assert, ItemDraft
from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from trip import assert_item, at, depart, reason, replayed, ret

BOOKED = [
    assert_item(0, "h0", "Sunrise Hotel is booked."),
    assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
    depart(2),
    {"at": at(3), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
    assert_item(4, "m0", "The museum opens at nine."),
]


def test_a_verdict_is_found_from_the_logs_epoch_when_it_was_stored(
    store: WorkStateStore,
) -> None:
    """Stored at the return, once the log held four events: found from any epoch up to
    four, and not after it; a lapsed one is not found (the booking restated)."""
    [first] = replayed(store, [*BOOKED, ret(5)], make_verifier("builtin"))
    now = parse_time(at(6))

    assert reason(first, "p0") == "implicitly_invalidated"
    assert [v.item for v in store.judged_since("trip", 0, now)] == ["p0"]
    [found] = store.judged_since("trip", 4, now)
    assert (found.item, found.decided_epoch, found.verifier) == ("p0", 4, "builtin")
    assert found.evidence == tuple(first["excluded"][0]["evidence"])
    assert found.reader == ("family", "itinerary")
    assert store.judged_since("trip", 5, now) == []

    again = ItemDraft(id="h1", text="Sunrise Hotel is booked.")
    store.append("trip", [Assert(id="e-h1", at=parse_time(at(7)), author="A2", item=again)])
    assert store.judged_since("trip", 0, now) == []  # restated: the verdict lapsed
