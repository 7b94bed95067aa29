"""An event that withdrew an item the returning agent may not read is never named to it.

Its id is the writer's free text ("family-account-closed-friday"): named as the evidence
that took the agent's own item down, it told the agent what happened to an item it may
not read (a review's finding). The operator's record still names it.
"""

from pathlib import Path
from typing import Any

import pytest

from conftest import store_url
from readmit.admission import admit, hidden
from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier
from readmit.admission.invalidation.unquoted import quoted
from readmit.admission.memo import Grown
from readmit.clock import parse_time
from readmit.decide import Decided, decide
from readmit.events import Assert, ItemDraft, ReturnRequest
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.replay import replay
from readmit.report import agent_copy
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, WorkStateStore, open_store
from readmit.testing import FunctionVerifier

SIGNER = HmacSha256Signer(b"test-signing-key-0123456789")
SECRET = "family-account-closed-friday"
AGENCY = {"principals": ["agency"]}


def _at(n: int) -> str:
    return f"2026-05-01T08:{n:02}:00Z"


def _decided(
    store: WorkStateStore, events: list[dict[str, Any]], verifier: Verifier, workspace: str = "trip"
) -> Decided:
    """The one return of ``events`` (A1 and A2: family, B1: agency)."""
    agents = [("A1", "family"), ("A2", "family"), ("B1", "agency")]
    made = load_scenario(
        {
            "format": "readmit.scenario/1",
            "workspace": workspace,
            "agents": [{"id": a, "principal": p, "role": "r"} for a, p in agents],
            "events": events,
        }
    )
    [decided] = replay(made, store, signer=SIGNER, verifier=verifier)
    return decided


def _probed(
    store: WorkStateStore, middle: list[dict[str, Any]], verifier: Verifier, workspace: str = "trip"
) -> Decided:
    """A1's return at 8:05 to its probe (asserted at 8:00) after ``middle``."""
    probe = {"id": "probe", "text": "Probe about Riverside Hotel."}
    events: list[dict[str, Any]] = [
        {"at": _at(0), "author": "A1", "op": "assert", "item": probe},
        *middle,
        {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]
    return _decided(store, events, verifier, workspace)


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
_MINE = {"id": "mine", "text": "Riverside Hotel room held."}


def _closing(n: int, target: str, **more: Any) -> dict[str, Any]:
    """B1's SECRET supersession of ``target``, at 8:0n, by agency-only news."""
    item = {**_CLOSED, "id": "held2", **more}
    return {
        "at": _at(n),
        "author": "B1",
        "id": SECRET,
        "op": "supersede",
        "target": target,
        "item": item,
    }


_SHAPES: dict[str, list[dict[str, Any]]] = {
    # a second review's finding: screening reaches back before the departure, and
    # hearsay has no receipt to hide its event by
    "withdrawn before the departure": [
        {"at": _at(2), "author": "B1", "op": "assert", "item": _HELD},
        _closing(3, "held"),
        {"at": _at(4), "op": "depart", "agent": "A1"},
    ],
    "a readable item superseded before the departure by one it may not read": [
        {"at": _at(1), "author": "B1", "op": "assert", "item": {**_MINE, "readers": "*"}},
        _closing(2, "mine"),
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
    decided = _probed(store, _SHAPES[shape], FunctionVerifier(_riverside, name="riverside"))

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["probe"]["evidence"] == [SECRET]  # the operator's record says
    assert SECRET not in repr(agent_copy(decided.record))
    assert "Riverside Hotel closed" not in repr(agent_copy(decided.record))
    assert decided.view is not None
    assert SECRET not in repr(decided.view)


@pytest.mark.parametrize("departed", ["before", "after"])
def test_a_supersession_of_what_the_agent_may_not_read_is_not_named_as_evidence(
    store: WorkStateStore, departed: str
) -> None:
    """B1 supersedes its agency-only note with a shared one; the probe falls on what was
    withdrawn. The shared note's receipt names the event in the view, as every item's
    does; the exclusion does not, nor what was withdrawn (a mutation review: nothing told
    if a supersession of an unreadable target was named)."""
    shared = {"id": "held2", "text": "Plans changed.", "readers": "*"}
    held: dict[str, Any] = {"at": _at(1), "author": "B1", "op": "assert", "item": _HELD}
    superseded: dict[str, Any] = {
        "at": _at(3),
        "author": "B1",
        "id": SECRET,
        "op": "supersede",
        "target": "held",
        "item": shared,
    }
    away: dict[str, Any] = {"at": _at(2 if departed == "before" else 4), "op": "depart"}
    away["agent"] = "A1"
    events = [away, superseded] if departed == "before" else [superseded, away]
    decided = _probed(store, [held, *events], FunctionVerifier(_riverside, name="riverside"))

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["probe"]["evidence"] == [SECRET]
    copy = agent_copy(decided.record)
    assert SECRET not in repr(copy["excluded"])
    assert "Riverside Hotel room held" not in repr(copy)
    assert decided.view is not None
    assert SECRET not in repr(decided.view["excluded"])


_OWN = "hotel-note-revoked"
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
    away = {"at": _at(4), "op": "depart", "agent": "A1"}
    decided = _probed(store, [*_SHOWN[shape], away], FunctionVerifier(_riverside, name="riverside"))

    [probe_out] = [e for e in agent_copy(decided.record)["excluded"] if e["item"] == "probe"]
    assert probe_out["evidence"] == [_OWN]
    assert probe_out["detail"].startswith("riverside: read: ")


def test_evidence_its_own_principals_agent_recorded_while_away_is_named_with_why(
    store: WorkStateStore,
) -> None:
    """A2, of A1's family, recorded the memo while A1 was away: A1's copy names it and
    what the verifier read (a mutation review: hiding every piece of evidence passed)."""
    memo = {"id": "memo", "text": "Riverside Hotel closed."}
    middle: list[dict[str, Any]] = [
        {"at": _at(1), "op": "depart", "agent": "A1"},
        {"at": _at(3), "author": "A2", "id": _OWN, "op": "evidence", "source": memo},
    ]
    decided = _probed(store, middle, FunctionVerifier(_riverside, name="riverside"))

    [probe] = [e for e in agent_copy(decided.record)["excluded"] if e["item"] == "probe"]
    assert probe["evidence"] == [_OWN]
    assert probe["detail"].startswith("riverside: read: ")


def test_what_one_role_may_not_read_is_hidden_from_it_after_another_roles_return(
    store: WorkStateStore,
) -> None:
    """A1 (itinerary) and A2 (booking) of one family leave with the same checkpoint; a
    bookers-only note is then revoked, which takes the shared probe down. A2 returns first
    and is told the revocation; A1, after it, must not be (a mutation review: the hidden
    events were remembered per principal and departure, not per role)."""
    family = [("A1", "itinerary"), ("A2", "booking"), ("A4", "booking")]
    bookers = {"principals": ["family"], "roles": ["booking"]}
    made = load_scenario(
        {
            "format": "readmit.scenario/1",
            "workspace": "trip",
            "agents": [{"id": a, "principal": "family", "role": r} for a, r in family],
            "events": [
                {"at": _at(0), "author": "A4", "op": "assert",
                 "item": {"id": "probe", "text": "Probe about Riverside Hotel."}},
                {"at": _at(1), "op": "depart", "agent": "A1"},
                {"at": _at(1), "op": "depart", "agent": "A2"},
                {"at": _at(2), "author": "A4", "op": "assert",
                 "item": {"id": "held", "text": "Riverside Hotel room held.", "readers": bookers}},
                {"at": _at(3), "author": "A4", "id": SECRET, "op": "revoke", "target": "held",
                 "why": "-"},
                {"at": _at(5), "op": "return", "agent": "A2", "task": "trip", "purpose": "plan"},
                {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
            ],
        }
    )  # fmt: skip
    bookers_copy, itinerary_copy = (
        agent_copy(d.record)
        for d in replay(made, store, signer=SIGNER, verifier=make_verifier("builtin"))
    )

    assert SECRET in repr(bookers_copy["excluded"])
    [probe] = [e for e in itinerary_copy["excluded"] if e["item"] == "probe"]
    assert probe["reason"] == "implicitly_invalidated"
    assert SECRET not in repr(itinerary_copy)


def _says_secret(pair: Pair) -> Verdict:
    """Links the probe to the SECRET event alone, and quotes everything it read."""
    later = pair.later
    said = " | ".join(map(str, (later.text, later.withdrawn_text, later.replacement_text)))
    return Verdict(invalidates=later.event_id == SECRET, confidence=0.9, reason=f"read: {said}")


_THEIRS = {
    "id": "held",
    "key": "room",
    "text": "Suite held for a Zanzibar client.",
    "readers": AGENCY,
}
_OPEN = {"id": "open", "key": "room", "text": "Riverside Hotel room open.", "readers": "*"}


@pytest.mark.parametrize("kept", [False, True])
@pytest.mark.parametrize("departed", ["after", "before"])
def test_a_keyed_assert_that_replaced_what_the_agent_may_not_read_is_not_named(
    store: WorkStateStore, departed: str, kept: bool
) -> None:
    """B1's shared item replaces, by its key, an agency-only one (and is revoked, unless
    ``kept``); its event took A1's probe down, before or after A1 left (a review's
    finding: an event's items are also those its key replaced). A kept item's receipt
    names the event in the view, as every item's does; the exclusion does not."""
    replaced: list[dict[str, Any]] = [
        {"at": _at(1), "author": "B1", "op": "assert", "item": _THEIRS},
        {"at": _at(2), "author": "B1", "id": SECRET, "op": "assert", "item": _OPEN},
    ]
    if not kept:
        replaced.append(
            {"at": _at(3), "author": "B1", "op": "revoke", "target": "open", "why": "-"}
        )
    away: dict[str, Any] = {
        "at": _at(4 if departed == "after" else 0),
        "op": "depart",
        "agent": "A1",
    }
    middle = [away, *replaced] if departed == "before" else [*replaced, away]
    decided = _probed(store, middle, FunctionVerifier(_says_secret, name="secret"))

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["probe"]["evidence"] == [SECRET]
    copy = agent_copy(decided.record)
    assert SECRET not in repr(copy["excluded"])
    assert "Zanzibar" not in repr(copy)
    assert kept or SECRET not in repr(copy)
    assert kept or SECRET not in repr(decided.view)


def test_a_replacement_by_key_reads_the_same_whatever_else_its_key_replaced(
    store: WorkStateStore,
) -> None:
    """A1's shared booking is replaced by B1's shared item of its key; an agency-only item
    holds that key too, or another. A1's copy is the same either way (a review's finding:
    the event was hidden where its key also replaced the agency's item, so the missing
    evidence told A1 that an item it may not read held the key)."""
    mine = {"id": "mine", "key": "room", "text": "Room 12 booked.", "readers": "*"}
    copies, views = [], []
    for key in ("room", "other"):
        events: list[dict[str, Any]] = [
            {"at": _at(0), "author": "B1", "op": "assert", "item": {**_THEIRS, "key": key}},
            {"at": _at(1), "author": "A1", "op": "assert", "item": mine},  # replaces none
            {"at": _at(2), "op": "depart", "agent": "A1"},
            {"at": _at(3), "author": "B1", "id": SECRET, "op": "assert", "item": _OPEN},
            {"at": _at(5), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
        ]
        decided = _decided(store, events, make_verifier("builtin"), workspace=f"trip-{key}")
        copies.append({k: agent_copy(decided.record)[k] for k in ("excluded", "judgment")})
        assert decided.view is not None
        views.append(decided.view["excluded"])

    assert copies[0] == copies[1]
    assert views[0] == views[1]
    [gone] = [e for e in copies[0]["excluded"] if e["item"] == "mine"]
    assert gone["reason"] == "stale_or_superseded"
    assert gone["evidence"] == [SECRET, "open"]
    assert "Zanzibar" not in repr(copies[0])


def test_the_event_of_hearsay_the_agent_may_not_read_is_not_named_where_it_replaced_its_item(
    store: WorkStateStore,
) -> None:
    """B1 supersedes A1's shared item with unconfirmed news only the agency reads: A1's
    item is stale, and the event is not named (hearsay has no receipt to hide it by; a
    review's finding)."""
    events: list[dict[str, Any]] = [
        {"at": _at(0), "author": "A1", "op": "assert", "item": {**_MINE, "readers": "*"}},
        {"at": _at(1), "op": "depart", "agent": "A1"},
        _closing(2, "mine", unconfirmed=True),
        {"at": _at(3), "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]
    decided = _decided(store, events, make_verifier("builtin"))

    operator = {e["item"]: e for e in decided.record["excluded"]}
    assert operator["mine"]["reason"] == "stale_or_superseded"
    assert SECRET in operator["mine"]["evidence"]
    assert SECRET not in repr(agent_copy(decided.record))
    assert SECRET not in repr(decided.view)


@pytest.mark.parametrize("case", ["its own", "its teammate's", "hearsay", "after a revocation"])
def test_a_keyed_assert_that_replaced_nothing_is_named_whatever_holds_its_key(
    store: WorkStateStore, case: str
) -> None:
    """An agency-only item holds the key "room" or another; a keyed item that replaces
    nothing (its author may not read that item, it is hearsay, or that item was revoked)
    takes A1's probe down: A1's copy is the same either way (a review's finding: counting
    every holder as replaced told A1 that something it may not read held the key)."""
    cases: dict[str, tuple[str, dict[str, Any]]] = {
        "its own": ("A1", {}),
        "its teammate's": ("A2", {"readers": "*"}),
        "hearsay": ("B1", {"unconfirmed": True, "readers": "*"}),
        "after a revocation": ("B1", {"readers": "*"}),
    }
    author, more = cases[case]
    theirs = {"id": "held", "text": "Agency suite.", "readers": AGENCY}
    keyed = {"id": "k", "key": "room", "text": "Riverside Hotel booking cancelled.", **more}
    copies = []
    for key in ("room", "other"):
        middle: list[dict[str, Any]] = [
            {"at": _at(1), "author": "B1", "op": "assert", "item": {**theirs, "key": key}},
            {"at": _at(2), "op": "depart", "agent": "A1"},
        ]
        if case == "after a revocation":
            middle.append(
                {"at": _at(3), "author": "B1", "op": "revoke", "target": "held", "why": "-"}
            )
        middle.append({"at": _at(4), "author": author, "id": SECRET, "op": "assert", "item": keyed})
        verifier = FunctionVerifier(_says_secret, name="secret")
        decided = _probed(store, middle, verifier, workspace=f"trip-{key}")
        copies.append({k: agent_copy(decided.record)[k] for k in ("excluded", "judgment")})

    assert copies[0] == copies[1]
    assert [e["evidence"] for e in copies[0]["excluded"] if e["item"] == "probe"] == [[SECRET]]


def test_a_detached_context_decided_first_leaves_its_store_context_hiding_as_much(
    store: WorkStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B1's shared item replaces, in Δ, an agency-only one asserted before A1 left: only
    the store's quote knows that holder. A detached copy of the context (which quotes
    nothing) hides less; deciding it first must not make the context itself hide less."""
    middle: list[dict[str, Any]] = [
        {"at": _at(1), "author": "B1", "op": "assert", "item": _THEIRS},
        {"at": _at(2), "op": "depart", "agent": "A1"},
        {"at": _at(3), "author": "B1", "id": SECRET, "op": "assert", "item": _OPEN},
    ]
    verifier = FunctionVerifier(_says_secret, name="secret")
    _probed(store, middle, verifier)
    more = ItemDraft(id="later", text="Later note.")
    store.append("trip", [Assert(id="e-later", at=parse_time(_at(6)), author="B1", item=more)])
    request = ReturnRequest(id="again", at=parse_time(_at(7)), agent="A1", task="trip", purpose="p")
    ctx = store.return_context("trip", request)  # Δ grown by one event
    monkeypatch.setattr(hidden, "_UNREADABLE", Grown())  # as a process that starts detached
    admit(ctx.detached(), policy=Policy(), verifier=verifier, signer=SIGNER)
    decision = admit(ctx, policy=Policy(), verifier=verifier, signer=SIGNER)

    assert "held" in {i.id for i in quoted(ctx)}
    assert SECRET in hidden.hidden_ids(ctx, decision.decided)


def test_on_a_store_from_before_m012_a_keyed_assert_is_not_taken_for_a_later_replacement(
    backend: str, tmp_path: Path
) -> None:
    """The family's Y (key k) takes A1's probe down before A1 leaves; agency items of key
    k come after it, one replacing the other. On a store whose replacements kept no epoch
    (before migration m012), Y is still named to A1: it replaced nothing (a review's
    finding: any replacement of the key was taken for Y's, telling A1 that an item it may
    not read held the key)."""
    y = {
        "id": "y",
        "key": "k",
        "text": "Riverside Hotel closed.",
        "readers": {"principals": ["family"]},
    }
    middle: list[dict[str, Any]] = [
        {"at": _at(1), "author": "A2", "id": SECRET, "op": "assert", "item": y},
        {"at": _at(2), "author": "B1", "op": "assert", "item": {**_THEIRS, "key": "k"}},
        {
            "at": _at(3),
            "author": "B1",
            "op": "assert",
            "item": {**_OPEN, "key": "k", "readers": AGENCY},
        },
        {"at": _at(4), "op": "depart", "agent": "A1"},
    ]
    verifier = FunctionVerifier(_says_secret, name="secret")
    with store_url(backend, tmp_path) as url:
        first = open_store(url)
        _probed(first, middle, verifier)
        assert isinstance(first, SqlStore)
        with first.conn.transaction():
            first.conn.execute("UPDATE withdrawn SET epoch = NULL")  # as before m012
        first.close()
        store = open_store(url)
        request = ReturnRequest(
            id="again", at=parse_time(_at(6)), agent="A1", task="trip", purpose="p"
        )
        decided = decide(store, "trip", request, policy=Policy(), verifier=verifier, signer=SIGNER)
        store.close()

    [probe] = [e for e in agent_copy(decided.record)["excluded"] if e["item"] == "probe"]
    assert probe["evidence"] == [SECRET]
