"""Edges of what counts as a narrowing (`readmit.admission.invalidation.narrowed`), through
the pipeline: a replacement that starts when the statement did, is hearsay in the place of
hearsay, or rests on fewer premises holds wherever the statement held, so what rests on the
statement stands; one that starts later, or is hearsay in a confirmed one's place, narrows."""

from typing import Any

import pytest

from readmit.plugins import make_verifier
from readmit.store import open_store
from trip import assert_item, at, depart, ret
from trip import replayed as _replayed

PICKUP = assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel.")


def run(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _replayed(open_store("sqlite://:memory:"), events, make_verifier("builtin"))


@pytest.mark.parametrize("words", ["The Sunrise Hotel booking is confirmed.", "same"])
def test_a_replacement_starting_when_the_statement_did_narrows_nothing(words: str) -> None:
    """A booking from 18:00, superseded by one from 18:00 too, before either has begun:
    the replacement holds wherever the booking did (the same start is no later start), so
    the pickup that names the hotel stands."""
    start = {"valid_from": at(600)}
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", **start)
    text = booked["item"]["text"] if words == "same" else words
    again = {**assert_item(5, "h3", text, **start), "op": "supersede", "target": "h0"}

    [record] = run([booked, PICKUP, depart(3), again, ret(6)])

    assert "p0" in record["items"]


def test_a_replacement_starting_later_than_the_statement_narrows_it() -> None:
    """The same booking from 18:30 in the place of one from 18:00 holds for less: the
    pickup resting on the hotel falls."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", valid_from=at(600))
    later = assert_item(5, "h3", "Sunrise Hotel is booked.", valid_from=at(630))
    again = {**later, "op": "supersede", "target": "h0"}

    [record] = run([booked, PICKUP, depart(3), again, ret(6)])

    assert "p0" not in record["items"]


@pytest.mark.parametrize("words", ["The Sunrise Hotel booking is confirmed.", "same"])
def test_hearsay_in_the_place_of_hearsay_narrows_nothing(words: str) -> None:
    """An unconfirmed booking superseded by another unconfirmed one loses no confirmation
    it had: the replacement is not a withdrawal, and the pickup naming the hotel stands."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", unconfirmed=True)
    text = booked["item"]["text"] if words == "same" else words
    again = {**assert_item(5, "h3", text, unconfirmed=True), "op": "supersede", "target": "h0"}

    [record] = run([booked, PICKUP, depart(3), again, ret(6)])

    assert "p0" in record["items"]


def test_hearsay_in_the_place_of_a_confirmed_statement_narrows_it() -> None:
    """The same booking, but only as hearsay, in the place of a confirmed one: the pickup
    resting on the hotel falls."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.")
    hearsay = assert_item(5, "h3", "Sunrise Hotel is booked.", unconfirmed=True)
    again = {**hearsay, "op": "supersede", "target": "h0"}

    [record] = run([booked, PICKUP, depart(3), again, ret(6)])

    assert "p0" not in record["items"]


AGENCY = assert_item(0, "d", "The agency account is open.")
CARD = assert_item(0, "e", "The card on file is valid.")


@pytest.mark.parametrize("now", [[], ["d"]], ids=["no premise", "one of its premises"])
def test_a_replacement_resting_on_fewer_premises_narrows_nothing(now: list[str]) -> None:
    """A booking resting on the agency account and the card, replaced in other words by one
    resting on fewer of them: it holds wherever the booking did, so the pickup stands."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", depends_on=["d", "e"])
    fewer = assert_item(5, "h3", "The Sunrise Hotel booking is confirmed.", depends_on=now)
    again = {**fewer, "op": "supersede", "target": "h0"}

    [record] = run([AGENCY, CARD, booked, PICKUP, depart(3), again, ret(6)])

    assert "p0" in record["items"]
