"""A chain of premises of any length is decided whole, and let back whole.

Each step rests on the one before. Deciding one by recursion ran out of Python's stack at
about 330 steps (`RecursionError`, any return whose view held such a chain), and letting a
chain back, or tracing one outside C, took time that grew with the square of its length.
"""

from typing import Any

import pytest

from readmit.plugins import make_verifier
from readmit.store import WorkStateStore
from trip import at, depart, reason, replayed, ret

DEPTH = 1500  # well past what Python's default stack held (about 330)
STALE = {"implicitly_invalidated", "premise_invalidated"}


def chain(n: int, author: str, first: str, **extra: Any) -> list[dict[str, Any]]:
    """Items c0 … c{DEPTH}, each resting on the one before, asserted at minute ``n``."""
    steps = [{"id": "c0", "text": first, **extra}]
    steps += [
        {"id": f"c{k}", "text": f"Step {k} of the plan.", "depends_on": [f"c{k - 1}"], **extra}
        for k in range(1, DEPTH + 1)
    ]
    return [{"at": at(n), "author": author, "op": "assert", "item": s} for s in steps]


def booking(n: int, id: str) -> dict[str, Any]:
    item = {"id": id, "text": "Sunrise Hotel is booked."}
    return {"at": at(n), "author": "A2", "op": "assert", "item": item}


def test_a_long_chain_falls_with_its_first_step_and_comes_back_with_it(
    store: WorkStateStore,
) -> None:
    events = [
        booking(0, "h0"),
        *chain(1, "A2", "Pickup at 8:00 from Sunrise Hotel."),
        depart(2),
        {"at": at(3), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
        ret(4),
        depart(5),
        booking(6, "h1"),  # the booking stated again: the pickup's verdict lapses
        ret(7),
    ]

    fell, back = replayed(store, events, make_verifier("builtin"))

    assert reason(fell, "c0") == "implicitly_invalidated"
    assert {reason(fell, f"c{k}") for k in range(1, DEPTH + 1)} == {"premise_invalidated"}
    assert not {reason(back, f"c{k}") for k in range(DEPTH + 1)} & STALE
    assert back["outcome"] == "issued"


@pytest.mark.parametrize("revoked", [False, True])
def test_a_long_chain_outside_the_view_still_decides_what_rests_on_it(
    store: WorkStateStore, revoked: bool
) -> None:
    private = {"principals": ["neighbours"]}
    shared = {"id": "y", "text": "Book the Friday standup.", "readers": "*"}
    revoke = {"at": at(3), "author": "B1", "op": "revoke", "target": "c0", "why": "Atlas shut."}
    events = [
        *chain(0, "B1", "The standup room is Room Atlas.", readers=private),
        {"at": at(1), "author": "B1", "op": "assert",
         "item": {**shared, "depends_on": [f"c{DEPTH}"]}},
        depart(2),
        revoke if revoked else booking(3, "h0"),
        ret(4),
    ]  # fmt: skip

    [record] = replayed(store, events, make_verifier("builtin"))

    assert reason(record, "y") == ("premise_invalidated" if revoked else None)
    assert ("y" in record["items"]) is not revoked


TEXTS = {7: "Pickup at 8:00 from Sunrise Hotel."}


@pytest.mark.parametrize("revoked", [None, "b7", "c0", "h0"])
def test_a_private_chain_fanned_in_on_many_items_falls_with_any_of_them(
    store: WorkStateStore, revoked: str | None
) -> None:
    """The neighbours' private chain rests on a private root that rests on fifty items
    everyone reads; y rests on the chain's end. y falls with any of the fifty or the root,
    and stands otherwise (before, each step of the chain carried the fifty with it: a
    review's 3,000 items under a chain of 8,000 took 15.9 s a return)."""
    private = {"principals": ["neighbours"]}
    wide = [
        {"at": at(0), "author": "B1", "op": "assert",
         "item": {"id": f"b{n}", "text": TEXTS.get(n, f"Depot fact {n}."), "readers": "*"}}
        for n in range(50)
    ]  # fmt: skip
    root = {"at": at(0), "author": "B1", "op": "assert", "item": {
        "id": "r", "text": "The depot plan.", "readers": private,
        "depends_on": [f"b{n}" for n in range(50)]}}  # fmt: skip
    steps = chain(0, "B1", "The plan's first step.", readers=private)
    steps[0]["item"]["depends_on"] = ["r"]
    y = {"at": at(1), "author": "B1", "op": "assert", "item": {
        "id": "y", "text": "Book the depot tour.", "readers": "*",
        "depends_on": [f"c{DEPTH}"]}}  # fmt: skip
    author = "A2" if revoked == "h0" else "B1"
    gone = [{"at": at(3), "author": author, "op": "revoke", "target": revoked, "why": "x"}]
    events = [booking(0, "h0"), *wide, root, *steps, y, depart(2)]
    events += [*(gone if revoked else []), ret(4)]

    [record] = replayed(store, events, make_verifier("builtin"))

    assert reason(record, "y") == (None if revoked is None else "premise_invalidated")
    if revoked == "h0":
        assert reason(record, "b7") == "implicitly_invalidated"
