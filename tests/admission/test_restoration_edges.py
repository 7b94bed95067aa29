"""A return does not judge an observation whose premise came back before it
(`readmit.admission.invalidation.restored`): edges of "came back"."""

from typing import Any

import pytest

from readmit.plugins import make_verifier
from readmit.store import open_store
from trip import assert_item, at, depart, reason, replayed, ret

BOOKED = "Sunrise Hotel is booked."
PICKUP = assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel.")


def run(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return replayed(open_store("sqlite://:memory:"), events, make_verifier("builtin"))


def test_a_statement_made_before_and_after_a_withdrawal_restores_it() -> None:
    """The booking is stated again once before its revocation (no restatement: it came
    first) and once after, by the same author for the same readers: the later one restores
    it, so the pickup is not judged against the revocation, at this return or the next."""
    revoke = {"at": at(6), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"}
    events = [
        assert_item(0, "h0", BOOKED),
        PICKUP,
        depart(3),
        assert_item(5, "hx", BOOKED),
        revoke,
        assert_item(7, "hy", BOOKED),
        ret(8),
        depart(9),
        ret(10),
    ]

    first, second = run(events)

    assert reason(first, "p0") is None
    assert "p0" in first["items"]
    assert "p0" in second["items"]


def test_a_statement_made_only_before_a_withdrawal_restores_nothing() -> None:
    """The same, without the statement after: the pickup falls with the booking."""
    revoke = {"at": at(6), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"}
    events = [assert_item(0, "h0", BOOKED), PICKUP, depart(3), assert_item(5, "hx", BOOKED)]

    [first] = run([*events, revoke, ret(8)])

    assert reason(first, "p0") == "implicitly_invalidated"


@pytest.mark.parametrize(
    ("author", "restored"), [("B1", False), ("A2", True)], ids=["cannot read", "can read"]
)
def test_a_stand_in_replaced_restores_the_statement_only_by_one_who_may_read_it(
    author: str, restored: bool
) -> None:
    """The family's booking is put in the place of one bounded to 18:00 that everyone
    reads; before A1 returns, that is replaced by one for the whole stay. By the
    neighbours' agent, who may not read the booking: its author never knew the statement,
    so nothing restored it, the pickup is judged against the narrowing and falls. By the
    family's own agent: the booking holds again for the whole stay, and the pickup stands."""
    family = {"principals": ["family"]}
    bounded = assert_item(5, "h1", "The booking is confirmed.", valid_to=at(600), readers="*")
    whole = assert_item(6, "h2", "The booking is confirmed for the whole stay.", readers="*")
    events = [
        assert_item(0, "h0", BOOKED, readers=family),
        {**PICKUP, "item": {**PICKUP["item"], "readers": family}},
        depart(3),
        {**bounded, "op": "supersede", "target": "h0"},
        {**whole, "author": author, "op": "supersede", "target": "h1"},
        ret(7),
    ]

    [first] = run(events)

    if restored:
        assert reason(first, "p0") is None
        assert "p0" in first["items"]
    else:
        assert reason(first, "p0") == "implicitly_invalidated"
