"""Confirmed implicit invalidations bind later returns, for every agent, until restored."""

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from conftest import store_url
from readmit.admission import Issued, admit
from readmit.admission.invalidation.cache import screening_key
from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier
from readmit.ahead import judge_ahead
from readmit.canonical import digest_text
from readmit.clock import parse_time
from readmit.decide import decide
from readmit.errors import DamagedStore, InvalidEvent
from readmit.events import ReturnRequest
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.replay import apply_steps, replay
from readmit.report import agent_copy, decision_json
from readmit.scenario import Scenario, load_scenario
from readmit.store import WorkStateStore, open_store
from readmit.store.sql import SqlStore
from readmit.store.verdicts import reader_digest
from readmit.testing import FunctionVerifier, SlowVerifier
from trip import SIGNER, assert_item, at, depart, reason, ret, scenario

STALE = {"revoked", "stale_or_superseded", "expired", "implicitly_invalidated"}
STALE |= {"premise_invalidated"}


HISTORY = [
    assert_item(0, "h0", "Sunrise Hotel is booked."),
    assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
    assert_item(2, "c", "Quiet rooms preferred."),
    depart(3),
    depart(4, "A3"),
    {"at": at(5), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
]


def run(store: WorkStateStore, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    verifier = make_verifier("builtin")
    decided = replay(load_scenario(scenario(events)), store, verifier=verifier, signer=SIGNER)
    return [d.record for d in decided]


def test_a_verdict_binds_the_next_return_with_nothing_new_and_is_not_judged_again(
    store: WorkStateStore,
) -> None:
    first, second = run(store, [*HISTORY, ret(6), depart(7), ret(8)])

    assert reason(first, "p0") == "implicitly_invalidated"
    assert first["judgment"]["confirmed"] == 1
    assert "p0" not in second["items"]
    assert "p0" not in second["selected"]
    assert second["judgment"]["calls"] == 0


def test_verdicts_kept_together_look_for_restatements_only_after_their_own_evidence(
    store: WorkStateStore,
) -> None:
    # One return keeps two verdicts; the log is read once from the earlier evidence (e5).
    # The booking is stated again by hx at 6, before its own revocation at 7: that is no
    # restatement for p0's verdict (or hx's), which must still bind the next return.
    events = [
        assert_item(0, "h0", "Sunrise Hotel is booked."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        assert_item(2, "h9", "Harbor Hotel is booked."),
        assert_item(3, "p9", "Pickup at 9:00 from Harbor Hotel."),
        depart(4),
        {"at": at(5), "author": "A2", "op": "revoke", "target": "h9", "why": "cancelled"},
        assert_item(6, "hx", "Sunrise Hotel is booked."),
        {"at": at(7), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
        ret(8),
        depart(9),
        ret(10),
    ]

    first, second = run(store, events)

    assert reason(first, "p0") == reason(first, "p9") == "implicitly_invalidated"
    assert "p0" not in second["items"]
    assert "p9" not in second["items"]
    assert second["judgment"]["calls"] == 0  # none lapsed, so none is judged again


def test_a_verdict_binds_another_agent_without_a_judgment(store: WorkStateStore) -> None:
    first, other = run(store, [*HISTORY, ret(6), ret(7, "A3")])

    assert reason(first, "p0") == "implicitly_invalidated"
    assert reason(other, "p0") == "implicitly_invalidated"
    assert other["judgment"]["standing"] == 1
    [p0] = [e for e in other["excluded"] if e["item"] == "p0"]
    assert p0["evidence"] == ["e5"]
    assert "confirmed at epoch" in p0["detail"]


def test_a_checkpoint_does_not_capture_an_item_found_invalid(store: WorkStateStore) -> None:
    run(store, [*HISTORY, ret(6)])

    checkpoint = store.depart("trip", "A1", parse_time(at(7)))

    assert "p0" not in checkpoint.item_ids
    assert "c" in checkpoint.item_ids


def test_a_checkpoint_does_not_capture_an_item_whose_premise_fell(store: WorkStateStore) -> None:
    run(
        store,
        [
            assert_item(0, "h0", "Sunrise Hotel is booked."),
            assert_item(1, "b", "Breakfast at seven.", depends_on=["h0"]),
            {"at": at(2), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
        ],
    )

    checkpoint = store.depart("trip", "A1", parse_time(at(7)))

    assert "b" not in checkpoint.item_ids


def test_restating_what_was_withdrawn_lapses_the_verdict(store: WorkStateStore) -> None:
    decisions = run(
        store,
        [
            *HISTORY,
            ret(6),
            assert_item(7, "h2", "Sunrise Hotel is booked."),
            ret(8, "A3"),
        ],
    )

    assert reason(decisions[0], "p0") == "implicitly_invalidated"
    assert "p0" in decisions[1]["selected"]


def test_an_item_found_stale_again_after_its_verdict_lapsed_is_named_at_every_return(
    store: WorkStateStore,
) -> None:
    """The departure left p0 out under a verdict; a restatement lapsed it, a replacement
    made p0 stale again. The first return let p0 back and excluded it; the returns after
    it, to the same departure, found the new verdict standing and named p0 nowhere (a
    probe of several servers found it; one store does the same)."""
    later = [
        assert_item(8, "h2", "Sunrise Hotel is booked.", key="hotel"),
        assert_item(9, "h3", "Granite Hotel is booked.", key="hotel"),
    ]
    decisions = run(store, [*HISTORY, ret(6), depart(7), *later, ret(10), ret(11), ret(12)])

    assert [reason(d, "p0") for d in decisions] == ["implicitly_invalidated"] * 4
    assert all("p0" not in d["selected"] for d in decisions)
    excluded = [sorted((e["item"], e["reason"]) for e in d["excluded"]) for d in decisions[1:]]
    assert excluded[0] == excluded[1] == excluded[2]


def test_a_restatement_only_another_principal_can_read_restores_nothing(
    store: WorkStateStore,
) -> None:
    private = {**assert_item(7, "h2", "Sunrise Hotel is booked."), "author": "B1"}
    decisions = run(store, [*HISTORY, ret(6), private, ret(8, "A3")])

    assert reason(decisions[0], "p0") == "implicitly_invalidated"
    assert reason(decisions[1], "p0") == "implicitly_invalidated"  # the verdict stands
    assert decisions[1]["judgment"]["standing"] == 1


@pytest.mark.parametrize(("author", "restores"), [("A2", True), ("B1", False)])
@pytest.mark.parametrize("when", ["after the verdict", "before the return"])
def test_a_restatement_every_reader_can_read_lapses_the_verdict_if_its_author_knew_it(
    store: WorkStateStore, author: str, restores: bool, when: str
) -> None:
    """The neighbours' note about their own booking, in the family's words, restores
    nothing of the family's: they may not read the booking it seems to restate (a review's
    finding: it lapsed the verdict, and the pickup came back though the booking was still
    cancelled)."""
    public = {**assert_item(7, "h2", "Sunrise Hotel is booked.", readers="*"), "author": author}
    middle = [ret(6), public] if when == "after the verdict" else [public, ret(8)]
    decisions = run(store, [*HISTORY, *middle, ret(9, "A3")])

    assert ("p0" in decisions[-1]["selected"]) is restores
    if not restores:
        assert all(reason(d, "p0") == "implicitly_invalidated" for d in decisions)
        # the verdict stood: not lapsed and confirmed again (a mutation review: the
        # writer's lapse without the author check was hidden by the return's rejudging)
        assert decisions[-1]["judgment"]["standing"] == 1


TWO_READERS = [
    assert_item(0, "h0", "Sunrise Hotel is booked.", readers="*"),
    assert_item(0, "y", "Sunrise shuttle service is booked."),
    assert_item(
        1, "p0", "Pickup at 8:00 by Sunrise shuttle service from Sunrise Hotel.", readers="*"
    ),
    depart(3),
    depart(3, "B1"),
    {"at": at(4), "author": "A2", "op": "revoke", "target": "y", "why": "cancelled"},
    {"at": at(5), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
]
"""p0 names the family's shuttle y and the public hotel h0, both cancelled: A1 may read
both revocations, B1 (neighbours) only h0's."""


def test_a_lapsed_verdict_leaves_unjudged_what_came_before_its_evidence_to_be_judged(
    store: WorkStateStore,
) -> None:
    """B1 may not read y, so its return is shown y's revocation without its text and
    confirms p0 on h0's. Once h0 is stated again, the verdict lapses; A1, who may read y,
    must still judge p0 against y's revocation, which came before that evidence and no
    one judged (as a return without B1's before it does)."""
    twin = [*TWO_READERS, assert_item(7, "h2", "Sunrise Hotel is booked.", readers="*"), ret(10)]
    b1, after = run(store, [*TWO_READERS, ret(6, "B1"), *twin[len(TWO_READERS) :]])
    with store_url("sqlite", Path(tempfile.mkdtemp())) as url:
        (alone,) = run(open_store(url), twin)

    assert reason(alone, "p0") == reason(b1, "p0") == "implicitly_invalidated"
    assert reason(after, "p0") == "implicitly_invalidated"


def test_a_verdict_decided_beside_a_standing_one_does_not_replace_it(
    store: WorkStateStore,
) -> None:
    """B1's return reads its context before A1's verdict (on y's revocation) is stored, and
    confirms p0 on h0's; h0 is stated again before B1's verdict is stored, already lapsed.
    A1's verdict stands: its next return, with nothing new, does not even judge p0 again (a
    lapsed verdict there once let the floor it set skip y's revocation, and admit p0)."""
    apply_steps(load_scenario(scenario(TWO_READERS)), store, on_return=None)
    verifier, policy = make_verifier("builtin"), Policy(max_items=8)

    def request(agent: str, n: int) -> ReturnRequest:
        return ReturnRequest(
            id=f"r{n}{agent}", at=parse_time(at(n)), agent=agent, task="trip", purpose="itinerary"
        )

    at6 = parse_time(at(6))
    b1 = store.return_context("trip", request("B1", 6))  # read before A1's verdict is stored
    a1 = decide(store, "trip", request("A1", 6), policy=policy, verifier=verifier, signer=SIGNER)
    restated = {**assert_item(7, "h2", "Sunrise Hotel is booked.", readers="*"), "id": "again"}
    store.append("trip", [load_scenario(scenario([restated])).steps[0]])  # type: ignore[list-item]
    decided = admit(b1, policy=policy, verifier=verifier, signer=SIGNER)
    record = decision_json(decided, b1, policy)
    judgment = decided.judgment
    store.record_decision("trip", "B1", at6, b1.epoch, decided.outcome, record, judgment=judgment)
    store.depart("trip", "A1", parse_time(at(8)))
    again = decide(store, "trip", request("A1", 9), policy=policy, verifier=verifier, signer=SIGNER)

    assert reason(a1.record, "p0") == reason(record, "p0") == "implicitly_invalidated"
    # A1's verdict stands, so the checkpoint left p0 out: not judged again, not even a candidate
    assert reason(again.record, "p0") is None
    assert "p0" not in {*again.record["items"], *again.record["not_selected"]}


def test_an_item_left_out_under_a_verdict_that_lapsed_is_screened_again(
    store: WorkStateStore,
) -> None:
    """A3's checkpoint left p0 out under its verdict; h0 is stated again (the verdict
    lapses), then withdrawn again. A3's next return must judge p0 again, and q on it, as
    the same history without A3's return in between does."""
    later = [
        assert_item(8, "q", "The taxi fare is prepaid.", depends_on=["p0"]),
        assert_item(9, "h2", "Sunrise Hotel is booked."),
        {"at": at(10), "author": "A2", "op": "revoke", "target": "h2", "why": "cancelled"},
        ret(11, "A3"),
    ]
    *_, last = run(store, [*HISTORY, ret(6, "A3"), depart(7, "A3"), *later])
    with store_url("sqlite", Path(tempfile.mkdtemp())) as url:
        (twin,) = run(open_store(url), [*HISTORY, *later])

    assert reason(twin, "p0") == reason(last, "p0") == "implicitly_invalidated"
    assert reason(twin, "q") == reason(last, "q") == "premise_invalidated"


def test_an_item_taken_back_into_c_is_no_longer_what_its_checkpoint_left_out(
    store: WorkStateStore,
) -> None:
    """Else an integration lists it as removed (left out before the departure) while the
    view admits it."""
    events = [
        *HISTORY,
        ret(6, "A3"),
        depart(7, "A3"),
        assert_item(9, "h2", "Sunrise Hotel is booked."),
    ]
    (first,) = run(store, events)  # A3's return confirms p0; its checkpoint leaves it out
    request = ReturnRequest(id="r", at=parse_time(at(10)), agent="A3", task="trip", purpose="p")

    ctx = store.return_context("trip", request)

    assert reason(first, "p0") == "implicitly_invalidated"
    assert "p0" in {i.id for i in ctx.items}
    assert "p0" not in {i.id for i in ctx.left_out}


def test_what_rests_on_an_item_a_lapsed_verdict_lets_back_comes_back_with_it(
    store: WorkStateStore,
) -> None:
    """A3's checkpoint left q and r out too (q rests on p0, r on q); h0 stated again lapses
    p0's verdict: all three are candidates again, as in the twin history (a mutation
    review: what rests two deep was never let back, and no test told)."""
    base = [
        assert_item(0, "h0", "Sunrise Hotel is booked."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        assert_item(2, "q", "The taxi fare is prepaid.", depends_on=["p0"]),
        assert_item(3, "r", "Tip the driver in cash.", depends_on=["q"]),
        depart(4, "A3"),
        {"at": at(5), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
    ]
    later = [assert_item(8, "h2", "Sunrise Hotel is booked."), ret(9, "A3")]
    first, last = run(store, [*base, ret(6, "A3"), depart(7, "A3"), *later])
    with store_url("sqlite", Path(tempfile.mkdtemp())) as url:
        (twin,) = run(open_store(url), [*base, *later])

    assert reason(first, "q") == reason(first, "r") == "premise_invalidated"
    assert {"p0", "q", "r"} <= set(twin["selected"])
    assert {"p0", "q", "r"} <= set(last["selected"])


def test_a_private_restatement_before_the_verdict_was_stored_restores_nothing(
    store: WorkStateStore,
) -> None:
    private = {**assert_item(6, "h2", "Sunrise Hotel is booked."), "author": "B1"}
    first, other = run(store, [*HISTORY, private, ret(7), ret(8, "A3")])

    assert reason(first, "p0") == "implicitly_invalidated"
    assert reason(other, "p0") == "implicitly_invalidated"


@pytest.mark.parametrize("when", ["before the return", "after the verdict"])
def test_hearsay_restating_what_was_withdrawn_restores_nothing(
    store: WorkStateStore, when: str
) -> None:
    """Hearsay replaces nothing (the writer), so it brings nothing back either."""
    heard = assert_item(7, "h2", "Sunrise Hotel is booked.", unconfirmed=True)
    if when == "before the return":
        *returns, again = run(store, [*HISTORY, heard, ret(8), ret(9, "A3"), depart(10), ret(11)])
    else:
        *returns, again = run(store, [*HISTORY, ret(6), heard, ret(8, "A3"), depart(10), ret(11)])

    assert [reason(d, "p0") for d in returns] == ["implicitly_invalidated"] * 2
    assert returns[1]["judgment"]["standing"] == 1
    assert "p0" not in again["items"]  # left out of the departure under the verdict


@pytest.mark.parametrize(
    "bound",
    [
        {"valid_to": "2026-05-01T09:00:00Z"},  # it will end
        {"valid_from": "2026-05-02T08:00:00Z"},  # it has not begun
        {"task": "dinner"},
        {"purposes": ["booking"]},
    ],
)
@pytest.mark.parametrize("when", ["before the return", "after it"])
def test_a_bounded_restatement_restores_nothing(
    store: WorkStateStore, bound: dict[str, Any], when: str
) -> None:
    """The hotel is booked again only until 9:00, from tomorrow, or for one task or
    purpose: the pickup resting on it must not come back for every use, and stay back
    once the restatement ends. Both rules, the store's and a return's, say so."""
    again = assert_item(7, "h2", "Sunrise Hotel is booked.", **bound)
    if when == "before the return":
        *returns, last = run(store, [*HISTORY, again, ret(8), ret(9, "A3"), depart(10), ret(11)])
    else:
        *returns, last = run(store, [*HISTORY, ret(6), again, ret(8, "A3"), depart(10), ret(11)])

    assert [reason(d, "p0") for d in returns] == ["implicitly_invalidated"] * 2
    assert "p0" not in last["items"]


AGENCY = assert_item(2, "d", "The travel agency account is open.")
"""What a restatement rests on (``depends_on``), in the tests below."""


@pytest.mark.parametrize(
    "falls", ["revoked after the restatement", "revoked before it", "ended before it"]
)
@pytest.mark.parametrize("when", ["before the return", "after it"])
def test_a_restatement_resting_on_an_item_that_falls_restores_nothing(
    store: WorkStateStore, falls: str, when: str
) -> None:
    """The hotel is booked again by a note resting on the agency's account, which is then
    revoked, was revoked already or had ended (a review's finding): the note falls with it,
    so the pickup must not come back. Both rules, the store's and a return's, say so."""
    agency = AGENCY
    if falls == "ended before it":
        agency = {**AGENCY, "item": {**AGENCY["item"], "valid_to": at(6)}}
    gone = {"at": at(7), "author": "A2", "op": "revoke", "target": "d", "why": "closed"}
    again = assert_item(7, "h2", "Sunrise Hotel is booked.", depends_on=["d"])
    restated = {
        "revoked after the restatement": [again, gone],
        "revoked before it": [gone, again],
        "ended before it": [again],
    }[falls]
    history = [*HISTORY[:3], agency, *HISTORY[3:]]
    if when == "before the return":
        *returns, last = run(
            store, [*history, *restated, ret(8), ret(9, "A3"), depart(10), ret(11)]
        )
    else:
        *returns, last = run(
            store, [*history, ret(6), *restated, ret(8, "A3"), depart(10), ret(11)]
        )

    assert [reason(d, "p0") for d in returns] == ["implicitly_invalidated"] * 2
    assert "p0" not in last["items"]
    assert "h2" not in last["items"]


@pytest.mark.parametrize("how", ["supersede", "same key"])
@pytest.mark.parametrize(
    ("shape", "falls"),
    [
        ({}, False),  # stated again for every use and reader: nothing fell
        ({"unconfirmed": True}, True),
        ({"task": "other"}, True),
        ({"readers": {"roles": ["booking"]}}, True),
        ({"depends_on": ["d"]}, True),  # then d is revoked
    ],
    ids=["for good", "hearsay", "another task", "narrower readers", "on a premise"],
)
def test_a_replacement_in_the_same_words_that_does_not_stand_in_for_every_use_withdraws(
    store: WorkStateStore, how: str, shape: dict[str, Any], falls: bool
) -> None:
    """The booking is replaced by a note in the very same words that holds only as
    hearsay, for another task, for some readers, or while a premise of its own stands
    (a review's finding): for the pickup its premise is gone, as if it were revoked; the
    verifier was shown a replacement that dropped nothing."""
    gone = {"at": at(5), "author": "A2", "op": "revoke", "target": "d", "why": "closed"}
    then = [gone] if "depends_on" in shape else []
    _replaced_and_returned(store, how, "Sunrise Hotel is booked.", shape, falls, then)


def _replaced_and_returned(
    store: WorkStateStore,
    how: str,
    text: str,
    shape: dict[str, Any],
    falls: bool,
    then: list[dict[str, Any]],
) -> None:
    """The booking replaced (``how``) by ``text`` of ``shape``, ``then`` events, A1 and A3
    return: the pickup ``falls`` at both, or stays."""
    keyed = {"key": "hotel"} if how == "same key" else {}
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", **keyed)
    again = assert_item(5, "h3", text, **keyed, **shape)
    if how == "supersede":
        again = {**again, "op": "supersede", "target": "h0"}
    history = [booked, *HISTORY[1:3], AGENCY, *HISTORY[3:5], again, *then]

    falls &= not (how == "same key" and "unconfirmed" in shape)  # hearsay replaces no key
    first, other = run(store, [*history, ret(6), ret(7, "A3")])

    expected = "implicitly_invalidated" if falls else None
    assert [reason(first, "p0"), reason(other, "p0")] == [expected] * 2
    assert ("p0" in first["items"]) is not falls


@pytest.mark.parametrize("how", ["supersede", "same key"])
@pytest.mark.parametrize(
    ("shape", "falls"),
    [
        ({}, False),  # for every use: the verifier judges what replaced it
        ({"unconfirmed": True}, True),
        ({"task": "other"}, True),
        ({"purposes": ["billing"]}, True),
        ({"valid_to": at(50)}, True),  # though the return comes before its end
        ({"depends_on": ["d"]}, True),  # though d stands
    ],
    ids=["for good", "hearsay", "another task", "another purpose", "until later", "on a premise"],
)
def test_a_replacement_in_other_words_that_holds_for_fewer_uses_withdraws(
    store: WorkStateStore, how: str, shape: dict[str, Any], falls: bool
) -> None:
    """The booking is replaced by a note in other words that holds only as hearsay, for
    another task or purpose, for a while, or while a premise of its own stands (a review's
    finding: the verifier was shown it in the booking's place, and the pickup stayed once
    it ended, fell or never held for the pickup's use); as for the same words, nothing
    states the booking wherever the pickup may rely on it."""
    _replaced_and_returned(store, how, "The Sunrise Hotel booking is confirmed.", shape, falls, [])


@pytest.mark.parametrize("how", ["supersede", "same key"])
@pytest.mark.parametrize(
    ("booking", "pickup", "falls"),
    [("*", "*", True), ("*", "family", False), ("family", "*", False)],
    ids=["a pickup the neighbours read", "the family's pickup", "a booking only they read"],
)
def test_a_replacement_in_other_words_for_fewer_readers_withdraws_for_those_it_leaves_out(
    store: WorkStateStore, how: str, booking: str, pickup: str, falls: bool
) -> None:
    """Everyone's booking rewritten in other words for the family alone: to the neighbours
    nothing stands in its place, so a pickup they read rests on nothing and falls, for
    every agent (a review's finding: it was judged against the family's words). The
    family's own pickup, or one resting on a booking the neighbours never read, stays."""
    keyed = {"key": "hotel"} if how == "same key" else {}
    readers = {"*": "*", "family": {"principals": ["family"]}}
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", readers=readers[booking], **keyed)
    pickup_item = assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel.")
    pickup_item["item"]["readers"] = readers[pickup]
    family = {"readers": {"principals": ["family"]}}
    again = assert_item(5, "h3", "The Sunrise Hotel booking is confirmed.", **keyed, **family)
    if how == "supersede":
        again = {**again, "op": "supersede", "target": "h0"}
    first, other = run(
        store, [booked, pickup_item, depart(3), depart(4, "B1"), again, ret(6), ret(7, "B1")]
    )

    expected = "implicitly_invalidated" if falls else None
    assert reason(first, "p0") == expected
    if pickup == "*":
        assert reason(other, "p0") == expected


@pytest.mark.parametrize("words", ["The Sunrise Hotel booking is confirmed.", "same"])
@pytest.mark.parametrize(
    ("was", "now"),
    [
        ({"valid_to": at(55)}, {}),
        ({"valid_to": at(55)}, {"valid_to": at(58)}),
        ({}, {"valid_from": at(5)}),  # begun as it is made
        ({"task": "trip"}, {}),
        ({"purposes": ["itinerary"]}, {"purposes": ["itinerary", "billing"]}),
    ],
    ids=["no end", "a later end", "begun", "any task", "more purposes"],
)
def test_a_replacement_that_holds_wherever_the_statement_did_stands_in(
    words: str, was: dict[str, Any], now: dict[str, Any]
) -> None:
    """A replacement bounded no tighter than the booking narrows nothing: the verifier
    judges the words that replaced it (a review's finding: in the same words, anything but
    an exact copy of the bounds, and in either, a start already come, was a narrowing)."""
    store = open_store("sqlite://:memory:")
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", **was)
    text = booked["item"]["text"] if words == "same" else words
    again = {**assert_item(5, "h3", text, **now), "op": "supersede", "target": "h0"}
    [record] = run(store, [booked, *HISTORY[1:5], again, ret(6)])

    assert "p0" in record["items"]


@pytest.mark.parametrize(
    "bound",
    [{"valid_to": at(50)}, {"task": "trip"}, {"purposes": ["itinerary"]}, {"depends_on": ["d"]}],
    ids=["until later", "one task", "one purpose", "on a premise"],
)
def test_a_copy_of_a_bounded_statement_in_its_own_bounds_stands_in_for_it(
    store: WorkStateStore, bound: dict[str, Any]
) -> None:
    """A booking that holds until later (for one task, one purpose, on a premise) is
    replaced by an exact copy: nothing it held for is lost, so the pickup stands (a
    review's finding: the copy was taken for a narrowing and the pickup excluded)."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", **bound)
    copy = {
        **assert_item(5, "h3", "Sunrise Hotel is booked.", **bound),
        "op": "supersede",
        "target": "h0",
    }
    agency = {**AGENCY, "at": at(0)}  # before the booking that may rest on it
    first, other = run(store, [agency, booked, *HISTORY[1:5], copy, ret(6), ret(7, "A3")])

    assert "p0" in first["items"]
    assert "p0" in other["items"]


def test_a_same_words_supersession_the_agent_may_not_read_stands_in_before_its_departure(
    store: WorkStateStore,
) -> None:
    """The neighbours' booking is superseded in the same words by its author before A1
    leaves; A1's return screens the pickup back through that part of the log, where the
    replacing item was never loaded for it (a review's finding: taken for a withdrawal,
    it excluded the pickup, and only when A1 left after the supersession)."""
    booked = {**assert_item(0, "h0", "Sunrise Hotel is booked."), "author": "B1"}
    copy = {**booked, "at": at(2), "op": "supersede", "target": "h0"}
    copy["item"] = {**booked["item"], "id": "h3"}
    pickup = assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel.", readers="*")
    [decided] = run(store, [booked, pickup, copy, depart(3), assert_item(4, "c", "Quiet."), ret(5)])

    assert "p0" in decided["items"]


def test_a_restatement_replaced_in_the_same_words_by_hearsay_brings_the_verdict_back(
    store: WorkStateStore,
) -> None:
    """The booking is stated again (the pickup's verdict lapses), then that statement is
    superseded by hearsay in the same words (a review's finding): nothing states the
    premise for every use, so the pickup is excluded again, at every later return."""
    again = assert_item(7, "h2", "Sunrise Hotel is booked.")
    hearsay = {
        **assert_item(8, "h3", "Sunrise Hotel is booked.", unconfirmed=True),
        "op": "supersede",
        "target": "h2",
    }
    events = [*HISTORY, ret(6), again, hearsay, ret(9, "A3"), depart(10), ret(11)]

    first, other, last = run(store, events)

    assert [reason(first, "p0"), reason(other, "p0")] == ["implicitly_invalidated"] * 2
    assert "p0" not in last["items"]  # nor captured by the departure in between


_REOPENED = {"id": "n2", "text": "Sunrise Hotel has reopened."}
_UNDONE: dict[str, dict[str, Any]] = {
    "revoked": {"op": "revoke", "target": "n1", "why": "it reopened"},
    "superseded": {"op": "supersede", "target": "n1", "item": _REOPENED},
    "replaced by its key": {"op": "assert", "item": {**_REOPENED, "key": "sunrise"}},
}
"""Ways the news n1 (key "sunrise") is withdrawn; the last was found by a review to leave
a verdict resting on it standing for good."""


@pytest.mark.parametrize("how", ["revoked, then stated again", "keyed", "superseded"])
def test_a_same_words_replacement_every_reader_of_the_item_reads_restores_it(
    store: WorkStateStore, how: str
) -> None:
    """Everyone's booking is stated again for the family alone, and the pickup is the
    family's: a keyed replacement or a supersession excluded it (shown as a withdrawal, as
    read by fewer than the booking was), and A3 inherited that verdict (a review's finding);
    the same state reached by a revocation and a restatement admitted it."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", key="hotel", readers="*")
    again = assert_item(5, "h2", "Sunrise Hotel is booked.", key="hotel")
    change = {
        "revoked, then stated again": [
            {"at": at(4), "author": "A2", "op": "revoke", "target": "h0", "why": "moved"},
            again,
        ],
        "keyed": [again],
        "superseded": [{**again, "op": "supersede", "target": "h0"}],
    }[how]
    events = [booked, *HISTORY[1:5], *change, ret(6), ret(7, "A3")]

    assert all("p0" in record["items"] for record in run(store, events))


@pytest.mark.parametrize("undone", list(_UNDONE))
def test_withdrawing_the_news_behind_a_verdict_lapses_it(
    store: WorkStateStore, undone: str
) -> None:
    events = [
        assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        depart(1),
        depart(2, "A3"),
        {"at": at(3), "author": "A2", "op": "evidence", "source": {"id": "s1", "text": "x"}},
        assert_item(4, "n1", "Sunrise Hotel is closed for maintenance.", key="sunrise"),
        ret(5),
        {"at": at(6), "author": "A2", **_UNDONE[undone]},
        ret(7, "A3"),
    ]
    first, second = (
        d.record
        for d in replay(
            load_scenario(scenario(events)), store, verifier=_Invalidating("n1"), signer=SIGNER
        )
    )

    assert reason(first, "p0") == "implicitly_invalidated"
    assert "p0" in second["selected"]


@pytest.mark.parametrize("when", ["after the verdict", "before the return"])
def test_news_s_key_given_by_an_agent_who_may_not_read_it_restores_nothing(
    store: WorkStateStore, when: str
) -> None:
    """The neighbours' item of the same key replaces nothing of the family's, as the
    writer has it: the news still stands, and so does what it invalidated."""
    theirs = {"at": at(5), "author": "B1", **_UNDONE["replaced by its key"]}
    events = [
        assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        depart(1),
        depart(2, "A3"),
        assert_item(4, "n1", "Sunrise Hotel is closed for maintenance.", key="sunrise"),
        *([ret(5), theirs] if when == "after the verdict" else [theirs, ret(5)]),
        ret(7, "A3"),
    ]
    decided = replay(
        load_scenario(scenario(events)), store, verifier=_Invalidating("n1"), signer=SIGNER
    )

    assert [reason(d.record, "p0") for d in decided] == ["implicitly_invalidated"] * 2


@pytest.mark.parametrize("undone", list(_UNDONE))
def test_news_withdrawn_before_the_departure_is_not_judged_against(
    store: WorkStateStore, undone: str
) -> None:
    """The pickup, never screened, is screened back through the log before the departure,
    where the news came and went: replaced by its key there, it was judged against (a
    review's finding: the return looked the news item up in C, which no longer held it)."""
    events = [
        assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        assert_item(1, "n1", "Sunrise Hotel is closed for maintenance.", key="sunrise"),
        {"at": at(2), "author": "A2", **_UNDONE[undone]},
        depart(3),
        assert_item(4, "c", "Quiet rooms preferred."),
        ret(5),
        depart(6),
        ret(7),
    ]
    decided = replay(
        load_scenario(scenario(events)), store, verifier=_Invalidating("n1"), signer=SIGNER
    )

    assert all("p0" in d.record["selected"] for d in decided)


class _Closed:
    """Confirms a pair whose later event brings (as news or a replacement) a text saying
    the earlier item's hotel is closed."""

    name = "closed"

    def judge(self, pairs: Any) -> Any:
        from readmit.admission.invalidation.implicit import Verdict

        return [
            Verdict(invalidates="closed" in said and "Sunrise" in said, confidence=0.9)
            for said in (p.later.replacement_text or "" for p in pairs)
        ]


@pytest.mark.parametrize("how", ["keyed", "superseded"])
@pytest.mark.parametrize("when", ["after the verdict", "before the return"])
def test_news_stated_again_in_its_own_words_still_stands(
    store: WorkStateStore, how: str, when: str
) -> None:
    """The closure is filed again, in the same words: it still stands, and so does what it
    invalidated (a review's finding: the second statement was taken for a restoration of
    the first, and the first as withdrawn, so the pickup came back)."""
    news = "Sunrise Hotel is closed for maintenance."
    again = assert_item(5, "n2", news, key="sunrise")
    if how == "superseded":
        again = {**assert_item(5, "n2", news), "op": "supersede", "target": "n1"}
    head = [assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."), depart(1)]
    first = [assert_item(2, "n1", news, key="sunrise")]
    middle = [ret(3), depart(4), again] if when == "after the verdict" else [again]
    decided = replay(
        load_scenario(scenario([*head, *first, *middle, ret(6)])), store, verifier=_Closed(),
        signer=SIGNER,
    )  # fmt: skip

    assert all(reason(d.record, "p0") == "implicitly_invalidated" for d in decided)


class _Invalidating:
    """A verifier that confirms every pair whose later event asserted ``item`` (or, with
    ``withdrawn``, withdrew it: it needs no text, as a model reading the reason would not)."""

    def __init__(self, item: str, withdrawn: bool = False) -> None:
        self.item = item
        self.name = f"invalidating:{item}"
        self.field = "withdrawn_id" if withdrawn else "replacement_id"

    def judge(self, pairs: Any) -> Any:
        from readmit.admission.invalidation.implicit import Verdict

        return [
            Verdict(
                invalidates=getattr(p.later, self.field) == self.item, confidence=0.9, reason="r"
            )
            for p in pairs
        ]


WORDS = ["Sunrise Hotel", "the 9:00 train", "INC-42", "Riverside", "pickup", "budget"]


@st.composite
def histories(draw: st.DrawFn, words: Sequence[str] = WORDS) -> list[dict[str, Any]]:
    n_items = draw(st.integers(1, 6))
    events: list[dict[str, Any]] = []
    ids: list[str] = []
    for i in range(n_items):
        named = draw(st.lists(st.sampled_from(words), min_size=1, max_size=2))
        extra: dict[str, Any] = {}
        if draw(st.booleans()) and ids:
            extra["depends_on"] = [draw(st.sampled_from(ids))]
        if draw(st.booleans()):
            extra["key"] = draw(st.sampled_from(["k1", "k2"]))
        events.append(assert_item(len(events), f"i{i}", f"Note {i}: {', '.join(named)}.", **extra))
        ids.append(f"i{i}")
    events.append(depart(len(events)))
    keyless = [e["item"]["id"] for e in events if e["op"] == "assert" and "key" not in e["item"]]
    targets = draw(st.lists(st.sampled_from(keyless), unique=True, max_size=2)) if keyless else []
    for target in targets:
        events.append(
            {"at": at(len(events)), "author": "A2", "op": "revoke", "target": target, "why": "x"}
        )
    texts = {e["item"]["id"]: e["item"]["text"] for e in events if e["op"] == "assert"}
    restated = draw(st.lists(st.sampled_from(targets), max_size=1)) if targets else []
    for k, target in enumerate(restated):
        heard = {"unconfirmed": True} if draw(st.booleans()) else {}  # restores nothing
        events.append(assert_item(len(events), f"r{k}", texts[target], **heard))  # stated again
    for j in range(draw(st.integers(0, 2))):
        said = draw(st.lists(st.sampled_from(words), min_size=1, max_size=2))
        events.append(assert_item(len(events), f"n{j}", f"News {j}: {', '.join(said)}."))
    return events


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_departing_again_with_nothing_new_never_admits_what_was_excluded_as_stale(
    events: list[dict[str, Any]],
) -> None:
    store = open_store("sqlite:///:memory:")
    try:
        n = len(events)
        first, second = run(store, [*events, ret(n), depart(n + 1), ret(n + 2)])
    finally:
        store.close()

    stale = {e["item"] for e in first["excluded"] if e["reason"] in STALE}
    assert not stale & set(second["selected"])
    assert not stale & set(second["items"])


def test_evidence_from_before_a_departure_is_not_shown(store: WorkStateStore) -> None:
    history = [e for e in HISTORY if e.get("agent") != "A3"]  # A3 leaves after the revoke
    first, other = run(store, [*history, depart(6, "A3"), ret(7), ret(8, "A3")])

    assert reason(first, "p0") == "implicitly_invalidated"
    [p0] = [e for e in other["excluded"] if e["item"] == "p0"]
    assert p0["reason"] == "implicitly_invalidated"
    assert p0["evidence"] == []
    assert "before this return's departure" in p0["detail"]
    assert "Sunrise" not in p0["detail"]


def test_a_premise_restored_before_the_return_is_not_judged_against(
    store: WorkStateStore,
) -> None:
    """The revoked booking is stated again before either returns: a verdict on it would
    be kept already lapsed, so neither return, nor a next one, excludes the pickup."""
    restored = assert_item(6, "h2", "Sunrise Hotel is booked.")
    decisions = run(store, [*HISTORY, restored, ret(7), ret(8, "A3"), depart(9), ret(10)])

    assert all("p0" in d["selected"] for d in decisions)
    assert decisions[0]["judgment"]["confirmed"] == 0


def test_a_restatement_only_another_principal_reads_restores_nothing_before_the_return(
    store: WorkStateStore,
) -> None:
    theirs = {**assert_item(6, "h2", "Sunrise Hotel is booked."), "author": "B1"}
    decisions = run(store, [*HISTORY, theirs, ret(7), depart(8), ret(9)])

    assert reason(decisions[0], "p0") == "implicitly_invalidated"
    assert "p0" not in decisions[1]["items"]  # left out of the departure under the verdict


@pytest.mark.parametrize("undone", list(_UNDONE))
def test_news_withdrawn_before_the_return_is_not_judged_against(
    store: WorkStateStore, undone: str
) -> None:
    """A verifier judging news: n1 would invalidate the pickup, but it was withdrawn."""
    verifier = _Invalidating("n1")
    events = [
        *HISTORY[:5],
        assert_item(5, "n1", "Pickups from Sunrise Hotel are suspended.", key="sunrise"),
        {"at": at(6), "author": "A2", **_UNDONE[undone]},
    ]
    decided = replay(
        load_scenario(scenario([*events, ret(7), depart(8), ret(9)])),
        store,
        verifier=verifier,
        signer=SIGNER,
    )
    assert all("p0" in d.record["selected"] for d in decided)


def test_what_a_return_had_no_time_to_screen_the_next_return_screens(
    store: WorkStateStore,
) -> None:
    pickups = [
        assert_item(1 + n, f"p{n}", f"Pickup {n} at 8:00 from Sunrise Hotel.") for n in range(3)
    ]
    events = [HISTORY[0], *pickups, depart(4), {**HISTORY[-1], "at": at(5)}]
    events += [ret(6), depart(7), ret(8), depart(9), ret(10)]
    timed = {**scenario(events), "policy": {"max_items": 8, "max_judgment_seconds": 0.01}}

    decided = replay(
        load_scenario(timed), store, verifier=SlowVerifier(seconds=0.05), signer=SIGNER
    )

    # Each return's first call takes longer than its whole budget: it judges one pickup,
    # withholds the others, and the next return judges the next one (newest first), not the
    # same one again.
    judgments = [d.record["judgment"] for d in decided]
    assert [(j["calls"], j["unscreened"]) for j in judgments] == [(1, 2), (1, 1), (1, 0)]
    assert [reason(d.record, "p0") for d in decided] == ["unscreened", "unscreened", None]
    assert {f"p{n}" for n in range(3)} <= set(decided[-1].record["selected"])


# Judging ahead (`readmit.ahead`): a return after it judges nothing it already judged,
# and decides exactly what it would have decided without it.


@dataclass
class Counting:
    """The built-in verifier, counting its calls (under its name: screenings are per verifier)."""

    inner: Verifier
    calls: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.calls += 1
        return self.inner.judge(pairs)


def _history(store: WorkStateStore) -> Scenario:
    made = load_scenario(scenario(HISTORY))
    apply_steps(made, store, on_return=None)
    return made


def _ahead(store: WorkStateStore, made: Scenario, verifier: Verifier, n: int = 6) -> Any:
    return judge_ahead(
        store,
        "trip",
        "A1",
        task="trip",
        purpose="itinerary",
        policy=made.policy,
        verifier=verifier,
        signer=SIGNER,
        at=parse_time(at(n)),
    )


def _returned(
    store: WorkStateStore, made: Scenario, verifier: Verifier, agent: str = "A1", n: int = 7
) -> dict[str, Any]:
    request = ReturnRequest(
        id=f"r{n}", at=parse_time(at(n)), agent=agent, task="trip", purpose="itinerary"
    )
    return decide(
        store, "trip", request, policy=made.policy, verifier=verifier, signer=SIGNER
    ).record


def _b1_after(store: WorkStateStore, made: Scenario, verifier: Verifier, first: str) -> Any:
    """B1's return, after A1's (``first``: "A1 returns") or A1 judged ahead, or neither."""
    if first == "A1 returns":
        _returned(store, made, verifier)
    elif first == "A1 judged ahead":
        _ahead(store, made, verifier)
    return _returned(store, made, verifier, "B1", 9)


def test_a_return_after_judging_ahead_judges_nothing_and_decides_the_same(
    store: WorkStateStore, tmp_path: Path
) -> None:
    made = _history(store)
    verifier = Counting(make_verifier("builtin"))

    judgment = _ahead(store, made, verifier)
    judged = verifier.calls
    record = _returned(store, made, verifier)

    assert judged > 0
    assert [e.item for e in judgment.confirmed] == ["p0"]
    assert verifier.calls == judged  # the return made no call
    assert record["judgment"]["calls"] == 0
    assert record["judgment"]["standing"] == 1
    twin = open_store(f"sqlite:///{tmp_path / 'twin.db'}")
    try:
        _history(twin)
        without = _returned(twin, made, make_verifier("builtin"))
    finally:
        twin.close()
    assert without["judgment"]["calls"] > 0
    assert record["items"] == without["items"]
    assert record["outcome"] == without["outcome"]
    assert {(e["item"], e["reason"]) for e in record["excluded"]} == {
        (e["item"], e["reason"]) for e in without["excluded"]
    }


def test_a_judge_ahead_under_a_stricter_threshold_leaves_the_return_to_judge_again(
    store: WorkStateStore,
) -> None:
    """p0's link to the cancelled booking is judged at 0.6: below a judge's threshold of
    0.65 (kept), above the return's 0.5 (excluded). The judge's screening binds no return
    under another threshold."""

    def rule(pair: Pair) -> Verdict:
        linked = pair.earlier.id == "p0" and pair.later.withdrawn_text is not None
        return Verdict(invalidates=linked, confidence=0.6 if linked else 0.99)

    made = _history(store)
    verifier = FunctionVerifier(rule, name="rule")
    judge = replace(made, policy=replace(made.policy, threshold=0.65))
    returning = replace(made, policy=replace(made.policy, threshold=0.5))

    assert not _ahead(store, judge, verifier).confirmed
    record = _returned(store, returning, verifier)

    assert reason(record, "p0") == "implicitly_invalidated"


def test_judging_ahead_records_no_decision_and_the_agent_stays_away(
    store: WorkStateStore,
) -> None:
    made = _history(store)

    _ahead(store, made, make_verifier("builtin"))

    assert store.decisions("trip") == []
    assert store.away("trip") == ["A1", "A3"]


def test_judging_ahead_again_with_nothing_new_judges_nothing(store: WorkStateStore) -> None:
    made = _history(store)
    verifier = Counting(make_verifier("builtin"))
    _ahead(store, made, verifier)
    judged = verifier.calls

    again = _ahead(store, made, verifier, n=7)

    assert (again.calls, verifier.calls) == (0, judged)
    assert again.standing == 1


def test_an_agent_that_has_not_departed_cannot_be_judged_ahead(store: WorkStateStore) -> None:
    made = _history(store)

    with pytest.raises(InvalidEvent, match="has not departed"):
        judge_ahead(
            store,
            "trip",
            "A2",
            task="trip",
            purpose="booking",
            policy=made.policy,
            verifier=make_verifier("builtin"),
            signer=SIGNER,
        )


def test_an_agent_is_away_from_its_departure_until_its_return(store: WorkStateStore) -> None:
    made = _history(store)
    assert store.away("trip") == ["A1", "A3"]

    _returned(store, made, make_verifier("builtin"))
    assert store.away("trip") == ["A3"]

    step = load_scenario(scenario([depart(8)])).steps[0]
    store.depart("trip", "A1", step.at)
    assert store.away("trip") == ["A1", "A3"]


def test_a_departure_dated_before_the_agents_latest_return_is_refused(
    store: WorkStateStore,
) -> None:
    """It would never count as away (`away` compares the times)."""
    made = _history(store)
    _returned(store, made, make_verifier("builtin"))  # at at(7)

    with pytest.raises(InvalidEvent, match="before its latest return"):
        store.depart("trip", "A1", parse_time(at(6)))

    assert store.away("trip") == ["A3"]


# A screening watermark binds every later return: one agent's screening must not stand
# for another's that can quote more (a review found this, with judging ahead).


def _private_then_withdrawn(withdraw: dict[str, Any]) -> list[dict[str, Any]]:
    """X only B's principal may read; Y, which everyone reads, names what X says; A and
    B depart; then X is withdrawn by ``withdraw``."""
    return [
        {
            "at": at(0),
            "author": "B1",
            "op": "assert",
            "item": {
                "id": "x",
                "text": "The standup room is Room Atlas.",
                "key": "room",
                "readers": {"principals": ["neighbours"]},
            },
        },
        {
            "at": at(1),
            "author": "B1",
            "op": "assert",
            "item": {
                "id": "y",
                "text": "Book Room Atlas for the Friday standup.",
                "readers": {"principals": "*"},
            },
        },
        depart(2),
        depart(3, "B1"),
        {"at": at(4), **withdraw},
    ]


WITHDRAWALS: list[dict[str, Any]] = [
    {"author": "B1", "op": "revoke", "target": "x", "why": "closed for repairs"},
    {
        "author": "B1",
        "op": "assert",
        "item": {
            "id": "x2",
            "text": "The standup room is Room Borealis.",
            "key": "room",
            "readers": {"principals": ["neighbours"]},
        },
    },
]


@pytest.mark.parametrize("withdraw", WITHDRAWALS, ids=["revoked", "replaced by key"])
@pytest.mark.parametrize("first", ["nobody", "A1 returns", "A1 judged ahead"])
def test_what_one_agent_could_not_quote_is_screened_for_another(
    store: WorkStateStore, withdraw: dict[str, Any], first: str
) -> None:
    """A1 cannot read X, so its screening of Y cannot quote X's withdrawal; B1's return
    must still judge Y against it, whoever screened Y before."""
    made = load_scenario(scenario(_private_then_withdrawn(withdraw)))
    apply_steps(made, store, on_return=None)

    record = _b1_after(store, made, make_verifier("builtin"), first)

    assert reason(record, "y") == "implicitly_invalidated"


def test_a_premise_restored_before_the_return_counts_though_the_agent_may_not_read_it(
    store: WorkStateStore,
) -> None:
    """X, which A1 may not read, is revoked and then stated again where everyone reads it:
    A1's return cannot quote X, yet judges by the store's rule, so the verdict it would
    store already lapsed never excludes Y, now or at the next return."""
    revoke = {"author": "B1", "op": "revoke", "target": "x", "why": "Room Atlas is shut."}
    public = {"id": "x3", "text": "The standup room is Room Atlas.", "readers": "*"}
    events = [
        *_private_then_withdrawn(revoke),
        {"at": at(5), "author": "B1", "op": "assert", "item": public},
        ret(6),
        depart(7),
        ret(8),
    ]
    made = load_scenario(scenario(events))
    decided = replay(made, store, verifier=_Invalidating("x", withdrawn=True), signer=SIGNER)

    assert [reason(d.record, "y") for d in decided] == [None, None]
    assert all("y" in d.record["selected"] for d in decided)


# A review found a return rebuilding the restoration rule from what it could quote: a
# keyed replacement of an item the returning agent may not read is news to it, while the
# stored verdict rests on the replaced item's text. Both now ask the store's rule.

_ATLAS = {"id": "x3", "text": "The standup room is Room Atlas.", "readers": "*"}


def _private_then_replaced_by_key(at_n: int) -> list[dict[str, Any]]:
    """X (B1's principal only, key ``room``) and Y; A1, A3 and B1 depart; B1's public W
    replaces X by its key."""
    public = {"id": "w", "text": "The standup room is Room Borealis.", "key": "room"}
    events = _private_then_withdrawn({"author": "B1", "op": "assert", "item": public})
    events.insert(3, depart(2, "A3"))
    events[-1] = {**events[-1], "at": at(at_n), "item": {**public, "readers": "*"}}
    return events


def test_a_keyed_replacement_the_agent_may_not_read_is_restored_by_the_stores_rule(
    store: WorkStateStore,
) -> None:
    """X's text comes back (public) before A1's return: that return must not exclude Y,
    or its verdict, stored already lapsed, would let the next return admit it."""
    restated = {"at": at(6), "author": "B1", "op": "assert", "item": _ATLAS}
    events = [*_private_then_replaced_by_key(5), restated, ret(7), depart(8), ret(9)]
    made = load_scenario(scenario(events))

    decided = replay(made, store, verifier=_Invalidating("w"), signer=SIGNER)

    assert [reason(d.record, "y") for d in decided] == [None, None]


@pytest.mark.parametrize("then", ["X restated", "W revoked"])
def test_a_return_in_between_agrees_with_its_twin_on_a_keyed_replacement_it_cannot_read(
    then: str,
) -> None:
    after = (
        {"at": at(8), "author": "B1", "op": "assert", "item": _ATLAS}
        if then == "X restated"
        else {"at": at(8), "author": "B1", "op": "revoke", "target": "w", "why": "no"}
    )
    last = {}
    for middle in ([], [ret(6)]):
        store = open_store("sqlite:///:memory:")
        try:
            made = load_scenario(
                scenario([*_private_then_replaced_by_key(5), *middle, after, ret(9, "A3")])
            )
            decided = replay(made, store, verifier=_Invalidating("w"), signer=SIGNER)
            last[bool(middle)] = decided[-1].record
        finally:
            store.close()

    assert reason(last[True], "y") == reason(last[False], "y")
    assert reason(last[True], "y") == (None if then == "X restated" else "implicitly_invalidated")


@pytest.mark.parametrize(("restated", "lapses"), [("z", True), ("x", False)])
def test_a_return_in_between_agrees_with_its_twin_when_one_event_replaced_two_items(
    restated: str, lapses: bool
) -> None:
    """W replaces X (B1's) and Z (everyone's) by key, and Y's verdict rests on Z's
    withdrawal. Z's text coming back restores it; X's, which W also replaced, does not.
    A return in between judges so too."""
    z = {"id": "z", "text": "The standup room is Room Cedar.", "key": "room", "readers": "*"}
    w = {"id": "w", "text": "The standup room is Room Borealis.", "key": "room", "readers": "*"}
    events = _private_then_withdrawn({"author": "B1", "op": "assert", "item": w})
    events[1:1] = [{"at": at(0), "author": "A2", "op": "assert", "item": z}]
    events.insert(4, depart(2, "A3"))
    text = z["text"] if restated == "z" else "The standup room is Room Atlas."
    public = {"id": "r", "text": text, "readers": "*"}
    again = {"at": at(8), "author": "B1", "op": "assert", "item": public}
    last = {}
    for middle in ([], [ret(6)]):
        store = open_store("sqlite:///:memory:")
        try:
            made = load_scenario(scenario([*events, *middle, again, ret(9, "A3")]))
            verifier = _Invalidating("z", withdrawn=True)
            last[bool(middle)] = replay(made, store, verifier=verifier, signer=SIGNER)[-1].record
        finally:
            store.close()

    assert reason(last[True], "y") == reason(last[False], "y")
    assert reason(last[True], "y") == (None if lapses else "implicitly_invalidated")


@dataclass
class _PremiseReader:
    """Stands in for a model shown an item's premises: news about the standup invalidates
    an answer whose premise asks about the standup."""

    name: str = "premise-reader"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [
            Verdict(
                invalidates="standup" in pair.later.text
                and any("standup" in p for p in pair.premises),
                confidence=0.95,
            )
            for pair in pairs
        ]


@pytest.mark.parametrize("first", ["A1 returns", "A1 judged ahead"])
def test_a_watermark_binds_only_readers_who_see_what_its_screening_saw(
    store: WorkStateStore, first: str
) -> None:
    """A1 may not read Y's premise, so its verifier judged Y without it: that screening
    does not spare B1's, which is shown the premise and finds Y invalidated."""
    question = {"id": "p", "text": "Question: when is the standup?"}
    made = load_scenario(
        scenario(
            [
                {
                    "at": at(0),
                    "author": "B1",
                    "op": "assert",
                    "item": {**question, "readers": {"principals": ["neighbours"]}},
                },
                {
                    "at": at(1),
                    "author": "B1",
                    "op": "assert",
                    "item": {
                        "id": "y",
                        "text": "The standup is at 9:00 on Fridays.",
                        "depends_on": ["p"],
                        "readers": {"principals": "*"},
                    },
                },
                depart(2),
                depart(3, "B1"),
                assert_item(4, "n", "The standup moved to Mondays.", readers={"principals": "*"}),
            ]
        )
    )
    apply_steps(made, store, on_return=None)

    record = _b1_after(store, made, _PremiseReader(), first)

    assert reason(record, "y") == "implicitly_invalidated"


def test_a_lapsed_verdicts_item_is_judged_against_what_came_after_its_evidence(
    store: WorkStateStore,
) -> None:
    """A1's return stopped at Y's first confirmed invalidation (X1 revoked); X2's
    revocation after it was never judged. Once X1's statement is restored the verdict
    lapses, and B1's return must still judge Y against X2's revocation."""
    atlas = "The standup room is Room Atlas."
    run(
        store,
        [
            assert_item(0, "x1", atlas),
            assert_item(1, "x2", "Room Atlas hosts the standup on Fridays."),
            assert_item(2, "y", "Book Room Atlas for the Friday standup."),
            depart(3),
            depart(4, "A3"),
            {"at": at(5), "author": "A2", "op": "revoke", "target": "x1", "why": "closed"},
            {"at": at(6), "author": "A2", "op": "revoke", "target": "x2", "why": "closed"},
            ret(7),
            assert_item(8, "r", atlas),  # restores what X1's revocation withdrew
            ret(9, "A3"),
        ],
    )

    later = store.decision(2, "trip")

    assert reason(later, "y") == "implicitly_invalidated"
    [y] = [e for e in later["excluded"] if e["item"] == "y"]
    assert y["evidence"] == ["e6"]


# A checkpoint leaves out an item a verdict found invalid. Its later withdrawal is still
# a withdrawal, quoted for the agent that may read it: an item that names it is screened
# against it as it would have been had no verdict come first (a review found this).


def _pickup(extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        assert_item(0, "h0", "Sunrise Hotel is booked."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel for the Riverside Ferry.", **extra),
        assert_item(2, "c2", "The Riverside Ferry sails at 9:30."),
        depart(3),
        {"at": at(4), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
    ]


LAKESIDE = "Pickup at 8:00 from Lakeside Hotel for the Harbour Ferry."
PICKUP_WITHDRAWALS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "revoked": ({}, {"op": "revoke", "target": "p0", "why": "cancelled"}),
    "superseded": (
        {},
        {"op": "supersede", "target": "p0", "item": {"id": "p1", "text": LAKESIDE}},
    ),
    "replaced by key": (
        {"key": "pickup"},
        {"op": "assert", "item": {"id": "p1", "text": LAKESIDE, "key": "pickup"}},
    ),
}


@pytest.mark.parametrize("case", PICKUP_WITHDRAWALS, ids=list(PICKUP_WITHDRAWALS))
@pytest.mark.parametrize("verdict_first", [False, True], ids=["twin", "verdict first"])
def test_withdrawing_an_item_a_verdict_left_out_still_screens_what_names_it(
    store: WorkStateStore, case: str, verdict_first: bool
) -> None:
    extra, withdraw = PICKUP_WITHDRAWALS[case]
    first = [ret(5), depart(6)] if verdict_first else []
    records = run(
        store, [*_pickup(extra), *first, {"at": at(7), "author": "A2", **withdraw}, ret(8)]
    )

    if verdict_first:
        assert reason(records[0], "p0") == "implicitly_invalidated"
        assert reason(records[0], "c2") is None
    assert reason(records[-1], "c2") == "implicitly_invalidated"


def test_a_checkpoint_keeps_what_it_left_out_that_its_agent_may_read(
    store: WorkStateStore,
) -> None:
    """P0 fell under a verdict before A1 and B1 left; B1 may not read it."""
    private = {"readers": {"principals": ["family"]}}
    run(store, [*_pickup(private), ret(5), depart(6), depart(6, "B1")])

    for agent, left_out in (("A1", ["p0"]), ("B1", [])):
        request = ReturnRequest(id="r", at=parse_time(at(8)), agent=agent, task="t", purpose="p")
        context = store.return_context("trip", request)
        assert [i.id for i in context.left_out] == left_out
        assert "p0" not in context.departure.item_ids


FEW_WORDS = WORDS[:3]  # fewer names: items share them, so verdicts chain


@st.composite
def two_absences(
    draw: st.DrawFn, shared: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A history up to a first return, and what is withdrawn after it.

    With ``shared``, B1's private item holds a key A2's items hold too (neither may
    replace the other's: a key with two holders).
    """
    events = draw(histories(FEW_WORDS))
    if shared:
        gone = next(n for n, e in enumerate(events) if e["op"] == "depart")
        words = ", ".join(draw(st.lists(st.sampled_from(FEW_WORDS), min_size=1, max_size=2)))
        private = {
            "id": "b0",
            "text": f"Theirs: {words}.",
            "key": draw(st.sampled_from(["k1", "k2"])),
            "readers": {"principals": ["neighbours"]},
        }
        theirs = {"at": events[gone]["at"], "author": "B1", "op": "assert", "item": private}
        events.insert(gone, theirs)
    stored = [e["item"] for e in events if e["op"] == "assert" and e["item"]["id"][0] == "i"]
    holder = {i["key"]: i["id"] for i in stored if "key" in i}  # the newest of each key
    revoked = {e["target"] for e in events if e["op"] == "revoke"}
    active = [i for i in stored if holder.get(i.get("key"), i["id"]) == i["id"]]
    later = []
    for j, item in enumerate(draw(st.lists(st.sampled_from(active), max_size=2, unique_by=id))):
        if item["id"] in revoked:
            continue
        said = draw(st.lists(st.sampled_from(FEW_WORDS), min_size=1, max_size=2))
        new = {"id": f"s{j}", "text": f"Changed {j}: {', '.join(said)}."}
        match draw(
            st.sampled_from(
                ["revoke", "supersede", "key"] if "key" in item else ["revoke", "supersede"]
            )
        ):
            case "revoke":
                later.append({"op": "revoke", "target": item["id"], "why": "x"})
            case "supersede":
                later.append({"op": "supersede", "target": item["id"], "item": new})
            case _:
                later.append({"op": "assert", "item": {**new, "key": item["key"]}})
    return events, later


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(two_absences(), two_absences(shared=True)))
def test_a_return_in_between_never_admits_what_the_twin_without_it_excluded_as_stale(
    case: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """Returning and departing in the middle confirms verdicts first; the last return
    may exclude more, never admit what the same history without that return excludes."""
    events, later = case
    n = len(events)
    tail = [{"at": at(n + 2 + k), "author": "A2", **e} for k, e in enumerate(later)]
    last = {}
    for middle in ([], [ret(n), depart(n + 1)]):
        store = open_store("sqlite:///:memory:")
        try:
            last[bool(middle)] = run(store, [*events, *middle, *tail, ret(n + 10)])[-1]
        finally:
            store.close()

    stale = {e["item"] for e in last[False]["excluded"] if e["reason"] in STALE}
    assert not stale & set(last[True]["items"])


# A supersession whose new item has a key also replaces the items that held the key.


@pytest.mark.parametrize("how", ["keyed assert", "keyed supersession"])
def test_a_keyed_supersession_withdraws_what_held_its_key_for_screening(
    store: WorkStateStore, how: str
) -> None:
    new = {"id": "x2", "text": "The standup room is Room Borealis.", "key": "room"}
    replace = (
        {"op": "assert", "item": new}
        if how == "keyed assert"
        else {"op": "supersede", "target": "t", "item": new}
    )
    [record] = run(
        store,
        [
            assert_item(0, "x", "The standup room is Room Atlas.", key="room"),
            assert_item(1, "y", "Book Room Atlas for the Friday standup."),
            assert_item(2, "t", "The standup is at 9:00."),
            depart(3),
            {"at": at(4), "author": "A2", **replace},
            ret(5),
        ],
    )

    assert reason(record, "x") == "stale_or_superseded"
    assert reason(record, "y") == "implicitly_invalidated"


@pytest.mark.parametrize("first", ["nobody", "A1 returns", "A1 judged ahead"])
def test_a_keyed_supersession_of_what_one_agent_reads_is_screened_for_another(
    store: WorkStateStore, first: str
) -> None:
    """B1 supersedes T, which everyone reads, with an item keyed like X, which only B1
    may read: that replaces X too. A1 cannot quote X's replacement, so its screening of
    Y must not spare B1's."""
    private = {"readers": {"principals": ["neighbours"]}}
    x, y = _private_then_withdrawn(WITHDRAWALS[0])[:2]
    new = {"id": "t2", "text": "The standup room is Room Borealis.", "key": "room", **private}
    events = [
        x,
        y,
        {**assert_item(1, "t", "The standup is at 9:00."), "author": "B1"},
        depart(2),
        depart(3, "B1"),
        {"at": at(4), "author": "B1", "op": "supersede", "target": "t", "item": new},
    ]
    made = load_scenario(scenario(events))
    apply_steps(made, store, on_return=None)

    record = _b1_after(store, made, make_verifier("builtin"), first)

    assert reason(record, "x") == "stale_or_superseded"
    assert reason(record, "y") == "implicitly_invalidated"


# What a second review found: keys held by several items, restoration, and wording.


def test_a_key_held_also_by_an_item_the_agent_may_not_read_still_quotes_its_own(
    store: WorkStateStore,
) -> None:
    """Y fell with its premise before A1 left; B1's private item holds Y's key as well
    (B1 cannot read Y, so it replaced nothing). Y's replacement must still screen C."""
    private = {"readers": {"principals": ["neighbours"]}}
    garden = {"id": "w", "text": "Neighbours meet in the garden.", "key": "room", **private}
    [record] = run(
        store,
        [
            assert_item(0, "h0", "Sunrise Hotel is booked."),
            assert_item(1, "y", "The standup room is Room Atlas.", key="room", depends_on=["h0"]),
            assert_item(2, "c", "Book Room Atlas for the Friday standup."),
            {"at": at(3), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
            {"at": at(4), "author": "B1", "op": "assert", "item": garden},
            depart(5),
            assert_item(6, "y2", "The standup room is Room Borealis.", key="room"),
            ret(7),
        ],
    )

    assert reason(record, "c") == "implicitly_invalidated"


@pytest.mark.parametrize("earlier", ["none", "revoked before", "held"])
def test_restating_a_keyed_supersessions_target_lapses_its_verdict(
    store: WorkStateStore, earlier: str
) -> None:
    """P fell with T's keyed supersession. Restating T restores P's premise, though the
    supersession also replaced the item its key held: the verdict rests on T, the item its
    judged observation withdrew."""
    desk = assert_item(0, "x", "Ferry desk opens at noon.", key="ferry")
    before = {
        "none": [],
        "revoked before": [
            desk,
            {"at": at(1), "author": "A2", "op": "revoke", "target": "x", "why": "old"},
        ],
        "held": [desk],
    }[earlier]
    harbour = {"id": "t2", "text": "The Harbour Ferry sails at 9:30.", "key": "ferry"}
    first, later = run(
        store,
        [
            *before,
            assert_item(2, "t", "The Riverside Ferry sails at 9:30."),
            assert_item(3, "p", "Pickup at 8:00 for the Riverside Ferry."),
            depart(4),
            depart(5, "A3"),
            {"at": at(6), "author": "A2", "op": "supersede", "target": "t", "item": harbour},
            ret(7),
            assert_item(8, "t3", "The Riverside Ferry sails at 9:30."),  # T's text again
            ret(9, "A3"),
        ],
    )

    assert reason(first, "p") == "implicitly_invalidated"
    assert reason(later, "p") is None


def test_a_verdicts_wording_is_shown_only_to_readers_like_the_one_that_confirmed_it(
    store: WorkStateStore,
) -> None:
    """A1 confirmed C's invalidation by Q's revocation; B1 may not read Q, so it is told
    the evidence, not the wording, which names Q."""
    a1, b1 = run(
        store,
        [
            assert_item(1, "q", "The standup room is Room Atlas."),
            assert_item(
                2, "c", "Book Room Atlas for the Friday standup.", readers={"principals": "*"}
            ),
            depart(4),
            depart(5, "B1"),
            {"at": at(6), "author": "A2", "op": "revoke", "target": "q", "why": "moved"},
            ret(7),
            ret(8, "B1"),
        ],
    )

    [mine] = [e for e in a1["excluded"] if e["item"] == "c"]
    [theirs] = [e for e in b1["excluded"] if e["item"] == "c"]
    assert "refers to q" in mine["detail"]
    assert theirs["evidence"] == mine["evidence"]
    assert theirs["detail"] == "confirmed earlier by builtin: the events given invalidated it"
    assert mine["detail"].startswith("builtin: ")  # decided at A1's own return


# What a third review found: memos across readers, a keyed assert's restoration, wording.


def test_a_return_never_inherits_the_observations_of_a_reader_with_less_in_its_checkpoint(
    store: WorkStateStore,
) -> None:
    """A1's C (A only) is a prefix of B1's (A, Y, Z): what was made for A1, which cannot
    quote Z's revocation, must not serve B1's return."""
    neighbours = {"readers": {"principals": ["neighbours"]}}

    def b1(n: int, id: str, text: str) -> dict[str, Any]:
        return {**assert_item(n, id, text, **neighbours), "author": "B1"}

    history = [
        assert_item(0, "a", "Quiet rooms preferred.", readers={"principals": "*"}),
        b1(1, "z", "The standup room is Room Atlas."),
        b1(2, "y", "Book Room Atlas for the Friday standup."),
        depart(3),
        depart(3, "B1"),
        {"at": at(4), "author": "B1", "op": "revoke", "target": "z", "why": "closed"},
        ret(5),
        ret(6, "B1"),
    ]

    assert reason(run(store, history)[-1], "y") == "implicitly_invalidated"


@pytest.mark.parametrize(("restated", "lapses"), [("i1", True), ("b0", False)])
def test_a_verdict_on_a_keyed_assert_that_replaced_two_items_lapses_by_the_one_it_rests_on(
    store: WorkStateStore, restated: str, lapses: bool
) -> None:
    """B1 could not read I1, so B0 did not replace it: both held the key, and A2's I2
    replaced both; Y fell with I1. Restating I1 lapses Y's verdict (its judged observation
    withdrew I1: m022 keeps that); restating B0 does not."""
    garden = "Neighbours meet in the garden."
    private = {"readers": {"principals": ["neighbours", "family"]}}
    again = {
        "i1": assert_item(7, "g2", "The standup room is Room Atlas."),
        "b0": {**assert_item(7, "g2", garden, readers="*"), "author": "B1"},
    }[restated]
    first, later = run(
        store,
        [
            assert_item(0, "i1", "The standup room is Room Atlas.", key="room"),
            {**assert_item(1, "b0", garden, key="room", **private), "author": "B1"},
            assert_item(2, "y", "Book Room Atlas for the Friday standup."),
            depart(3),
            depart(4, "A3"),
            assert_item(5, "i2", "The standup room is Room Borealis.", key="room"),
            ret(6),
            again,
            ret(8, "A3"),
        ],
    )

    assert reason(first, "y") == "implicitly_invalidated"
    assert reason(later, "y") == (None if lapses else "implicitly_invalidated")


def test_a_verdict_kept_before_m022_on_a_keyed_assert_that_replaced_two_items_is_judged_again(
    backend: str, tmp_path: Path
) -> None:
    """A verdict kept before m022 does not say which of the two items I2 replaced it rests
    on: stating I1 again, which lapses one kept since, leaves it standing; m023 lapses it
    at its evidence, for the next return to judge again (a review's suggestion: it stood
    for good)."""
    private = {"readers": {"principals": ["neighbours", "family"]}}
    i2 = assert_item(5, "i2", "The standup room is Room Borealis.", key="room")
    events = [
        assert_item(0, "i1", "The standup room is Room Atlas.", key="room"),
        {**assert_item(1, "b0", "Neighbours meet in the garden.", key="room", **private)},
        assert_item(2, "p0", "Book Room Atlas for the Friday standup."),
        depart(3),
        {**i2, "id": "evidence"},
        ret(6),
    ]
    events[1]["author"] = "B1"
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        [record] = run(store, events)
        assert isinstance(store, SqlStore)
        with store.conn.transaction():  # as a return before m022 left it
            store.conn.execute(
                "UPDATE invalidations SET premise = NULL, restore_text = NULL, restore_item = NULL"
            )
        restated = assert_item(7, "g2", "The standup room is Room Atlas.")
        again = load_scenario(scenario([{**restated, "id": "again"}]))
        store.append("trip", list(again.steps))  # type: ignore[arg-type]
        (standing,) = store.conn.execute(
            "SELECT lapsed_epoch FROM invalidations WHERE item = 'p0'"
        ).fetchone()
        epoch = _epoch_of(store, "evidence")
        lapsed, _ = _migrated_again(store, url, "m023", None)

    assert reason(record, "p0") == "implicitly_invalidated"
    assert standing is None
    assert lapsed == epoch


def test_an_invalidation_by_what_the_agent_may_not_read_does_not_quote_it(
    store: WorkStateStore,
) -> None:
    """B1's private B, then its public B2 replacing it: Y (which names B's room) falls,
    and A1, who may not read B, is not told B's id, what linked them, nor the event
    (stop 48: the event that replaced B by its key is about B)."""
    [record] = run(
        store,
        [
            assert_item(0, "y", "Book Room Atlas for the Friday standup."),
            depart(1),
            {
                "at": at(2),
                "author": "B1",
                "op": "assert",
                "item": {
                    "id": "b",
                    "text": "The standup room is Room Atlas.",
                    "key": "room",
                    "readers": {"principals": ["neighbours"]},
                },
            },
            {
                "at": at(3),
                "author": "B1",
                "op": "assert",
                "item": {
                    "id": "b2",
                    "text": "The standup room is Room Borealis.",
                    "key": "room",
                    "readers": "*",
                },
            },
            ret(4),
        ],
    )

    [y] = [e for e in agent_copy(record)["excluded"] if e["item"] == "y"]
    assert (y["reason"], y["evidence"], "detail" in y) == ("implicitly_invalidated", [], False)
    [said] = [e for e in record["excluded"] if e["item"] == "y"]  # the operator's record
    assert said["detail"] == "builtin: an event about what you may not read invalidated it"


def test_a_withdrawal_before_the_departure_of_what_the_agent_reads_keeps_its_wording(
    store: WorkStateStore,
) -> None:
    """H0 revoked before A1 departs: the record says why P0 fell, not that what linked
    them is something A1 may not read (it may read H0)."""
    [record] = run(
        store,
        [
            assert_item(0, "h0", "Sunrise Hotel is booked."),
            assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
            {"at": at(2), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
            depart(3),
            ret(4),
        ],
    )

    [p0] = [e for e in record["excluded"] if e["item"] == "p0"]
    assert p0["reason"] == "implicitly_invalidated"
    assert p0["detail"] == "builtin: refers to h0, which e2 revoked (linked by Sunrise Hotel)"


# What a fourth review found: memos across left-out items, another principal's evidence.


def test_a_return_never_inherits_the_observations_of_a_reader_that_left_out_less(
    store: WorkStateStore,
) -> None:
    """A1 and A2 left with the same D_a; A2 also left out Y (expired, only bookers read
    it), A1 only X. A1 returns first: A2's return must still quote Y's revocation."""
    past = {"valid_to": "2026-05-01T07:00:00Z"}
    [_, late] = run(
        store,
        [
            assert_item(0, "a", "Book Room Atlas for the Friday standup.", readers="*"),
            assert_item(1, "x", "Old budget note.", readers="*", **past),
            assert_item(
                2, "y", "The standup room is Room Atlas.", readers={"roles": ["booking"]}, **past
            ),
            depart(3),
            depart(3, "A2"),
            {"at": at(4), "author": "A2", "op": "revoke", "target": "y", "why": "closed"},
            ret(5),
            assert_item(6, "n", "Lunch at noon.", readers="*"),
            ret(7, "A2"),
        ],
    )

    assert reason(late, "a") == "implicitly_invalidated"


@dataclass
class _Quoting:
    """Stands in for a model that judges news and quotes what it read (or cannot tell)."""

    name: str = "quoting"
    abstains: bool = False

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [
            Verdict(
                invalidates=p.later.op == "evidence" and not self.abstains,
                confidence=0.95,
                reason=f"the event says {p.later.text!r}",
                abstained=self.abstains,
            )
            for p in pairs
        ]


@pytest.mark.parametrize(
    ("abstains", "why"), [(False, "implicitly_invalidated"), (True, "verifier_unavailable")]
)
def test_an_exclusion_by_another_principals_evidence_does_not_quote_it(
    store: WorkStateStore, abstains: bool, why: str
) -> None:
    made = load_scenario(
        scenario(
            [
                assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
                depart(1),
                {
                    "at": at(2),
                    "author": "B1",
                    "op": "evidence",
                    "source": {"id": "s1", "text": "Private memo: Sunrise Hotel closes."},
                },
                ret(3),
            ]
        )
    )
    [decided] = replay(made, store, verifier=_Quoting(abstains=abstains), signer=SIGNER)

    [p0] = [e for e in agent_copy(decided.record)["excluded"] if e["item"] == "p0"]
    assert p0["reason"] == why
    assert p0["evidence"] == []  # B1's evidence is read as its principal's alone
    assert "detail" not in p0  # which may quote it


# A checkpoint made before its store recorded what it left out (migration m013) finds it
# from the items and the log: a return to it quotes the same withdrawals.


def _made_before_m013(store: WorkStateStore, undated: bool) -> None:
    """Forget what every checkpoint left out (and, ``undated``, when items were withdrawn)."""
    assert isinstance(store, SqlStore)
    with store.conn.transaction():
        store.conn.execute("DELETE FROM checkpoint_left_out")
        store.conn.execute("UPDATE checkpoints SET left_out_recorded = NULL")
        if undated:  # withdrawn before m012
            store.conn.execute("UPDATE withdrawn SET epoch = NULL")


def _left_out(store: WorkStateStore, n: int) -> list[str]:
    request = ReturnRequest(id="r", at=parse_time(at(n)), agent="A1", task="t", purpose="p")
    return [i.id for i in store.return_context("trip", request).left_out]


NO_REPLACEMENT: dict[
    str, dict[str, Any] | None
] = {  # an item of p0's key asserted before the departure that replaced nothing
    "none": None,
    "another principal's": {
        "at": at(1),
        "author": "B1",
        "op": "assert",
        "item": {
            "id": "b0",
            "text": "Theirs: budget.",
            "key": "pickup",
            "readers": {"principals": ["neighbours"]},
        },
    },
    "hearsay": {
        "at": at(1),
        "author": "A2",
        "op": "assert",
        "item": {"id": "u0", "text": "Heard: budget.", "key": "pickup", "unconfirmed": True},
    },
}


@pytest.mark.parametrize("case", PICKUP_WITHDRAWALS, ids=list(PICKUP_WITHDRAWALS))
@pytest.mark.parametrize("undated", [False, True], ids=["dated", "withdrawn before m012"])
@pytest.mark.parametrize("between", NO_REPLACEMENT, ids=[f"{k} between" for k in NO_REPLACEMENT])
def test_a_checkpoint_from_before_m013_still_screens_what_names_an_item_it_left_out(
    backend: str, tmp_path: Path, case: str, undated: bool, between: str
) -> None:
    """(A key asserted between p0 and the departure, if any, is the same as p0's.)"""
    extra, withdraw = PICKUP_WITHDRAWALS[case]
    keyed = NO_REPLACEMENT[between]
    pickup = _pickup({**extra, "key": "pickup"} if keyed else extra)
    if keyed:
        pickup.insert(2, keyed)
    head = [*pickup, ret(5), depart(6), {"at": at(7), "author": "A2", **withdraw}]
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, head)
        _made_before_m013(store, undated)
        store.close()

        again = open_store(url)  # a new process: nothing remembered
        made = load_scenario(scenario(head))
        record = _returned(again, made, make_verifier("builtin"), n=8)
        again.close()

    assert reason(record, "c2") == "implicitly_invalidated"


REPLACED_BEFORE = (  # i0 replaced by its key before the departure, which Δ asserts again
    [
        assert_item(0, "i0", "Note 0: Riverside.", key="k1"),
        assert_item(1, "i1", "Note 1: pickup.", key="k1"),
        {"at": at(2), "author": "A2", "op": "revoke", "target": "i1", "why": "x"},
        depart(3),
    ],
    [{"op": "assert", "item": {"id": "s0", "text": "Changed 0: Riverside.", "key": "k1"}}],
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(two_absences(), two_absences(shared=True)), st.booleans())
@example(REPLACED_BEFORE, True)
def test_what_a_checkpoint_left_out_is_found_again_as_it_was_recorded(
    case: tuple[list[dict[str, Any]], list[dict[str, Any]]], undated: bool
) -> None:
    events, later = case
    n = len(events)
    tail = [{"at": at(n + 2 + k), "author": "A2", **e} for k, e in enumerate(later)]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/readmit.db"
        store = open_store(url)
        run(store, [*events, ret(n), depart(n + 1), *tail])
        recorded = _left_out(store, n + 10)
        _made_before_m013(store, undated)
        store.close()

        again = open_store(url)
        found = _left_out(again, n + 10)
        again.close()

    assert found == recorded


def test_m013_marks_the_checkpoints_that_recorded_what_they_left_out(
    backend: str, tmp_path: Path
) -> None:
    """A1's departure left p0 out; B1's left nothing out it may read (both before m013)."""
    private = {"readers": {"principals": ["family"]}}
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, [*_pickup(private), ret(5), depart(6), depart(6, "B1")])
        assert isinstance(store, SqlStore)
        with store.conn.transaction():  # as m012 left it
            store.conn.execute("ALTER TABLE checkpoints DROP COLUMN left_out_recorded")
            store.conn.execute("DELETE FROM _readmit_migrations WHERE name LIKE ?", ("m013_%",))
        store.close()

        again = open_store(url)
        assert isinstance(again, SqlStore)
        marks = again.conn.execute(
            "SELECT agent, epoch, left_out_recorded FROM checkpoints ORDER BY agent, epoch"
        ).fetchall()
        left = _left_out(again, 8)
        again.close()

    assert [tuple(r) for r in marks] == [("A1", 3, None), ("A1", 4, 1), ("B1", 4, None)]
    assert left == ["p0"]


def test_a_premise_restored_before_the_departure_is_not_judged_against(
    store: WorkStateStore,
) -> None:
    """p0 was never screened, so its screening reaches back before the departure, through a
    log the built-in verifier reads for withdrawals only: the restatement is read too."""
    events = [
        assert_item(0, "h0", "Sunrise Hotel is booked."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        {"at": at(2), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
        assert_item(3, "h2", "Sunrise Hotel is booked."),
        depart(4),
        ret(5),
        depart(6),
        ret(7),
    ]
    decisions = run(store, events)

    assert all("p0" in d["selected"] for d in decisions)


# The twin search found a return in between admitting what its twin excluded: D_a holds
# only what its agent may read, so a later withdrawal of another principal's item from
# before the departure was news to the return, where the twin's Δ held the item's
# assertion and quoted it. The store now quotes it (`readmit.store.quoted`).


@pytest.mark.parametrize("withdrawal", ["keyed replacement", "revocation"])
def test_a_return_in_between_quotes_a_withdrawal_of_what_its_agent_may_not_read(
    store: WorkStateStore, withdrawal: str
) -> None:
    """B1 may not read the family's i13, asserted before B1's second departure and
    withdrawn after it; i11 (everyone's) names what i13 said."""
    keyed = withdrawal == "keyed replacement"
    private = {"id": "i13", "text": "Note 14: Sunrise Hotel, Riverside."} | (
        {"key": "k2"} if keyed else {}
    )
    withdraw = (
        assert_item(21, "i17", "Note 18: INC-42, Dr Lee.", key="k2")
        if keyed
        else {"at": at(21), "author": "A2", "op": "revoke", "target": "i13", "why": "no"}
    )
    head = [
        depart(10, "B1"),
        assert_item(11, "i11", "Note 12: Sunrise Hotel.", readers="*"),
        {"at": at(12), "author": "A2", "op": "assert", "item": private},
    ]
    last = {}
    for middle in ([], [ret(15, "B1"), depart(16, "B1")]):
        events = [*head, *middle, withdraw, ret(22, "B1")]
        made = load_scenario({**scenario(events), "workspace": f"trip{len(middle)}"})
        verifier = make_verifier("builtin")
        last[bool(middle)] = replay(made, store, verifier=verifier, signer=SIGNER)[-1].record

    assert reason(last[True], "i11") == reason(last[False], "i11") == "implicitly_invalidated"
    shown = next(e for e in last[True]["excluded"] if e["item"] == "i11")
    assert "Riverside" not in json.dumps(shown)  # quoted to the verifier, never to B1


def test_a_context_detached_from_its_store_lends_no_observations_to_one_that_is_not(
    store: WorkStateStore,
) -> None:
    """Both share their tuples; what the detached one made (quoting nothing) must not
    serve the other (a review's finding)."""
    private = {"id": "i13", "text": "Note 14: Sunrise Hotel, Riverside.", "key": "k2"}
    events = [
        depart(10, "B1"),
        assert_item(11, "i11", "Note 12: Sunrise Hotel.", readers="*"),
        {"at": at(12), "author": "A2", "op": "assert", "item": private},
        depart(16, "B1"),
        assert_item(21, "i17", "Note 18: INC-42, Dr Lee.", key="k2"),
    ]
    apply_steps(load_scenario(scenario(events)), store, on_return=None)
    request = ReturnRequest(
        id="r", at=parse_time(at(22)), agent="B1", task="trip", purpose="itinerary"
    )
    verifier, policy = make_verifier("builtin"), Policy(max_items=8)
    ctx = store.return_context("trip", request)

    detached = admit(ctx.detached(), policy=policy, verifier=verifier, signer=SIGNER)
    attached = admit(ctx, policy=policy, verifier=verifier, signer=SIGNER)

    assert isinstance(detached, Issued)
    assert isinstance(attached, Issued)
    assert "i11" in [i.id for i in detached.items]  # it cannot quote what B1 may not read
    assert "i11" not in [i.id for i in attached.items]


# The twin search's other face: an item the agent reads resting on a premise it may not
# read, asserted before a departure. The departure's D_a lacks the premise, so a return
# did not screen it, where the same history without the departure (its Δ holding the
# premise) screened it and found it stale. A premise outside C that stands is screened.

_FAMILYS = assert_item(11, "p", "Sunrise Hotel is booked.")
_RESTS_ON_IT = assert_item(12, "i", "Pickup at 8:00.", readers="*", depends_on=["p"])
_NEWS: dict[str, Any] = {
    "at": at(13),
    "author": "B1",
    "op": "assert",
    "item": {"id": "n", "text": "Sunrise Hotel closed for renovation.", "readers": "*"},
}


def _naming_the_hotel(pair: Pair) -> Verdict:
    """Links an item (not its premises) to news naming the hotel; quotes what it read."""
    linked = "Sunrise Hotel" in pair.later.text and "Sunrise Hotel" in pair.earlier.text
    said = f"{pair.earlier.text} / {' '.join(pair.premises)}"
    return Verdict(invalidates=linked, confidence=0.9, reason=f"read: {said}")


def _pool_closed(pair: Pair) -> Verdict:
    """News that the pool is closed invalidates a swim in it (its withdrawal does not)."""
    news = pair.later.op != "revoke" and "closed" in pair.later.text
    return Verdict(invalidates=news and "pool" in pair.earlier.text, confidence=0.9)


@pytest.mark.parametrize("how", ["same key", "supersede"])
def test_news_filed_again_in_its_words_then_withdrawn_lapses_the_verdict_resting_on_it(
    store: WorkStateStore, how: str
) -> None:
    """N2 files news N1 again in its very words (by its key, or superseding it); the swim
    falls again, then N2 is revoked. The verdict rested on N2's words, news, not on N1's
    withdrawal: it lapses, and the swim is back for both agents (a review's finding: it
    was taken to rest on N1's statement, which only the news itself states, and stood)."""
    refiled = assert_item(6, "n2", "The pool is closed.", key="pool")
    if how == "supersede":
        refiled = {**refiled, "op": "supersede", "target": "n1"}
    events = [
        assert_item(0, "s", "Swim at 9 in the pool."),
        depart(1),
        depart(2, "A3"),
        assert_item(3, "n1", "The pool is closed.", key="pool"),
        ret(4),
        depart(5),
        refiled,
        ret(7),
        depart(8),
        {"at": at(9), "author": "A2", "op": "revoke", "target": "n2", "why": "reopened"},
        ret(10),
        ret(11, "A3"),
    ]
    verifier = FunctionVerifier(_pool_closed, name="pool")
    made = load_scenario(scenario(events))
    records = [d.record for d in replay(made, store, verifier=verifier, signer=SIGNER)]

    assert [reason(r, "s") for r in records[:2]] == ["implicitly_invalidated"] * 2
    assert ["s" in r["items"] for r in records[2:]] == [True, True]


def _pool_closed_now(pair: Pair) -> Verdict:
    """Words that say the pool is closed, as what holds now, invalidate a swim in it."""
    news = "closed" in (pair.later.replacement_text or "")
    return Verdict(invalidates=news and "pool" in pair.earlier.text, confidence=0.9)


@pytest.mark.parametrize("middle", [True, False], ids=["judged between", "one return"])
@pytest.mark.parametrize("how", ["same key", "supersede"])
@pytest.mark.parametrize(
    "fewer",
    [{"readers": {"principals": ["family"]}}, {"readers": "*", "valid_to": at(200)}],
    ids=["readers", "time"],
)
def test_news_filed_again_in_its_words_for_fewer_readers_or_uses_is_still_news(
    store: WorkStateStore, fewer: dict[str, Any], how: str, middle: bool
) -> None:
    """Everyone's N1, the pool is closed, filed again in its words by N2 for the family
    alone, or until tonight: the family's swim still rests on a closed pool, and stays out
    until N2 is revoked (a review's finding: N2 was shown to every item as N1's withdrawal,
    which the swim, older than N1, cannot rest on, and the swim came back while the pool
    was closed)."""
    refiled = assert_item(6, "n2", "The pool is closed.", key="pool", **fewer)
    if how == "supersede":
        refiled = {**refiled, "op": "supersede", "target": "n1"}
    first = [assert_item(0, "s", "Swim at 9 in the pool."), depart(1)]
    closed = assert_item(3, "n1", "The pool is closed.", key="pool", readers="*")
    between = [ret(4), depart(5)] if middle else []
    revoked = {"at": at(9), "author": "A2", "op": "revoke", "target": "n2", "why": "reopened"}
    verifier = FunctionVerifier(_pool_closed_now, name="pool")
    events = [*first, closed, *between, refiled, ret(7), depart(8), revoked, ret(10)]
    made = load_scenario(scenario(events))
    records = [d.record for d in replay(made, store, verifier=verifier, signer=SIGNER)]

    assert [reason(r, "s") for r in records[:-1]] == ["implicitly_invalidated"] * len(records[:-1])
    assert "s" in records[-1]["items"]


@pytest.mark.parametrize("bound", [{}, {"valid_to": at(200)}], ids=["for good", "until tonight"])
@pytest.mark.parametrize("how", ["fresh", "refiled"])
def test_news_filed_again_for_the_family_is_news_to_every_swim_as_the_familys_own_is(
    store: WorkStateStore, how: str, bound: dict[str, Any]
) -> None:
    """The family's "The pool is closed." makes every swim in the pool stale, whoever reads
    it, and so does everyone's filed again by its key for the family (a review's finding:
    everyone's swim came back for the family, and the neighbours' too, unless the refiling
    had an end)."""
    family = {"readers": {"principals": ["family"]}, **bound}
    swims = [
        assert_item(0, "sf", "Swim at 9 in the pool."),
        assert_item(0, "sn", "Swim at 10 in the pool.", readers={"principals": ["neighbours"]}),
        assert_item(0, "se", "Swim at 11 in the pool.", readers="*"),
    ]
    news = [assert_item(3, "n2", "The pool is closed.", **family)]
    if how == "refiled":
        everyone = assert_item(2, "n1", "The pool is closed.", key="pool", readers="*")
        news = [everyone, assert_item(3, "n2", "The pool is closed.", key="pool", **family)]
    events = [*swims, depart(1), depart(1, "B1"), *news, ret(4), ret(5, "B1")]
    verifier = FunctionVerifier(_pool_closed_now, name="pool")
    made = load_scenario(scenario(events))
    family_view, neighbours_view = (
        d.record for d in replay(made, store, verifier=verifier, signer=SIGNER)
    )

    assert {reason(family_view, s) for s in ("sf", "se")} == {"implicitly_invalidated"}
    assert {reason(neighbours_view, s) for s in ("sn", "se")} == {"implicitly_invalidated"}


@pytest.mark.parametrize(
    "readers", ["*", {"principals": ["family"]}], ids=["everyone's", "family's"]
)
def test_news_filed_again_never_excludes_an_item_that_says_the_same(
    store: WorkStateStore, readers: object
) -> None:
    """An item that itself says "The pool is closed." is not made stale by that news filed
    again for the family (a review's finding: made news, or a replacement in its own words,
    after the scanner left out news restating an item, it was judged and excluded)."""
    events = [
        assert_item(0, "r", "The pool is closed.", readers=readers),
        depart(1),
        assert_item(2, "n1", "The pool is closed.", key="pool", readers="*"),
        assert_item(3, "n2", "The pool is closed.", key="pool", readers={"principals": ["family"]}),
        ret(4),
    ]
    verifier = FunctionVerifier(_pool_closed_now, name="pool")
    made = load_scenario(scenario(events))
    [record] = [d.record for d in replay(made, store, verifier=verifier, signer=SIGNER)]

    assert "r" in record["items"]


@pytest.mark.parametrize(("rewritten", "lapses"), [("the news", True), ("other words", False)])
def test_m023_a_verdict_taken_to_rest_on_news_filed_again_lapses_to_be_judged_again(
    backend: str, tmp_path: Path, rewritten: str, lapses: bool
) -> None:
    """Before m022 a verdict on news filed again in its words rested on the first filing's
    text: only the news stated again restored it. m023 lapses it at its evidence; one
    resting on a statement replaced in other words stands."""
    text = "The pool is closed." if rewritten == "the news" else "The pool is open."
    events = [
        assert_item(0, "p0", "Swim at 9 in the pool."),
        depart(1),
        assert_item(3, "n1", text, key="pool"),
        {**assert_item(4, "n2", "The pool is closed.", key="pool"), "id": "again"},
    ]
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, events)
        assert isinstance(store, SqlStore)
        epoch = _old_verdict(store, text)  # as a return before m022 left it
        lapsed, watermarks = _migrated_again(store, url, "m023", None)

    assert lapsed == (epoch if lapses else None)
    assert watermarks == 0


@pytest.mark.parametrize("depth", [1, 2])
def test_a_premise_outside_c_that_stands_is_screened_as_the_twin_screens_it(
    store: WorkStateStore, depth: int
) -> None:
    """With ``depth`` 2, i rests on q (the family's too), which rests on p."""
    rests = [_RESTS_ON_IT]
    if depth == 2:
        q = assert_item(12, "q", "Shuttle booked.", depends_on=["p"])
        rests = [q, assert_item(12, "i", "Pickup at 8:00.", readers="*", depends_on=["q"])]
    head = [depart(10, "B1"), _FAMILYS, *rests]
    last = {}
    for middle in ([], [depart(12, "B1")]):
        events = [*head, *middle, _NEWS, ret(14, "B1")]
        made = load_scenario({**scenario(events), "workspace": f"trip{len(middle)}"})
        verifier = FunctionVerifier(_naming_the_hotel, name="hotel")
        last[bool(middle)] = replay(made, store, verifier=verifier, signer=SIGNER)[-1].record

    assert reason(last[True], "i") == reason(last[False], "i") == "premise_invalidated"
    for record in map(agent_copy, last.values()):  # B1 may not read the premises
        named = {x for e in record["excluded"] for x in (e["item"], *e["evidence"])}
        assert "Sunrise" not in json.dumps(record["excluded"])
        assert not {"p", "q"} & named


@pytest.mark.parametrize("outside", [False, True])
def test_the_agents_copy_counts_no_new_verdict_on_what_it_may_not_read(
    store: WorkStateStore, outside: bool
) -> None:
    """p (the family's) falls at B1's return, in C or outside it: the operator's record
    counts the verdict, B1's copy does not (a review's finding)."""
    middle = [depart(12, "B1")] if outside else []
    events = [depart(10, "B1"), _FAMILYS, _RESTS_ON_IT, *middle, _NEWS, ret(14, "B1")]
    verifier = FunctionVerifier(_naming_the_hotel, name="hotel")
    [decided] = replay(load_scenario(scenario(events)), store, verifier=verifier, signer=SIGNER)

    assert decided.record["judgment"]["confirmed"] == 1
    assert decided.record["judgment"]["shown"] == {"standing": 0, "confirmed": 0}
    assert agent_copy(decided.record)["judgment"]["confirmed"] == 0


def test_the_agents_copy_counts_no_standing_verdict_on_what_it_may_not_read(
    store: WorkStateStore,
) -> None:
    """A1's return finds p stale; B1's C holds p (asserted while it was away), under that
    verdict: the operator's record counts it, B1's copy does not."""
    away = [depart(10, "B1"), depart(10), _FAMILYS, _RESTS_ON_IT, _NEWS]
    made = load_scenario(scenario([*away, ret(14), ret(15, "B1")]))
    verifier = FunctionVerifier(_naming_the_hotel, name="hotel")
    a1, b1 = (d.record for d in replay(made, store, verifier=verifier, signer=SIGNER))

    assert reason(a1, "p") == "implicitly_invalidated"
    assert a1["judgment"]["shown"] == {"standing": 0, "confirmed": 1}
    assert b1["judgment"]["standing"] == 1
    assert agent_copy(b1)["judgment"]["standing"] == 0


def test_a_premise_outside_c_is_not_screened_again_against_what_it_was_screened_against(
    store: WorkStateStore,
) -> None:
    calm = {**_NEWS, "item": {**_NEWS["item"], "text": "Sunrise Hotel has a new lobby."}}
    events = [depart(10, "B1"), _FAMILYS, _RESTS_ON_IT, calm, depart(14, "B1")]
    made = load_scenario(scenario([*events, ret(15, "B1"), depart(16, "B1"), ret(17, "B1")]))
    verifier = FunctionVerifier(lambda _: Verdict(invalidates=False, confidence=0.9))

    first, again = (d.record for d in replay(made, store, verifier=verifier, signer=SIGNER))

    assert "i" in first["items"]
    assert "i" in again["items"]
    assert first["judgment"]["calls"] > 0
    assert again["judgment"]["calls"] == 0


@pytest.mark.parametrize("where", ["outside C", "in C"])
@pytest.mark.parametrize("budget", [1, 2])
def test_premises_the_agent_may_not_read_left_unscreened_are_not_counted_as_the_returns(
    store: WorkStateStore, budget: int, where: str
) -> None:
    """i rests on p, which rests on q (both the family's): B1's record counts only what
    it lists, not how many premises it may not read stand behind i (two reviews'
    finding: outside C, then in C, where the gates drop them)."""
    chain = [
        assert_item(11, "q", "Sunrise Hotel shuttle."),
        assert_item(11, "p", "Sunrise Hotel is booked.", depends_on=["q"]),
        assert_item(12, "i", "Pickup from Sunrise Hotel.", readers="*", depends_on=["p"]),
    ]
    if where == "outside C":
        events = [*chain, depart(12, "B1"), _NEWS, ret(14, "B1")]
    else:
        events = [depart(10, "B1"), *chain, _NEWS, ret(14, "B1")]
    made = load_scenario({**scenario(events), "policy": {"max_judgments": budget}})
    verifier = FunctionVerifier(lambda _: Verdict(invalidates=False, confidence=0.9))

    [decided] = replay(made, store, verifier=verifier, signer=SIGNER)

    listed = [e["item"] for e in decided.record["excluded"] if e["reason"] == "unscreened"]
    assert listed == ["i"]
    assert decided.record["judgment"]["unscreened"] == 1


def test_a_verdict_quoting_a_premise_the_agent_may_not_read_is_not_shown_to_it(
    store: WorkStateStore,
) -> None:
    """The verifier links i by its premise's text, and says so: B1 is not shown it."""

    def by_premise(pair: Pair) -> Verdict:
        linked = any("Sunrise Hotel" in p for p in pair.premises) and "Sunrise" in pair.later.text
        return Verdict(invalidates=linked, confidence=0.9, reason=f"read: {pair.premises}")

    near = assert_item(12, "i", "Pickup before the renovation.", readers="*", depends_on=["p"])
    events = [depart(10, "B1"), _FAMILYS, near, _NEWS, ret(14, "B1")]
    made = load_scenario(scenario(events))
    verifier = FunctionVerifier(by_premise, name="by-premise")
    record = replay(made, store, verifier=verifier, signer=SIGNER)[-1].record

    assert reason(record, "i") == "implicitly_invalidated"
    assert "Sunrise Hotel is booked" not in json.dumps(agent_copy(record))


@pytest.mark.parametrize("restated", ["bounded", "bounded, then for good", "for good"])
def test_m016_a_verdict_a_bounded_restatement_lapsed_stands_again(
    backend: str, tmp_path: Path, restated: str
) -> None:
    """Before m016 a restatement until 9:00 lapsed p0's verdict for good (a review's
    finding): the verdict stands again, or lapses where a restatement restores today."""
    bounded = assert_item(7, "h2", "Sunrise Hotel is booked.", valid_to="2026-05-01T09:00:00Z")
    for_good = assert_item(9, "h3", "Sunrise Hotel is booked.")
    events = [*HISTORY, ret(6)]
    events += {
        "bounded": [{**bounded, "id": "bounded"}],
        "bounded, then for good": [{**bounded, "id": "bounded"}, {**for_good, "id": "again"}],
        "for good": [{**for_good, "id": "again"}],
    }[restated]

    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, events)
        assert isinstance(store, SqlStore)
        expected = _epoch_of(store, "again")
        first = _epoch_of(store, "bounded") or expected
        lapsed, _ = _migrated_again(store, url, "m016", first)  # as the rule before it left it

    assert lapsed == expected


def _epoch_of(store: SqlStore, event: str) -> int | None:
    row = store.conn.execute("SELECT epoch FROM events WHERE id = ?", (event,)).fetchone()
    return None if row is None else int(row[0])


def _old_verdict(store: SqlStore, restore_text: str) -> int | None:
    """Store p0's verdict resting on event ``again`` (its epoch), as an older rule kept it."""
    epoch = _epoch_of(store, "again")
    with store.conn.transaction():
        store.conn.execute(
            "INSERT INTO invalidations (workspace, item, event, event_epoch, evidence, "
            "verifier, confidence, detail, decided_epoch, restore_text, principal, role) "
            "VALUES ('trip', 'p0', 'again', ?, '[\"again\"]', 'v', 1.0, 'x', ?, ?, "
            "'family', 'itinerary')",
            (epoch, epoch, restore_text),
        )
    return epoch


_DAWN = "2026-05-01T00:00:00.000000+00:00"
"""A screening's date before any of the trip's returns: it binds them all (m032)."""


_WATERMARK = (
    "INSERT INTO screenings (workspace, reader, verifier, verifier_digest, item, through, at) "
    "VALUES ('trip', ?, ?, ?, 'p0', 99, ?)"
)
"""A watermark of p0 at epoch 99 kept for the itinerary role's reader (`reader_digest`)."""
_ITINERARY = reader_digest(Agent(id="A1", principal="family", role="itinerary"))


def _migrated_again(
    store: SqlStore, url: str, migration: str, lapsed_at: int | None
) -> tuple[int | None, int]:
    """p0's lapse and the watermarks left after ``migration`` runs again on ``store``.

    Before it runs, every verdict is lapsed at ``lapsed_at`` and p0 has a watermark, as a
    store that an older rule wrote might have them.
    """
    with store.conn.transaction():
        store.conn.execute("UPDATE invalidations SET lapsed_epoch = ?", (lapsed_at,))
        store.conn.execute(
            _WATERMARK,
            (_ITINERARY, "v", "v", _DAWN),
        )
        store.conn.execute("DELETE FROM _readmit_migrations WHERE name LIKE ?", (f"{migration}_%",))
    store.close()
    again = open_store(url)
    assert isinstance(again, SqlStore)
    (lapsed,) = again.conn.execute(
        "SELECT lapsed_epoch FROM invalidations WHERE item = 'p0'"
    ).fetchone()
    (watermarks,) = again.conn.execute("SELECT COUNT(*) FROM screenings").fetchone()
    again.close()
    return lapsed, watermarks


@pytest.mark.parametrize("restated", ["on a premise", "on a premise, then for good"])
def test_m017_a_verdict_a_restatement_resting_on_another_item_lapsed_stands_again(
    backend: str, tmp_path: Path, restated: str
) -> None:
    """Before m017 a restatement resting on the agency's account lapsed p0's verdict for
    good, though the account was then revoked (a review's finding): the verdict stands
    again, or lapses where a restatement restores today; watermarks go, as in m016."""
    premised = assert_item(7, "h2", "Sunrise Hotel is booked.", depends_on=["d"])
    gone = {"at": at(8), "author": "A2", "op": "revoke", "target": "d", "why": "closed"}
    events = [*HISTORY[:3], AGENCY, *HISTORY[3:], ret(6), {**premised, "id": "premised"}, gone]
    if restated.endswith("for good"):
        events.append({**assert_item(9, "h3", "Sunrise Hotel is booked."), "id": "again"})

    _lapsed_by_the_rule_before(backend, tmp_path, events, "m017", "premised")


def _lapsed_by_the_rule_before(
    backend: str, tmp_path: Path, events: list[dict[str, Any]], migration: str, lapsed_by: str
) -> None:
    """``events``, then p0's verdict lapsed by event ``lapsed_by`` (as the rule before
    ``migration`` had it) and ``migration`` run again: the verdict lapses at the event
    "again" (none: it stands), and the watermarks go."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, events)
        assert isinstance(store, SqlStore)
        expected = _epoch_of(store, "again")
        migrated = _migrated_again(store, url, migration, _epoch_of(store, lapsed_by))

    assert migrated == (expected, 0)


def test_m016_reads_each_verdict_from_its_own_lapse(backend: str, tmp_path: Path) -> None:
    """Two verdicts of one workspace, lapsed by bounded restatements at 7 and 9: p0's lapses
    at the restatement for good at 10; p1's stands, its text's restatement for good (8)
    coming before its lapse."""
    harbor = [
        assert_item(2, "h1", "Harbor Inn is booked."),
        assert_item(2, "p1", "Pickup at 9:00 from Harbor Inn."),
    ]
    gone = {"at": at(5), "author": "A2", "op": "revoke", "target": "h1", "why": "cancelled"}
    until_9 = {"valid_to": "2026-05-01T09:00:00Z"}
    restated = [
        assert_item(7, "b0", "Sunrise Hotel is booked.", **until_9),
        assert_item(8, "g1", "Harbor Inn is booked."),
        assert_item(9, "b1", "Harbor Inn is booked.", **until_9),
        assert_item(10, "g0", "Sunrise Hotel is booked."),
    ]
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, [*HISTORY[:3], *harbor, *HISTORY[3:], gone, ret(6), *restated])
        assert isinstance(store, SqlStore)

        def epoch_of(item: str) -> int:
            query = "SELECT epoch FROM items WHERE workspace = 'trip' AND id = ?"
            return int(store.conn.execute(query, (item,)).fetchone()[0])

        old = {"p0": epoch_of("b0"), "p1": epoch_of("b1")}  # as the rule before m016 left them
        expected = {"p0": epoch_of("g0"), "p1": None}
        with store.conn.transaction():
            for item, epoch in old.items():
                store.conn.execute(
                    "UPDATE invalidations SET lapsed_epoch = ? WHERE item = ?", (epoch, item)
                )
            store.conn.execute("DELETE FROM _readmit_migrations WHERE name LIKE ?", ("m016_%",))
        store.close()

        again = open_store(url)
        assert isinstance(again, SqlStore)
        rows = again.conn.execute("SELECT item, lapsed_epoch FROM invalidations").fetchall()
        again.close()

    assert dict(rows) == expected


def test_m016_a_return_that_took_a_bounded_restatement_as_restoring_is_judged_again(
    backend: str, tmp_path: Path
) -> None:
    """Before m016, A1's return after the restatement until 9:00 did not judge p0 against
    the revocation and kept its watermark past it (a review's finding): after m016 its
    return at 9:10 judges p0 again, as a store that never ran the old rule does."""
    bounded = assert_item(5, "h2", "Sunrise Hotel is booked.", valid_to="2026-05-01T09:00:00Z")
    late = parse_time("2026-05-01T09:10:00Z")
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, [*HISTORY[:-1], {**HISTORY[-1], "at": at(4)}, bounded, ret(6)])
        assert isinstance(store, SqlStore)
        with store.conn.transaction():  # as the rule before m016 left it: no verdict
            store.conn.execute("DELETE FROM invalidations")
            key = screening_key(make_verifier("builtin"), Policy(max_items=8), None, None)
            store.conn.execute(
                _WATERMARK,
                (_ITINERARY, key, digest_text(key), _DAWN),
            )
            store.conn.execute("DELETE FROM _readmit_migrations WHERE name LIKE ?", ("m016_%",))
        store.close()

        again = open_store(url)
        again.depart("trip", "A1", parse_time(at(7)))
        request = ReturnRequest(id="r", at=late, agent="A1", task="trip", purpose="itinerary")
        verifier, policy = make_verifier("builtin"), Policy(max_items=8)
        decided = decide(again, "trip", request, policy=policy, verifier=verifier, signer=SIGNER)
        again.close()

    assert reason(decided.record, "p0") == "implicitly_invalidated"


# The twin property across principals: items of the family, of the neighbours and of
# everyone, premises across them, keys they share; A1 or B1 returns.


@st.composite
def across_principals(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """Who returns, the history up to a point after its departure, and what follows."""
    returner = draw(st.sampled_from(["A1", "B1"]))
    n = draw(st.integers(1, 5))
    gone = draw(st.integers(0, min(n, 2)))  # most items come while it is away
    events: list[dict[str, Any]] = []
    authors: dict[str, str] = {}
    for k in range(n + 1):
        if k == gone:
            events.append(depart(len(events), returner))
        if k == n:
            break
        author = draw(st.sampled_from(["A2", "B1"]))
        said = ", ".join(draw(st.lists(st.sampled_from(FEW_WORDS), min_size=1, max_size=2)))
        item: dict[str, Any] = {"id": f"i{k}", "text": f"Note {k}: {said}."}
        if draw(st.booleans()):
            item["readers"] = "*"
        if draw(st.booleans()) and authors:
            item["depends_on"] = [draw(st.sampled_from(sorted(authors)))]
        if draw(st.integers(0, 2)) == 0:
            item["key"] = draw(st.sampled_from(["k1", "k2"]))
        events.append({**assert_item(len(events), item["id"], item["text"]), "author": author})
        events[-1]["item"] = item
        authors[item["id"]] = author
    later: list[dict[str, Any]] = []
    for j, target in enumerate(draw(st.lists(st.sampled_from(sorted(authors)), max_size=2))):
        said = ", ".join(draw(st.lists(st.sampled_from(FEW_WORDS), min_size=1, max_size=2)))
        new = {"id": f"s{j}", "text": f"Changed {j}: {said}."}
        step = draw(st.sampled_from(["revoke", "supersede", "news"]))
        if step == "revoke":
            later.append({"author": authors[target], "op": "revoke", "target": target, "why": "x"})
        elif step == "supersede":
            later.append(
                {"author": authors[target], "op": "supersede", "target": target, "item": new}
            )
        else:
            later.append(
                {"author": draw(st.sampled_from(["A2", "B1"])), "op": "assert", "item": new}
            )
    return returner, events, later


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(across_principals())
def test_a_return_in_between_agrees_with_its_twin_across_principals(
    case: tuple[str, list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """As the twin property above, for either principal's agent returning."""
    returner, events, later = case
    n = len(events)
    tail = [{"at": at(n + 2 + k), **e} for k, e in enumerate(later)]
    last = {}
    for middle in ([], [ret(n, returner), depart(n + 1, returner)]):
        store = open_store("sqlite:///:memory:")
        try:
            last[bool(middle)] = run(store, [*events, *middle, *tail, ret(n + 10, returner)])[-1]
        except InvalidEvent:
            assume(False)  # a withdrawal the store refuses (one already withdrawn)
        finally:
            store.close()

    stale = {e["item"] for e in last[False]["excluded"] if e["reason"] in STALE}
    assert not stale & set(last[True]["items"])


def test_m018_a_verdict_resting_on_news_its_key_replaced_lapses(
    backend: str, tmp_path: Path
) -> None:
    """Before m018 a later item of the news item's key left the verdict resting on it
    standing for good (a review's finding): it lapses at that item; watermarks stay."""
    events = [
        *HISTORY[:5],
        assert_item(5, "n1", "Pickups from Sunrise Hotel are suspended.", key="sunrise"),
        ret(6),
        {"at": at(7), "author": "A2", "id": "n2", **_UNDONE["replaced by its key"]},
    ]
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        replay(load_scenario(scenario(events)), store, verifier=_Invalidating("n1"), signer=SIGNER)
        assert isinstance(store, SqlStore)
        expected = _epoch_of(store, "n2")
        (kept,) = store.conn.execute("SELECT COUNT(*) FROM screenings").fetchone()
        migrated = _migrated_again(store, url, "m018", None)

    assert migrated == (expected, kept + 1)  # and the one `_migrated_again` adds


@pytest.mark.parametrize("restated", ["by the neighbours", "by the neighbours, then the family"])
def test_m019_a_verdict_a_restatement_by_an_author_who_could_not_read_it_lapsed_stands_again(
    backend: str, tmp_path: Path, restated: str
) -> None:
    """Before m019 the neighbours' note in the family's words lapsed p0's verdict: it
    stands again, or lapses where a restatement restores today; watermarks go, as in m016."""
    theirs = {**assert_item(7, "h2", "Sunrise Hotel is booked.", readers="*"), "author": "B1"}
    events = [*HISTORY, ret(6), {**theirs, "id": "theirs"}]
    if restated.endswith("the family"):
        events.append({**assert_item(8, "h3", "Sunrise Hotel is booked."), "id": "again"})

    _lapsed_by_the_rule_before(backend, tmp_path, events, "m019", "theirs")


def test_m020_watermarks_earned_against_a_narrowing_replacement_go(
    backend: str, tmp_path: Path
) -> None:
    """A return before m020 judged the pickup against a booking "confirmed until 8:50" as
    a replacement, and kept its watermark past it: the next return would not judge again."""
    again = assert_item(5, "h3", "The Sunrise Hotel booking is confirmed.", valid_to=at(50))
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, [*HISTORY[:5], {**again, "op": "supersede", "target": "h0"}, ret(6)])
        assert isinstance(store, SqlStore)
        migrated = _migrated_again(store, url, "m020", None)

    assert migrated == (None, 0)


_M024 = {
    # The family's booking filed again in its words for the family: to everyone's pickup,
    # whose readers of the booking (the family) all read it, the booking filed again.
    "refiled": (
        assert_item(0, "h0", "Sunrise Hotel is booked.", key="hotel"),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel.", readers="*"),
        assert_item(5, "h3", "Sunrise Hotel is booked.", key="hotel"),
    ),
    # A keyed note replaced by the very words of everyone's p0: it cannot make p0 stale.
    "own words": (
        assert_item(0, "y1", "Sunrise Hotel moved.", key="sun", readers="*"),
        assert_item(1, "p0", "Sunrise Hotel is closed.", readers="*"),
        assert_item(5, "y2", "Sunrise Hotel is closed.", key="sun", readers="*"),
    ),
}


@pytest.mark.parametrize("case", list(_M024))
def test_m024_verdicts_and_watermarks_earned_past_what_is_no_longer_judged_go(
    backend: str, tmp_path: Path, case: str
) -> None:
    """Neither case now excludes p0. A store before m024 kept p0's verdict on the event,
    and watermarks past it: they lapse and go, and the next return judges again (a
    review's upgrade findings, `/tmp/h70/repro_upgrade_verdict_stands.py`,
    `/tmp/h71/repro_upgrade_ownwords_verdict.py`)."""
    first, p0, again = _M024[case]  # what the event replaced, the pickup, the event
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        events = [first, p0, *HISTORY[2:5], {**again, "id": "again"}, ret(6)]
        [admitted] = run(store, events)
        assert isinstance(store, SqlStore)
        epoch = _old_verdict(store, first["item"]["text"])  # as 5650bfd kept it
        migrated = _migrated_again(store, url, "m024", None)

    assert "p0" in admitted["items"]
    assert migrated == (epoch, 0)


@pytest.mark.parametrize(
    ("pickup", "restated", "lapses"),
    [({}, {}, True), ({"readers": "*"}, {}, False), ({}, {"readers": "*"}, False)],
    ids=["read by the pickup's readers", "not by all of them", "by as many as the booking"],
)
def test_m021_a_verdict_its_own_evidence_restored_lapses_there(
    backend: str, tmp_path: Path, pickup: dict[str, Any], restated: dict[str, Any], lapses: bool
) -> None:
    """Before m021 the booking (everyone's) stated again in its very words for the family
    alone left the family's pickup under a verdict, though every reader of the pickup may
    read the statement: it lapses at that statement. Not where some reader may not, nor
    where it stood in for the booking (the verdict then rested on what it said)."""
    booked = assert_item(0, "h0", "Sunrise Hotel is booked.", key="hotel", readers="*")
    again = {**assert_item(5, "h2", "Sunrise Hotel is booked.", key="hotel", **restated)}
    events = [booked, assert_item(1, "p0", "Pickup at 8:00.", **pickup), depart(3)]
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, [*events, {**again, "id": "again"}])
        assert isinstance(store, SqlStore)
        epoch = _old_verdict(store, "Sunrise Hotel is booked.")  # as before m021
        lapsed, _ = _migrated_again(store, url, "m021", None)

    assert lapsed == (epoch if lapses else None)


def test_what_a_checkpoint_left_out_reads_back_in_the_order_of_its_ids(
    store: WorkStateStore,
) -> None:
    """PostgreSQL gave the left-out items in its plan's order (here the order they were
    written), SQLite in their ids': two processes held one checkpoint's differently."""
    pickups = [
        assert_item(1, f"p{n}", f"Pickup {n} at 8:00 from Sunrise Hotel for the Riverside Ferry.")
        for n in reversed(range(6))
    ]
    run(store, [*_pickup({})[:1], *pickups, *_pickup({})[2:], ret(5), depart(6)])

    request = ReturnRequest(id="r", at=parse_time(at(8)), agent="A1", task="t", purpose="p")
    left_out = [i.id for i in store.return_context("trip", request).left_out]

    assert "p5" in left_out
    assert left_out == sorted(left_out)


def test_a_verdicts_damaged_evidence_is_a_store_error(store: WorkStateStore) -> None:
    """Read back with ``json.loads`` alone, it was a ``JSONDecodeError`` (a 500; a review)."""
    run(store, [*_pickup({}), ret(5)])
    assert isinstance(store, SqlStore)
    assert store.judged_since("trip", 0, parse_time(at(8)))[1]  # a verdict stands
    with store.conn.transaction(lock="trip"):
        store.conn.execute("UPDATE invalidations SET evidence = 'not JSON'")

    with pytest.raises(DamagedStore, match=r"^verdict evidence in the store is damaged"):
        store.judged_since("trip", 0, parse_time(at(8)))
