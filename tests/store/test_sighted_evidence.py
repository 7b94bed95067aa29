"""What an agent is told of a judgment does not depend on what it may not read.

B1 (agency) replaces the family's shared booking by its key with a shared item of its own;
in one world the key also held an agency-only item, which the same event replaced, and in
the other it did not. The verifier judged the withdrawal of the booking against A1's probe,
an observation the family may read whole. Before stop 59 the event was hidden from the
family's agents in the first world, as about an item they may not read, and its wording
with it: the missing evidence told them that such an item held the key (a review's
finding, the same shape stop 58 closed for the booking's own exclusion). Each event is now
named where the agent may read what the verifier read (`Exclusion.sighted`), at the return
that judged it and wherever its verdict stands later.
"""

from typing import Any

import pytest
from pydantic import TypeAdapter

from readmit.admission.invalidation.implicit import Later, Pair, Verdict, unscreened
from readmit.admission.invalidation.observations import distinct
from readmit.decide import Decided
from readmit.replay import replay
from readmit.report import agent_copy
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore
from readmit.testing import FunctionVerifier
from readmit.wire.outbound import DecisionRecordOut

SIGNER = HmacSha256Signer(b"test-signing-key-0123456789")
SECRET = "agency-suite-released"


def _at(n: int) -> str:
    return f"2026-05-01T08:{n:02}:00Z"


def _judged(pair: Pair) -> Verdict:
    """Links the probe to the booking's withdrawal alone, and quotes all it read."""
    later = pair.later
    said = f"read {later.text} | {later.withdrawn_text} | {later.replacement_text}"
    mine = later.event_id == SECRET and later.withdrawn_id == "open"
    return Verdict(invalidates=mine, confidence=0.9, reason=said)


def _abstains(pair: Pair) -> Verdict:
    """Cannot tell about the booking's withdrawal; says no to the rest."""
    later = pair.later
    unsure = later.event_id == SECRET and later.withdrawn_id == "open"
    said = f"unsure of {later.withdrawn_text}" if unsure else "no"
    return Verdict(invalidates=False, confidence=0.5, reason=said, abstained=unsure)


def _returns(
    store: WorkStateStore,
    key: str,
    middle: list[dict[str, Any]],
    verdict: Any = _judged,
    second: tuple[str, str] = ("family", "r"),
    theirs: str = "Suite held.",
) -> list[Decided]:
    """A1's shared probe and booking (key room), an agency-only item of ``key`` saying
    ``theirs``, then ``middle``, in which B1's SECRET replaces the booking by its key."""
    held = {
        "id": "held",
        "key": key,
        "text": theirs,
        "readers": {"principals": ["agency"]},
    }
    shared = {"readers": "*"}
    events: list[dict[str, Any]] = [
        {"at": _at(0), "author": "B1", "op": "assert", "item": held},
        {"at": _at(0), "author": "A1", "op": "assert",
         "item": {"id": "probe", "text": "Probe about Riverside Hotel.", **shared}},
        {"at": _at(0), "author": "A1", "op": "assert",
         "item": {"id": "open", "key": "room", "text": "Riverside Hotel room open.", **shared}},
        *middle,
    ]  # fmt: skip
    agents = [("A1", "family", "r"), ("A2", *second), ("B1", "agency", "r")]
    made = load_scenario(
        {
            "format": "readmit.scenario/1",
            "workspace": f"trip-{key}",
            "agents": [{"id": a, "principal": p, "role": r} for a, p, r in agents],
            "events": events,
        }
    )
    return replay(made, store, signer=SIGNER, verifier=FunctionVerifier(verdict, name="v"))


def _away(changes: list[dict[str, Any]], *returning: str) -> list[dict[str, Any]]:
    """The agents ``returning`` (A1 unless named) depart, ``changes`` happen, and they
    return in that order."""
    agents = returning or ("A1",)
    departs = [{"at": _at(1), "op": "depart", "agent": a} for a in sorted(agents)]
    returns = [
        {"at": _at(5 + n), "op": "return", "agent": a, "task": "trip", "purpose": "plan"}
        for n, a in enumerate(agents)
    ]
    return [*departs, *changes, *returns]


_RELEASED: dict[str, Any] = {
    "at": _at(3),
    "author": "B1",
    "id": SECRET,
    "op": "assert",
    "item": {"id": "gone", "key": "room", "text": "Room 7 given away.", "readers": "*"},
}


def _probe(decided: Decided) -> dict[str, Any]:
    [probe] = [e for e in agent_copy(decided.record)["excluded"] if e["item"] == "probe"]
    return dict(probe)


@pytest.mark.parametrize("departed", ["before", "after"])
def test_an_implicit_invalidation_reads_the_same_whatever_else_its_event_replaced(
    store: WorkStateStore, departed: str
) -> None:
    """Judged at A1's return, the event in Δ or before the departure (the store's quote)."""
    away: dict[str, Any] = {
        "at": _at(1 if departed == "before" else 4),
        "op": "depart",
        "agent": "A1",
    }
    middle = [away, _RELEASED] if departed == "before" else [_RELEASED, away]
    back: dict[str, Any] = {
        "at": _at(5),
        "op": "return",
        "agent": "A1",
        "task": "trip",
        "purpose": "plan",
    }

    seen = [_probe(_returns(store, key, [*middle, back])[0]) for key in ("room", "other")]

    assert seen[0] == seen[1]
    assert seen[0]["reason"] == "implicitly_invalidated"
    assert seen[0]["evidence"] == [SECRET]
    assert "Riverside Hotel room open." in seen[0]["detail"]
    assert "Suite held." not in repr(seen[0])


def test_a_verifiers_abstention_reads_the_same_whatever_else_its_event_replaced(
    store: WorkStateStore,
) -> None:
    middle = _away([_RELEASED])

    seen = [_probe(_returns(store, k, middle, _abstains)[0]) for k in ("room", "other")]

    assert seen[0] == seen[1]
    assert seen[0]["reason"] == "verifier_unavailable"
    assert seen[0]["evidence"] == [SECRET]
    assert "unsure of Riverside Hotel room open." in seen[0]["detail"]


@pytest.mark.parametrize(
    ("second", "told"),
    [
        (("family", "r"), "confirmed at epoch"),  # A1's reader: the verifier's wording
        (("family", "s"), "the events given"),
        (("other", "r"), "the events given"),
    ],
)
def test_a_standing_verdict_reads_the_same_to_a_later_reader_whatever_else_its_event_replaced(
    store: WorkStateStore, second: tuple[str, str], told: str
) -> None:
    """A1's return confirms the verdict; A2, away over the same events, finds it standing.
    The verdict's observation is read back for A2 (the event in A2's Δ, the premise the
    verdict rests on): A2 may read it whole, so the event is named to it."""
    middle = _away([_RELEASED], "A1", "A2")

    seen = [_probe(_returns(store, k, middle, second=second)[1]) for k in ("room", "other")]

    assert seen[0] == seen[1]
    assert seen[0]["evidence"] == [SECRET]
    assert told in seen[0]["detail"]


def test_a_standing_verdict_on_what_a_later_reader_may_not_read_names_no_event(
    store: WorkStateStore,
) -> None:
    """The booking is the family's alone: A2 (another principal) may read the probe but
    not the booking whose withdrawal took it down, so the event stays hidden from it."""
    family_only = {"principals": ["family"]}
    middle = _away(
        [{**_RELEASED, "item": {**_RELEASED["item"], "readers": family_only}}], "A1", "A2"
    )

    first, later = _returns(store, "room", middle, second=("other", "r"))

    assert _probe(first)["evidence"] == [SECRET]
    assert SECRET in later.record["hidden"]
    assert _probe(later)["evidence"] == []
    assert "detail" not in _probe(later)


def _later(event: str, withdrawn: str) -> Later:
    return Later(
        event_id=event,
        epoch=5,
        op="assert",
        text="Room 7 given away.",
        withdrawn_id=withdrawn,
        withdrawn_text=f"{withdrawn} text",
    )


def test_an_unscreened_item_names_each_event_left_once_and_those_the_agent_may_read() -> None:
    """An event left with two observations, one about what the agent may not read, is
    listed once, as an event left with one is: the count told what it also withdrew."""
    left = [_later(SECRET, "open"), _later(SECRET, "held"), _later("e2", "held")]

    made = unscreened("probe", left, "spent", lambda later: later.withdrawn_id == "open")

    assert made.evidence == (SECRET, "e2")
    assert made.sighted == (SECRET,)


@pytest.mark.parametrize("again", [True, False])
def test_a_verdicts_evidence_does_not_depend_on_who_judged_it(
    store: WorkStateStore, again: bool
) -> None:
    """The agency's note, then (or not) the family's in the same words: A1's return keeps
    the earliest, the agency's, though A1 may read only the family's, and B2 of the agency
    finds the verdict standing on its own note either way (a review's finding: kept as
    the one A1 may read, the family's, it told B2 that a family note said so)."""
    closed = "Riverside Hotel is closed."
    middle: list[dict[str, Any]] = [
        {"at": _at(1), "op": "depart", "agent": "A1"},
        {"at": _at(1), "op": "depart", "agent": "A2"},
        {"at": _at(3), "author": "B1", "id": SECRET, "op": "assert",
         "item": {"id": "n1", "text": closed, "readers": {"principals": ["agency"]}}},
        *([{"at": _at(4), "author": "A1", "id": "family-note", "op": "assert",
            "item": {"id": "n2", "text": closed, "readers": {"principals": ["family"]}}}]
          if again else []),
        {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
        {"at": _at(6), "op": "return", "agent": "A2", "task": "trip", "purpose": "plan"},
    ]  # fmt: skip

    def closing(pair: Pair) -> Verdict:
        return Verdict(invalidates=pair.later.text == closed, confidence=0.9, reason="closed")

    first, later = _returns(store, f"k{again}", middle, closing, second=("agency", "r"))

    assert [e["evidence"] for e in first.record["excluded"] if e["item"] == "probe"] == [[SECRET]]
    assert _probe(later)["evidence"] == [SECRET]
    assert _probe(later)["detail"] == "confirmed earlier by v: the events given invalidated it"


@pytest.mark.parametrize("key", ["room", "other"])
def test_a_standing_verdict_names_an_event_in_the_readers_sight_whatever_it_rests_on(
    store: WorkStateStore, key: str
) -> None:
    """B2 of the agency confirms the verdict on the withdrawal of the agency's own item
    (key room: B1's SECRET replaced it with the booking) or of the booking (key other).
    A1 finds it standing, named either way: SECRET brought an item A1 may read, whose
    receipt names it, and A1 is not told the words of another reader's judgment."""
    theirs = "Probe about Riverside Hotel: suite held."
    middle = _away([_RELEASED], "A2", "A1")

    def agencys(pair: Pair) -> Verdict:
        later = pair.later
        mine = later.event_id == SECRET and later.withdrawn_id == (
            "held" if key == "room" else "open"
        )
        return Verdict(invalidates=mine, confidence=0.9, reason=f"read {later.withdrawn_text}")

    judged, standing = _returns(store, key, middle, agencys, second=("agency", "r"), theirs=theirs)

    assert _probe(judged)["evidence"] == [SECRET]
    assert _probe(standing) == {
        "item": "probe",
        "reason": "implicitly_invalidated",
        "stage": "implicit",
        "evidence": [SECRET],
        "detail": "confirmed earlier by v: the events given invalidated it",
    }


def test_the_confidence_of_an_invalidation_on_what_the_agent_may_not_read_is_not_shown(
    store: WorkStateStore,
) -> None:
    """A model's confidence tells of the words it read: it goes with the wording."""
    note = {
        "id": "note",
        "text": "Riverside Hotel suite held.",
        "readers": {"principals": ["agency"]},
    }
    middle: list[dict[str, Any]] = [
        {"at": _at(1), "author": "B1", "op": "assert", "item": note},
        {"at": _at(2), "op": "depart", "agent": "A1"},
        {"at": _at(3), "author": "B1", "id": SECRET, "op": "revoke", "target": "note",
         "why": "-"},
        {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]  # fmt: skip

    def unsure(pair: Pair) -> Verdict:
        said = f"{pair.later.withdrawn_text}"
        return Verdict(invalidates=pair.later.event_id == SECRET, confidence=0.77, reason=said)

    [decided] = _returns(store, "room", middle, unsure)

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["probe"]["confidence"] == 0.77
    assert _probe(decided) == {
        "item": "probe",
        "reason": "implicitly_invalidated",
        "stage": "implicit",
        "evidence": [],
    }


def test_of_identical_words_the_earliest_is_kept_whoever_may_read_it() -> None:
    """A verdict binds every agent: its evidence is the same whoever returns to judge it."""
    theirs = _later("theirs", "x")._replace(epoch=3, withdrawn_id=None, withdrawn_text=None)
    mine = theirs._replace(event_id="mine", epoch=4)  # the same words, later
    other = _later("other", "held")._replace(epoch=2)

    assert distinct([mine, theirs]) == [theirs]
    assert distinct([other, mine, theirs]) == [other, theirs]


def test_the_operators_record_lists_the_events_named_though_hidden(store: WorkStateStore) -> None:
    middle = _away([_RELEASED])

    [decided] = _returns(store, "room", middle)

    record = TypeAdapter(DecisionRecordOut).validate_python(decided.record)
    [probe] = [e for e in record["excluded"] if e["item"] == "probe"]
    assert SECRET in record["hidden"]
    assert probe.get("sighted") == [SECRET]
    assert "sighted" not in _probe(decided)


@pytest.mark.parametrize("key", ["train", "other"])
def test_an_item_replaced_by_key_names_what_replaced_it_whatever_came_after(
    store: WorkStateStore, key: str
) -> None:
    """A1's t1, t2, t3 hold key train in turn; then B1's agency-only item of ``key``, which
    replaced nothing (t1 and t2 were gone, t3 is the family's own). Each is named with the
    item that replaced it, the writer's, not the newest of the key: naming B1's, hidden
    from A1, told A1 that an agency item held the key (a review's finding)."""
    stated: list[dict[str, Any]] = [
        {"at": _at(n), "author": "A1", "op": "assert",
         "item": {"id": f"t{n}", "key": "train", "text": f"Train {n}.", "readers": "*"}}
        for n in (1, 2)
    ]  # fmt: skip
    middle: list[dict[str, Any]] = [
        {"at": _at(0), "op": "depart", "agent": "A1"},
        *stated,
        {"at": _at(3), "author": "A1", "op": "assert",
         "item": {"id": "t3", "key": "train", "text": "Train 3."}},
        {"at": _at(4), "author": "B1", "id": SECRET, "op": "assert",
         "item": {"id": "v", "key": key, "text": "Suite.", "readers": {"principals": ["agency"]}}},
        {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]  # fmt: skip

    [decided] = _returns(store, f"{key}-held", middle)

    copy = {e["item"]: e["evidence"] for e in agent_copy(decided.record)["excluded"]}
    assert copy["t1"][1:] == ["t2"]
    assert copy["t2"][1:] == ["t3"]
    assert SECRET not in repr(agent_copy(decided.record))
