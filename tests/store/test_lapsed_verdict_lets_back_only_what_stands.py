"""A verdict lapsed since a departure lets back what the departure left out under it only
while that is still active (`readmit.store.let_back.readmitted`: what was withdrawn since
stays out)."""

from typing import Any

import pytest

from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from trip import assert_item, at, depart, reason, replayed, ret

BOOKED = "Sunrise Hotel is booked."

WITHDRAWALS: dict[str, list[dict[str, Any]]] = {
    "still active": [],
    "revoked since": [{"at": at(7), "author": "A2", "op": "revoke", "target": "p0", "why": "x"}],
    "closed since": [{"at": at(7), "author": "A2", "op": "close", "target": "p0"}],
}


@pytest.mark.parametrize("since", list(WITHDRAWALS))
def test_an_item_left_out_under_a_lapsed_verdict_comes_back_only_if_it_stands(
    store: WorkStateStore, since: str
) -> None:
    """The pickup falls with the booking at A1's first return, so its next departure leaves
    it out. The booking is stated again: the verdict lapses and the pickup, still active,
    comes back to be judged again and admitted. Withdrawn since, it stays out: not in the
    view, and nothing says it was in the checkpoint to be excluded."""
    events = [
        assert_item(0, "h0", BOOKED),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        depart(2),
        {"at": at(3), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
        ret(4),
        depart(5),
        assert_item(6, "hx", BOOKED),
        *WITHDRAWALS[since],
        ret(8),
    ]

    first, second = replayed(store, events, make_verifier("builtin"))

    assert reason(first, "p0") == "implicitly_invalidated"
    if since == "still active":
        assert "p0" in second["items"]
    else:
        assert "p0" not in second["items"]
        assert reason(second, "p0") is None
