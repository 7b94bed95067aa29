"""`Held.judged_since`: the verdicts stored since a numbered store of verdicts (m031), for
the memory layers that serve between returns (`readmit.integrations.following`)."""

from readmit.clock import parse_time
from readmit.events import Assert, ItemDraft, ReturnRequest
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


def test_each_store_of_verdicts_is_numbered_and_read_after_a_number(
    store: WorkStateStore,
) -> None:
    """The return stores one verdict, as store 1: found after 0, not after 1; the
    context of a return after it reads 1; a lapsed one is not found (the booking
    restated), but its number is."""
    [first] = replayed(store, [*BOOKED, ret(5)], make_verifier("builtin"))
    now = parse_time(at(6))

    assert reason(first, "p0") == "implicitly_invalidated"
    last, [found] = store.judged_since("trip", 0, now)
    assert (last, found.item, found.decided_epoch, found.verifier) == (1, "p0", 4, "builtin")
    assert found.evidence == tuple(first["excluded"][0]["evidence"])
    assert found.reader == ("family", "itinerary")
    assert store.judged_since("trip", 1, now) == (1, [])

    again = ItemDraft(id="h1", text="Sunrise Hotel is booked.")
    store.append("trip", [Assert(id="e-h1", at=parse_time(at(7)), author="A2", item=again)])
    assert store.judged_since("trip", 0, now) == (1, [])  # restated: the verdict lapsed


def test_a_return_context_reads_the_number_of_the_last_store(store: WorkStateStore) -> None:
    """What a memory layer serving after the return starts from (`ReturnContext.noted`)."""
    replayed(store, [*BOOKED, ret(5)], make_verifier("builtin"))  # store 1
    store.depart("trip", "A1", parse_time(at(6)))
    request = ReturnRequest(id="r", at=parse_time(at(7)), agent="A1", task="trip", purpose="x")

    assert store.return_context("trip", request).noted == 1
    store.depart("trip", "A3", parse_time(at(8)))
    other = ReturnRequest(id="r3", at=parse_time(at(9)), agent="A3", task="trip", purpose="x")
    assert store.return_context("trip", other).noted == 1
