"""An event that withdrew an item the returning agent may not read is never named to it.

Its id is the writer's free text ("family-account-closed-friday"): named as the evidence
that took the agent's own item down, it told the agent what happened to an item it may
not read (a review's finding). The operator's record still names it.
"""

from typing import Any

import pytest

from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier
from readmit.decide import Decided
from readmit.plugins import make_verifier
from readmit.replay import replay
from readmit.report import agent_copy
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore
from readmit.testing import FunctionVerifier

SIGNER = HmacSha256Signer(b"test-signing-key-0123456789")
SECRET = "family-account-closed-friday"
AGENCY = {"principals": ["agency"]}


def _at(n: int) -> str:
    return f"2026-05-01T08:{n:02}:00Z"


def _decided(store: WorkStateStore, events: list[dict[str, Any]], verifier: Verifier) -> Decided:
    """The one return of ``events`` (A1: family, B1: agency)."""
    agents = [("A1", "family"), ("B1", "agency")]
    made = load_scenario(
        {
            "format": "readmit.scenario/1",
            "workspace": "trip",
            "agents": [{"id": a, "principal": p, "role": "r"} for a, p in agents],
            "events": events,
        }
    )
    [decided] = replay(made, store, signer=SIGNER, verifier=verifier)
    return decided


def _return(store: WorkStateStore, withdrawal: dict[str, Any]) -> Decided:
    events: list[dict[str, Any]] = [
        {
            "at": _at(0),
            "author": "A1",
            "op": "assert",
            "item": {"id": "probe", "text": "Probe about Riverside Hotel."},
        },
        {"at": _at(1), "op": "depart", "agent": "A1"},
        {
            "at": _at(2),
            "author": "B1",
            "op": "assert",
            "item": {
                "id": "held",
                "text": "Riverside Hotel room held.",
                "readers": AGENCY,
            },
        },
        {"at": _at(3), "author": "B1", "id": SECRET, **withdrawal},
        {"at": _at(4), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]
    return _decided(store, events, make_verifier("builtin"))


def test_a_revoke_of_an_item_the_agent_may_not_read_is_not_named_as_evidence(
    store: WorkStateStore,
) -> None:
    decided = _return(store, {"op": "revoke", "target": "held", "why": "closed"})

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["probe"]["reason"] == "implicitly_invalidated"
    assert operator["probe"]["evidence"] == [SECRET]  # the operator's record says
    assert SECRET not in repr(agent_copy(decided.record))
    assert decided.view is not None
    assert SECRET not in repr(decided.view)
    [probe] = [e for e in decided.view["excluded"] if e["item"] == "probe"]
    assert (probe["reason"], probe["evidence"]) == ("implicitly_invalidated", [])


def _riverside(pair: Pair) -> Verdict:
    """Links whatever names the hotel, and quotes what it read."""
    said = " ".join(x for x in (pair.later.text, pair.later.withdrawn_text) if x)
    return Verdict(invalidates="Riverside" in said, confidence=0.9, reason=f"read: {said}")


_HELD = {"id": "held", "text": "Riverside Hotel room held.", "readers": AGENCY}
_CLOSED = {"id": "closed", "text": "Riverside Hotel closed.", "readers": AGENCY}
_SHAPES: dict[str, list[dict[str, Any]]] = {
    # a second review's finding: screening reaches back before the departure, and
    # hearsay has no receipt to hide its event by
    "withdrawn before the departure": [
        {"at": _at(2), "author": "B1", "op": "assert", "item": _HELD},
        {
            "at": _at(3),
            "author": "B1",
            "id": SECRET,
            "op": "supersede",
            "target": "held",
            "item": {**_CLOSED, "id": "held2"},
        },
        {"at": _at(4), "op": "depart", "agent": "A1"},
    ],
    "asserted before the departure": [
        {"at": _at(3), "author": "B1", "id": SECRET, "op": "assert", "item": _CLOSED},
        {"at": _at(4), "op": "depart", "agent": "A1"},
    ],
    "another principal's evidence while away": [
        {"at": _at(2), "op": "depart", "agent": "A1"},
        {
            "at": _at(3),
            "author": "B1",
            "id": SECRET,
            "op": "evidence",
            "source": {"id": "memo", "text": "Riverside Hotel closed."},
        },
    ],
    "hearsay while away": [
        {"at": _at(2), "op": "depart", "agent": "A1"},
        {
            "at": _at(3),
            "author": "B1",
            "id": SECRET,
            "op": "assert",
            "item": {**_CLOSED, "unconfirmed": True},
        },
    ],
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_an_event_about_what_the_agent_may_not_read_is_not_named_wherever_it_lies(
    store: WorkStateStore, shape: str
) -> None:
    probe = {"id": "probe", "text": "Probe about Riverside Hotel."}
    events: list[dict[str, Any]] = [
        {"at": _at(0), "author": "A1", "op": "assert", "item": probe},
        *_SHAPES[shape],
        {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]
    decided = _decided(store, events, FunctionVerifier(_riverside, name="riverside"))

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["probe"]["evidence"] == [SECRET]  # the operator's record says
    assert SECRET not in repr(agent_copy(decided.record))
    assert "Riverside Hotel closed" not in repr(agent_copy(decided.record))
    assert decided.view is not None
    assert SECRET not in repr(decided.view)


_OWN = "hotel-note-revoked"
_MINE = {"id": "mine", "text": "Riverside Hotel room held."}
_SHOWN: dict[str, list[dict[str, Any]]] = {
    "its own revocation": [
        {"at": _at(2), "author": "A1", "op": "assert", "item": _MINE},
        {"at": _at(3), "author": "A1", "id": _OWN, "op": "revoke", "target": "mine", "why": "-"},
    ],
    "its own supersession": [
        {"at": _at(2), "author": "A1", "op": "assert", "item": _MINE},
        {
            "at": _at(3),
            "author": "A1",
            "id": _OWN,
            "op": "supersede",
            "target": "mine",
            "item": {"id": "mine2", "text": "Riverside Hotel closed."},
        },
    ],
    "its principal's evidence": [
        {
            "at": _at(3),
            "author": "A1",
            "id": _OWN,
            "op": "evidence",
            "source": {"id": "memo", "text": "Riverside Hotel closed."},
        },
    ],
}


@pytest.mark.parametrize("shape", sorted(_SHOWN))
def test_an_event_before_the_departure_about_what_the_agent_reads_is_named_with_why(
    store: WorkStateStore, shape: str
) -> None:
    """What took the probe down before A1 left, A1 may read: its copy says what and why."""
    probe = {"id": "probe", "text": "Probe about Riverside Hotel."}
    events: list[dict[str, Any]] = [
        {"at": _at(0), "author": "A1", "op": "assert", "item": probe},
        *_SHOWN[shape],
        {"at": _at(4), "op": "depart", "agent": "A1"},
        {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]
    decided = _decided(store, events, FunctionVerifier(_riverside, name="riverside"))

    [probe_out] = [e for e in agent_copy(decided.record)["excluded"] if e["item"] == "probe"]
    assert probe_out["evidence"] == [_OWN]
    assert probe_out["detail"].startswith("riverside: read: ")


def test_a_supersession_before_the_departure_by_what_the_agent_may_not_read_is_hidden(
    store: WorkStateStore,
) -> None:
    """A1 may read the item replaced, not the one replacing it."""
    probe = {"id": "probe", "text": "Probe about Riverside Hotel."}
    events: list[dict[str, Any]] = [
        {"at": _at(0), "author": "A1", "op": "assert", "item": probe},
        {"at": _at(1), "author": "B1", "op": "assert", "item": {**_MINE, "readers": "*"}},
        {
            "at": _at(2),
            "author": "B1",
            "id": SECRET,
            "op": "supersede",
            "target": "mine",
            "item": {**_CLOSED, "id": "held2"},
        },
        {"at": _at(4), "op": "depart", "agent": "A1"},
        {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]
    decided = _decided(store, events, FunctionVerifier(_riverside, name="riverside"))

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["probe"]["evidence"] == [SECRET]
    assert SECRET not in repr(agent_copy(decided.record))
    assert "Riverside Hotel closed" not in repr(agent_copy(decided.record))
