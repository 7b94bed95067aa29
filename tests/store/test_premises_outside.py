"""A premise the return's C does not hold still decides whether what builds on it stands.

D_a holds only what the agent may read: Y, which everyone reads, can rest on X, which
only the neighbours read, or (asserted while the agent was away) on an item withdrawn
before it left. When X falls, Y falls with it, as the agent's next departure would judge,
and an agent that may not read X is told neither its id nor why.
"""

import json
from typing import Any

import pytest

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.admission.view import verify_view
from readmit.cli.words import hidden_split
from readmit.clock import parse_time
from readmit.decide import Decided
from readmit.integrations.agents_sdk_view import preamble
from readmit.integrations.team import removals
from readmit.plugins import make_verifier
from readmit.replay import replay
from readmit.report import agent_copy
from readmit.scenario import load_scenario
from readmit.store import WorkStateStore
from readmit.testing import FunctionVerifier
from trip import SIGNER, at, depart, ret

PRIVATE = {"principals": ["neighbours"]}


def scenario(events: list[dict[str, Any]], policy: dict[str, Any] | None = None) -> dict[str, Any]:
    agents = [("A1", "family"), ("A2", "family"), ("B1", "neighbours")]
    return {
        "format": "readmit.scenario/1",
        "workspace": "trip",
        "agents": [{"id": a, "principal": p, "role": "itinerary"} for a, p in agents],
        "events": events,
        **({"policy": policy} if policy else {}),
    }


def _item(n: int, id: str, text: str, author: str = "B1", **extra: Any) -> dict[str, Any]:
    return {
        "at": at(n),
        "author": author,
        "op": "assert",
        "item": {"id": id, "text": text, **extra},
    }


X = _item(0, "x", "The standup room is Room Atlas.", readers=PRIVATE)
Y = _item(1, "y", "Book the Friday standup there.", readers="*", depends_on=["x"])
REVOKE_X = {"at": at(4), "author": "B1", "op": "revoke", "target": "x", "why": "Room Atlas shut."}


def _decide(
    store: WorkStateStore,
    events: list[dict[str, Any]],
    policy: dict[str, Any] | None = None,
    **kw: Any,
) -> list[Decided]:
    made = load_scenario(scenario(events, policy))
    return replay(made, store, signer=SIGNER, **{"verifier": None, **kw})


def _y(decided: Decided) -> dict[str, Any]:
    """Y's exclusion in the operator's record (an empty one if Y was not excluded)."""
    return next((e for e in decided.record["excluded"] if e["item"] == "y"), {})


@pytest.mark.parametrize("verifier", [None, "builtin"])
def test_a_premise_the_agent_may_not_read_takes_what_it_reads_down_and_stays_unnamed(
    store: WorkStateStore, verifier: str | None
) -> None:
    judge = None if verifier is None else make_verifier(verifier)
    events = [X, Y, depart(2), depart(3, "B1"), REVOKE_X, ret(5), ret(6, "B1")]

    family, neighbours = _decide(store, events, verifier=judge)

    for decided in (family, neighbours):
        assert _y(decided).get("reason") == "premise_invalidated"
        assert "y" not in decided.record["selected"]
    [shown] = [e for e in agent_copy(family.record)["excluded"] if e["item"] == "y"]
    assert shown == {
        "item": "y", "reason": "premise_invalidated", "stage": "propagation", "evidence": []
    }  # fmt: skip
    assert family.record["view"]["excluded"] == [shown]
    verify_view(family.record["view"], SIGNER, parse_time(at(5)))
    assert _y(neighbours)["evidence"] == ["x"]  # the neighbours may read X: they are told


def test_a_premise_the_agent_may_not_read_that_stands_leaves_what_builds_on_it(
    store: WorkStateStore,
) -> None:
    events = [X, Y, depart(2), _item(4, "z", "Lunch is at noon."), ret(5)]

    [family] = _decide(store, events)

    assert _y(family) == {}
    assert "y" in family.record["selected"]
    assert "x" in family.record["hidden"]  # it may be named as evidence: never shown


def test_a_premise_whose_validity_ended_while_the_agent_was_away_takes_it_down(
    store: WorkStateStore,
) -> None:
    x = {**X, "item": {**X["item"], "valid_to": at(4)}}

    [family] = _decide(store, [x, Y, depart(2), _item(3, "z", "Lunch is at noon."), ret(5)])

    assert _y(family).get("reason") == "premise_invalidated"


X_ENDS = {**X, "item": {**X["item"], "valid_to": at(20)}}
W_ON_X = _item(0, "w", "Room Atlas has a projector.", readers=PRIVATE, depends_on=["x"])
Y_ON_W = {**Y, "item": {**Y["item"], "depends_on": ["w"]}}


@pytest.mark.parametrize(
    "events",
    [[X_ENDS, Y, depart(2), ret(5)], [X_ENDS, W_ON_X, Y_ON_W, depart(2), ret(5)]],
    ids=["premise", "premise-of-premise"],
)
def test_a_view_expires_when_a_premise_the_agent_may_not_read_ends(
    store: WorkStateStore, events: list[dict[str, Any]]
) -> None:
    """Y falls at X's end; the view, served an hour, served Y past it (a review)."""
    [family] = _decide(store, events)

    assert "y" in family.record["selected"]
    assert family.record["view"]["expires_at"] == at(20)
    assert '"x"' not in json.dumps(family.record["view"])  # its end only, never its id


def test_a_premise_the_agent_may_not_read_stated_while_it_was_away_takes_it_down_at_its_end(
    store: WorkStateStore,
) -> None:
    """X is in C then (Δ states it), gated as ``unauthorized`` before its end was looked
    at: Y was admitted past X's end (a differential fuzz), and its view was issued ending
    before it began."""
    x = {**X, "at": at(1), "item": {**X["item"], "valid_to": at(4)}}
    y = {**Y, "at": at(2)}

    [family] = _decide(store, [depart(0), x, y, ret(5)])

    assert _y(family) == {
        "item": "y", "reason": "premise_invalidated", "stage": "propagation",
        "evidence": ["x"], "detail": "depends on x, which was invalidated",
    }  # fmt: skip
    assert '"x"' not in json.dumps(family.record["view"])
    verify_view(family.record["view"], SIGNER, parse_time(at(5)))


def test_an_ended_premise_takes_it_down_through_one_the_agent_may_not_read(
    store: WorkStateStore,
) -> None:
    """Y rests on W, which only the neighbours read, which rests on V, which ended: W was
    gated before V's end reached it, and Y was admitted (a differential fuzz)."""
    v = _item(1, "v", "The budget covers Room Atlas.", readers="*", valid_to=at(4))
    w = {**X, "at": at(2), "item": {**X["item"], "id": "w", "depends_on": ["v"]}}
    y = {**Y, "at": at(3), "item": {**Y["item"], "depends_on": ["w"]}}

    [family] = _decide(store, [depart(0), v, w, y, ret(5)])

    assert (_y(family)["reason"], _y(family)["evidence"]) == ("premise_invalidated", ["w"])
    assert '"w"' not in json.dumps(family.record["view"])
    verify_view(family.record["view"], SIGNER, parse_time(at(5)))


def test_a_fallen_premise_of_a_premise_the_agent_may_not_read_takes_it_down(
    store: WorkStateStore,
) -> None:
    """X0 ← X ← Y: only the neighbours read X0 and X; X0 is revoked."""
    x0 = _item(0, "x0", "Room Atlas is free on Fridays.", readers=PRIVATE)
    x = {**X, "at": at(1), "item": {**X["item"], "depends_on": ["x0"]}}
    y = {**Y, "at": at(2)}
    revoke = {**REVOKE_X, "target": "x0"}

    [family] = _decide(store, [x0, x, y, depart(3), revoke, ret(5)])

    assert _y(family).get("reason") == "premise_invalidated"


def _by_w(pair: Pair) -> Verdict:
    """W makes stale whatever it is judged against."""
    return Verdict(invalidates=pair.later.replacement_id == "w", confidence=0.9, reason="moved")


def test_a_standing_verdict_against_a_premise_the_agent_may_not_read_takes_it_down(
    store: WorkStateStore,
) -> None:
    """The neighbours' return confirms that W made X stale; the family's Y rests on X."""
    w = _item(4, "w", "Room Atlas is closed for repairs.", readers=PRIVATE)
    events = [X, Y, depart(2), depart(3, "B1"), w, ret(5, "B1"), ret(6)]

    neighbours, family = _decide(store, events, verifier=FunctionVerifier(_by_w, "by-w"))

    assert next(e for e in neighbours.record["excluded"] if e["item"] == "x")["reason"] == (
        "implicitly_invalidated"
    )
    assert _y(family).get("reason") == "premise_invalidated"


def test_an_item_asserted_while_away_on_a_premise_withdrawn_before_the_departure_falls(
    store: WorkStateStore,
) -> None:
    """P was revoked before A1 left, so D_a lacks it; Q, asserted later, still names it."""
    p = _item(0, "p", "Pickup at 8:00.", author="A2")
    revoke = {"at": at(1), "author": "A2", "op": "revoke", "target": "p", "why": "moved"}
    q = _item(3, "q", "Remind the driver of the pickup.", author="A2", depends_on=["p"])

    [family] = _decide(store, [p, revoke, depart(2), q, ret(4)])

    [fell] = [e for e in family.record["excluded"] if e["item"] == "q"]
    assert (fell["reason"], fell["evidence"]) == ("premise_invalidated", ["p"])
    assert [e["evidence"] for e in agent_copy(family.record)["excluded"] if e["item"] == "q"] == [
        ["p"]  # A1 may read P: it is told which premise fell
    ]


def test_no_memory_layer_names_a_premise_the_agent_may_not_read(store: WorkStateStore) -> None:
    """Mem0's ``readmit.removed`` and the Agents SDK's message quote a removal's detail."""
    events = [X, Y, depart(2), depart(3, "B1"), REVOKE_X, ret(5)]
    [family] = _decide(store, events)

    assert removals(family)["y"].reason == "premise_invalidated"
    assert removals(family)["y"].detail == ""
    assert "depends on x" not in preamble(_judged(family))
    assert hidden_split(family.record) == (["x"], ["e4"])  # an item it may not read, its revoke


def _judged(decided: Decided) -> Any:
    from readmit.integrations.agents_sdk_view import judge

    return judge(decided)


def _w_breaks_z(pair: Pair) -> Verdict:
    hit = pair.later.replacement_id == "w" and pair.earlier.id == "z"
    return Verdict(invalidates=hit, confidence=0.9, reason="closed")


@pytest.mark.parametrize("wanted", [True, False], ids=["room to spare", "a full view"])
@pytest.mark.parametrize("steps", [0, 3])
def test_a_premise_outside_c_falls_with_what_it_rests_on_in_c(
    store: WorkStateStore, wanted: bool, steps: int
) -> None:
    """Y → X (the neighbours') → Z (everyone's), and this return finds Z stale: as the
    departure after it would, it takes X and Y down with it, whether the selector
    reaches Y or not (an obligation makes it want Z first; three items fill the view).
    With ``steps``, X rests on Z through a chain of the neighbours' items.
    """
    z = _item(0, "z", "Room Atlas is free on Fridays.", readers="*", supports=["d-room"])
    chain = [
        _item(1, f"x{n}", f"Step {n} of the plan.", readers=PRIVATE,
              depends_on=[f"x{n - 1}" if n else "z"])
        for n in range(steps)
    ]  # fmt: skip
    under = f"x{steps - 1}" if steps else "z"
    x = {**X, "at": at(1), "item": {**X["item"], "depends_on": [under]}}
    y = {**Y, "at": at(2)}
    w = _item(4, "w", "Room Atlas is closed for repairs on Fridays.", author="A2", readers="*")
    room = {"id": "o", "role": "itinerary", "text": "Book a room.", "requires": ["d-room"],
            "frontier": {"id": "f", "text": "No room yet."}}  # fmt: skip
    needs = {"at": at(3), "op": "obligation", "author": "A2", "obligation": room}
    events = [z, *chain, x, y, *([] if wanted else [needs]), depart(3), w, ret(5)]

    budget = None if wanted else {"max_items": 3, "on_incomplete": "block"}
    [family] = _decide(store, events, budget, verifier=FunctionVerifier(_w_breaks_z))

    assert next(e for e in family.record["excluded"] if e["item"] == "z")["reason"] == (
        "implicitly_invalidated"
    )
    assert _y(family).get("reason") == "premise_invalidated"
    assert "y" not in family.record["not_selected"]
    assert "y" not in store.depart("trip", "A1", parse_time(at(6))).item_ids


def test_a_fallen_premise_the_agent_may_read_is_the_one_it_is_told_of(
    store: WorkStateStore,
) -> None:
    """Y rests on X (the neighbours', revoked) and P (everyone's, revoked)."""
    p = _item(0, "p", "Friday is free.", readers="*")
    y = {**Y, "item": {**Y["item"], "depends_on": ["x", "p"]}}
    revoke_p = {"at": at(4), "author": "B1", "op": "revoke", "target": "p", "why": "busy"}

    [family] = _decide(store, [X, p, y, depart(2), REVOKE_X, revoke_p, ret(5)])

    [shown] = [e for e in agent_copy(family.record)["excluded"] if e["item"] == "y"]
    assert shown["evidence"] == ["p"]


@pytest.mark.parametrize("revoked", ["w", "q"], ids=["its premise in C", "its own outside"])
def test_a_premise_outside_c_falls_with_an_item_of_c_that_falls_with_its_premise(
    store: WorkStateStore, revoked: str
) -> None:
    """Y → X (the neighbours', outside C) → Z (everyone's, in C) → W (everyone's) or Q
    (the neighbours'); the one Z rests on is revoked while A1 is away (a review)."""
    readers = "*" if revoked == "w" else PRIVATE
    base = _item(0, revoked, "Room Atlas is free on Fridays.", readers=readers)
    z = _item(1, "z", "Room Atlas is the standup room.", readers="*", depends_on=[revoked])
    x = _item(2, "x", "Book Room Atlas for the neighbours.", readers=PRIVATE, depends_on=["z"])
    y = _item(3, "y", "Book the Friday standup there.", readers="*", depends_on=["x"])
    revoke = {"at": at(5), "author": "B1", "op": "revoke", "target": revoked, "why": "gone"}

    [family] = _decide(store, [base, z, x, y, depart(4), revoke, ret(6)])

    assert next(e for e in family.record["excluded"] if e["item"] == "z")["reason"] == (
        "premise_invalidated"
    )
    assert _y(family).get("reason") == "premise_invalidated"
    assert "y" not in store.depart("trip", "A1", parse_time(at(7))).item_ids


@pytest.mark.parametrize("readers", [PRIVATE, "*"], ids=["outside C", "in C"])
def test_a_frontier_falls_with_a_premise_this_return_finds_stale(
    store: WorkStateStore, readers: Any
) -> None:
    """Y → X (a frontier: structure, never judged itself) → Z, which this return finds
    stale. X falls with Z, and Y with X, whether X is the neighbours' or everyone's (a
    review's finding: outside C, X stopped passing Z's fall on; in C, a frontier the
    selector reached held whatever it rested on, though one left out fell)."""
    z = _item(0, "z", "Room Atlas is free on Fridays.", readers="*")
    x = _item(1, "x", "No room yet for the standup.", readers=readers, depends_on=["z"],
              kind="frontier")  # fmt: skip
    y = {**Y, "at": at(2)}
    w = _item(4, "w", "Room Atlas is closed for repairs on Fridays.", author="A2", readers="*")

    [family] = _decide(
        store, [z, x, y, depart(3), w, ret(5)], verifier=FunctionVerifier(_w_breaks_z)
    )

    assert _y(family).get("reason") == "premise_invalidated"
    assert "y" not in family.record["items"]
