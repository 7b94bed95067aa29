"""Values built in Python are held to the rules a request body is: the store refuses them
naming the field, and stores nothing (`readmit.wire.domain`)."""

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given

from builders import logged
from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.decide import decide
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    RecordExperience,
    Resolve,
    ReturnRequest,
    Revoke,
    Supersede,
)
from readmit.model import Agent, Validity
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, WorkStateStore
from readmit.verifiers.builtin import TermVerifier
from readmit.wire import domain, event_to_wire, parse_event
from strategies import events, names, texts

T = datetime(2026, 5, 1, 8, tzinfo=UTC)
LATER = T + timedelta(hours=1)
SIGNER = HmacSha256Signer(b"a-long-secret-from-your-config")
AGENTS = [Agent(id="A1", principal="org", role="ops"), Agent(id="A2", principal="org", role="dev")]


def _draft(**fields: Any) -> ItemDraft:
    return ItemDraft(**{"id": "h2", "text": "The hotel is booked.", **fields})


def _obligation(**fields: Any) -> OpenObligation:
    draft = ObligationDraft(
        **{
            "id": "o1",
            "text": "Book the trip.",
            "role": "ops",
            "requires": frozenset({"d1"}),
            "critical": frozenset(),
            "frontier_id": "f1",
            "frontier_text": "Nothing yet.",
            **fields,
        }
    )
    return OpenObligation(id="e2", at=LATER, author="A2", obligation=draft)


@dataclass(frozen=True)
class Case:
    name: str
    event: Event
    field: str


def _asserting(**fields: Any) -> Assert:
    return Assert(id="e2", at=LATER, author="A2", item=_draft(**fields))


def _withdrawing(op: type[Revoke | Close | Resolve | Supersede], **fields: Any) -> Event:
    return op(**{"id": "e2", "at": LATER, "author": "A2", "target": "h1", **fields})


CASES = [
    Case("a revocation with no reason", _withdrawing(Revoke, why=""), "why"),
    Case("a newline in an event id", _withdrawing(Close, id="e\n2"), "id"),
    Case("a NUL in an item id", _asserting(id="h\x002"), "item.id"),
    Case("a NUL in an item text", _asserting(text="booked\x00"), "item.text"),
    Case("a tab in a supports id", _asserting(supports={"d\t1"}), "item.supports"),
    Case("a space around a key", _asserting(key=" k"), "item.key"),
    Case("an empty key", _asserting(key=""), "item.key"),
    Case("an empty task", _asserting(task=""), "item.task"),
    Case("a reader role with a zero-width space", _asserting(roles={"o\u200bps"}), "item.roles"),
    Case("unconfirmed given as a string", _asserting(unconfirmed="no"), "item.unconfirmed"),
    Case(
        "a supersede of a target given as bytes",
        _withdrawing(Supersede, target=b"h1", item=_draft()),
        "target",
    ),
    Case("a reason with a lone surrogate", _withdrawing(Revoke, why="gone \ud800"), "why"),
    Case("a blank reason", _withdrawing(Revoke, why=" \n"), "why"),
    Case(
        "a source id with a bidi override",
        Evidence(id="e2", at=LATER, author="A2", source_id="s\u202e1", text="x"),
        "source.id",
    ),
    Case("an obligation role with a NUL", _obligation(role="o\x00ps"), "obligation.role"),
    Case(
        "a frontier text with a bell",
        _obligation(frontier_text="Nothing\x00"),
        "obligation.frontier.text",
    ),
    Case(
        "a required id with a newline",
        _obligation(requires=frozenset({"d\n1"})),
        "obligation.requires",
    ),
    # What names what exists is only a string, but one no store could hold names nothing:
    # SQLite said "unknown", PostgreSQL a store error, a surrogate failed to encode (a review).
    Case("a revoked target with a NUL", _withdrawing(Revoke, target="h\x001", why="x"), "target"),
    Case("a closed target with a lone surrogate", _withdrawing(Close, target="h\ud800"), "target"),
    Case("an author with a NUL", _withdrawing(Resolve, author="A\x002"), "author"),
    Case("a premise with a NUL", _asserting(depends_on=frozenset({"h\x001"})), "item.depends_on"),
    Case("a cited source with a surrogate", _asserting(cites=frozenset({"s\udc00"})), "item.cites"),
]


def _workspace(store: WorkStateStore) -> None:
    store.create_workspace("ws", AGENTS)
    store.append("ws", [Assert(id="e1", at=T, author="A2", item=_draft(id="h1"))])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_append_refuses_what_a_request_body_could_not_hold_and_stores_nothing(
    store: WorkStateStore, case: Case
) -> None:
    _workspace(store)
    fine = Assert(id="e0", at=T, author="A2", item=_draft(id="h0"))

    with pytest.raises(InvalidEvent, match=rf"^event .*: {case.field}: "):
        store.append("ws", [fine, case.event])

    assert [r.event.id for r in store.events("ws")] == ["e1"]


def test_an_event_id_that_is_no_string_is_told_so(store: WorkStateStore) -> None:
    _workspace(store)

    with pytest.raises(InvalidInput, match="an event id must be a string, not 5"):
        store.append("ws", [Close(id=5, at=LATER, author="A2", target="h1")])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda s: s.create_workspace(5, AGENTS), "workspace: "),
        (lambda s: s.create_workspace(" ws", AGENTS), "workspace: may not start or end"),
        (lambda s: s.create_workspace("ws", AGENTS[0]), "agents must be a list"),
        (lambda s: s.create_workspace("ws", [{"id": "A1"}]), "agents must hold readmit.Agent"),
        (
            lambda s: s.create_workspace("ws", [Agent(id="A\n1", principal="org", role="ops")]),
            "agent.id: may not contain U[+]000A",
        ),
        (
            lambda s: s.create_workspace("ws", [Agent(id="A1", principal="org", role="ops\u200b")]),
            "agent 'A1': role: may not contain U[+]200B",
        ),
    ],
)
def test_a_workspace_or_agent_a_request_could_not_name_is_refused_and_not_made(
    store: WorkStateStore, make: Callable[[WorkStateStore], None], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        make(store)

    assert store.agents("ws") == {}


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"task": ""}, "task"),
        ({"purpose": "p\x00"}, "purpose"),
        ({"agent": b"A1"}, "agent"),
        ({"id": "r\nok: forged"}, "id"),
    ],
)
def test_a_return_a_request_could_not_hold_is_refused_naming_the_field(
    store: WorkStateStore, request_fields: dict[str, Any], field: str
) -> None:
    _workspace(store)
    store.depart("ws", "A1", LATER)
    said = {"id": "r1", "agent": "A1", "task": "t", "purpose": "p", **request_fields}
    request = ReturnRequest(at=LATER + timedelta(hours=1), **said)

    with pytest.raises(InvalidEvent, match=rf"^event {re.escape(repr(said['id']))}: {field}: "):
        store.return_context("ws", request)


def test_a_departure_or_memory_a_request_could_not_hold_is_refused_and_not_stored(
    store: WorkStateStore,
) -> None:
    _workspace(store)

    with pytest.raises(InvalidInput, match="task: "):
        store.depart("ws", "A1", LATER, ("", "p"))
    with pytest.raises(InvalidInput, match="returning_to must be a"):
        store.depart("ws", "A1", LATER, "book")  # type: ignore[arg-type]
    memory = RecordExperience(
        id="x1",
        at=LATER,
        agent="A1",
        experience_id=b"m1",  # type: ignore[arg-type]
        text="Ask Ana.",
        source="h1",
    )
    with pytest.raises(InvalidEvent, match=r"^event 'x1': experience.id: "):
        store.record_experience("ws", memory)

    assert not store.has_departed("ws", "A1", LATER)
    assert store.experiences("ws", "A1") == []


@given(events(texts) | events(names))
def test_the_shortcut_for_plain_names_never_takes_what_the_exact_checks_refuse(
    event: Event,
) -> None:
    if domain._plain(event):
        domain._event(event)


@given(events(texts) | events(names))
def test_the_store_refuses_nothing_a_request_body_may_hold(event: Event) -> None:
    try:
        parse_event(event_to_wire(event), 0)
    except InvalidEvent:
        return
    domain.checked_events([event])


def test_what_the_wire_limits_but_the_store_can_hold_is_stored_as_given(
    store: WorkStateStore,
) -> None:
    """Lengths, and a text's control characters other than NUL, are left to the wire."""
    _workspace(store)
    long_key = "langgraph:" + "k" * 600
    text = "Booked:\r\n- Riverside \x1b[1mInn\x1b[0m " + "x" * 100_001
    store.append("ws", [_asserting(key=long_key, text=text)])

    [item] = [i for i in store.visible_state("ws", "A1") if i.id == "h2"]
    assert (item.key, item.text) == (long_key, text)


def test_a_name_stored_before_these_checks_can_still_be_referred_to(
    store: WorkStateStore,
) -> None:
    _workspace(store)
    assert isinstance(store, SqlStore)
    with store.conn.transaction(lock="ws"):  # as a store before these checks could hold it
        store.conn.execute(
            "INSERT INTO agents (workspace, id, principal, role) VALUES (?, ?, ?, ?)",
            ("ws", "bob ", "org", "ops"),
        )

    store.depart("ws", "bob ", LATER)
    store.append("ws", [Revoke(id="e2", at=LATER, author="bob ", target="h1", why="gone")])

    assert store.has_departed("ws", "bob ", LATER)


def test_agents_given_as_a_generator_are_all_made(store: WorkStateStore) -> None:
    store.create_workspace("ws", (a for a in AGENTS))  # type: ignore[arg-type]

    assert sorted(store.agents("ws")) == ["A1", "A2"]


def _nested(depth: int) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for _ in range(depth):
        record = {"x": record}
    return record


DECISIONS = [
    ({"agent": "Z9"}, InvalidInput, "no such agent"),
    ({"at": "2026-05-01T09:00:00Z"}, InvalidInput, "at: give a datetime with a time zone"),
    ({"at": LATER.replace(tzinfo=None)}, InvalidEvent, "no time zone"),
    ({"epoch": -1}, InvalidInput, "epoch must be an integer"),
    ({"epoch": True}, InvalidInput, "epoch must be an integer"),
    ({"outcome": "granted"}, InvalidInput, "outcome must be one of"),
    ({"record": "{}"}, InvalidInput, "record must be a dict"),
    ({"epoch": 10**30}, InvalidInput, "epoch must be an integer"),
    ({"record": logged(x=float("nan"))}, InvalidInput, "record is not JSON"),
    ({"record": logged(x=float("inf"))}, InvalidInput, "record is not JSON"),
    ({"record": logged(x=object())}, InvalidInput, "record is not JSON"),
    ({"record": logged(x="\ud800")}, InvalidInput, "record is not JSON"),
    ({"record": logged(x=_nested(5000))}, InvalidInput, "record is not JSON"),
    ({"record": {"x": 1}}, InvalidInput, "not in the shape readmit logs: it has no 'workspace'"),
    ({"record": logged(epoch="0")}, InvalidInput, "shape readmit logs: its 'epoch' is str"),
    ({"record": logged(epoch=True)}, InvalidInput, "shape readmit logs: its 'epoch' is bool"),
    ({"record": logged(view=[])}, InvalidInput, "shape readmit logs: its 'view' is list"),
    ({"record": logged(agent="A2")}, InvalidInput, "names 'A2' in 'ws', not 'A1' in 'ws'"),
    ({"record": logged("other")}, InvalidInput, "names 'A1' in 'other', not 'A1' in 'ws'"),
]


@pytest.mark.parametrize(("fields", "error", "said"), DECISIONS)
def test_a_decision_the_audit_log_would_keep_wrong_is_refused_and_not_kept(
    store: WorkStateStore, fields: dict[str, Any], error: type[Exception], said: str
) -> None:
    _workspace(store)
    given = {
        "agent": "A1",
        "at": LATER,
        "epoch": 0,
        "outcome": "issued",
        "record": logged(),
        **fields,
    }

    with pytest.raises(error, match=said):
        store.record_decision("ws", **given)

    assert store.decisions("ws") == []


@pytest.mark.parametrize(
    ("key_hash", "at", "error"),
    [
        ("rk_raw-key-not-its-hash", LATER, InvalidInput),
        ("sha256:" + "0" * 63, LATER, InvalidInput),
        (b"sha256:" + b"0" * 64, LATER, InvalidInput),
        ("sha256:" + "0" * 64, LATER.replace(tzinfo=None), InvalidEvent),
    ],
)
def test_an_agent_key_stored_in_a_form_no_key_hashes_to_is_refused(
    store: WorkStateStore, key_hash: object, at: datetime, error: type[Exception]
) -> None:
    _workspace(store)

    with pytest.raises(error):
        store.add_agent_key("ws", "A1", key_hash, at)  # type: ignore[arg-type]

    assert store.agent_for_key(str(key_hash)) is None


def test_a_key_stored_twice_is_refused_and_keeps_its_agent(store: WorkStateStore) -> None:
    _workspace(store)
    key = "sha256:" + "0" * 64
    store.add_agent_key("ws", "A1", key, LATER)

    with pytest.raises(InvalidInput, match="already stored"):
        store.add_agent_key("ws", "A2", key, LATER)

    found = store.agent_for_key(key)
    assert found is not None
    assert found[1].id == "A1"


def test_a_time_given_as_a_string_is_an_invalid_event_naming_the_field(
    store: WorkStateStore,
) -> None:
    _workspace(store)
    event = Assert(id="e9", at="2026-05-01T09:00:00Z", author="A1", item=_draft(id="x"))  # type: ignore[arg-type]

    with pytest.raises(InvalidEvent, match="'e9': at: give a datetime"):
        store.append("ws", [event])
    assert [r.event.id for r in store.events("ws")] == ["e1"]


FAR = datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-14)))
"""An aware time with no UTC form in years 1 to 9999 (the wire refuses it, `Instant`)."""


@pytest.mark.parametrize(
    "event",
    [
        Assert(id="e2", at=FAR, author="A2", item=_draft()),
        _asserting(validity=Validity(valid_to=FAR)),
        _asserting(
            validity=Validity(valid_from=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))))
        ),
    ],
    ids=["at", "valid_to", "valid_from"],
)
def test_a_time_with_no_utc_form_is_an_invalid_event_and_stores_nothing(
    store: WorkStateStore, event: Event
) -> None:
    """It raised Python's OverflowError from deep in the store (a review)."""
    _workspace(store)

    with pytest.raises(InvalidEvent, match="outside the years 1 to 9999 in UTC"):
        store.append("ws", [event])

    assert [r.event.id for r in store.events("ws")] == ["e1"]


def test_a_departure_return_or_memory_at_a_time_with_no_utc_form_is_refused(
    store: WorkStateStore,
) -> None:
    _workspace(store)
    request = ReturnRequest(id="r1", at=FAR, agent="A1", task="t", purpose="p")
    memory = RecordExperience(
        id="x1", at=FAR, agent="A1", experience_id="m1", text="Ask Ana.", source="h1"
    )

    for refused in (
        lambda: store.depart("ws", "A1", FAR),
        lambda: store.return_context("ws", request),
        lambda: store.record_experience("ws", memory),
    ):
        with pytest.raises(InvalidEvent, match="outside the years 1 to 9999 in UTC"):
            refused()

    assert not store.has_departed("ws", "A1", LATER)
    assert store.experiences("ws", "A1") == []


def test_a_key_at_a_time_with_no_utc_form_is_refused(store: WorkStateStore) -> None:
    _workspace(store)

    with pytest.raises(InvalidEvent, match="outside the years 1 to 9999 in UTC"):
        store.add_agent_key("ws", "A1", "sha256:" + "0" * 64, FAR)

    assert store.agent_for_key("sha256:" + "0" * 64) is None


@pytest.mark.parametrize("source", ["h\x001", "h\ud800"])
def test_a_memory_whose_source_no_store_could_hold_is_refused(
    store: WorkStateStore, source: str
) -> None:
    """SQLite said "no known item", PostgreSQL a store error, a surrogate failed to encode."""
    _workspace(store)
    memory = RecordExperience(
        id="x1", at=LATER, agent="A1", experience_id="m1", text="Ask Ana.", source=source
    )

    with pytest.raises(InvalidEvent, match=r"^event 'x1': experience.source: "):
        store.record_experience("ws", memory)

    assert store.experiences("ws", "A1") == []


def _wide(n: int, seed: int) -> str:
    """``n`` characters of four UTF-8 bytes each, in an order no compression shortens."""
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x10000, 0x110000)) for _ in range(n))


def test_the_longest_names_the_store_takes_are_held_by_both_stores(store: WorkStateStore) -> None:
    """PostgreSQL indexes rows of at most 2,704 bytes; SQLite took any length (a review)."""
    ws, agent, reader = _wide(200, 1), _wide(200, 2), _wide(200, 3)
    store.create_workspace(ws, [Agent(id=agent, principal=reader, role=_wide(200, 4)), AGENTS[1]])
    item, key = _wide(256, 5), _wide(450, 6)  # 1,024 and 1,800 bytes
    store.append(ws, [Assert(id=_wide(256, 7), at=T, author=agent, item=_draft(id=item, key=key))])
    store.depart(ws, agent, LATER)
    memory = RecordExperience(
        id=_wide(256, 8), at=LATER, agent=agent, experience_id=_wide(256, 9), text="t", source=item
    )
    store.record_experience(ws, memory)
    request = ReturnRequest(id=_wide(256, 10), at=LATER, agent=agent, task="*", purpose="*")

    assert [i.id for i in store.return_context(ws, request).items] == [item]
    assert [e.id for e in store.experiences(ws, agent)] == [memory.experience_id]


@pytest.mark.parametrize(
    ("event", "field", "size", "most"),
    [
        (_asserting(id=_wide(256, 1) + "x"), "item.id", 1025, 1024),
        (_asserting(key=_wide(450, 1) + "x"), "item.key", 1801, 1800),
        (_withdrawing(Close, id="e" * 1025), "id", 1025, 1024),
        (_obligation(requires=frozenset({_wide(300, 1)})), "obligation.requires", 1200, 1024),
    ],
    ids=["item id", "key", "event id", "requirement"],
)
def test_a_name_too_long_for_postgresql_is_refused_by_both_stores(
    store: WorkStateStore, event: Event, field: str, size: int, most: int
) -> None:
    """PostgreSQL refused it with a `StoreError` (an index row too long), SQLite stored it."""
    _workspace(store)

    with pytest.raises(
        InvalidEvent, match=rf": {field}: {size:,} bytes in UTF-8, at most {most:,}$"
    ):
        store.append("ws", [event])

    assert [r.event.id for r in store.events("ws")] == ["e1"]


@pytest.mark.parametrize(
    ("agent", "field"),
    [
        (Agent(id="A" * 201, principal="org", role="ops"), "agent.id"),
        (Agent(id="A1", principal="o" * 201, role="ops"), "principal"),
        (Agent(id="A1", principal="org", role="o" * 201), "role"),
    ],
)
def test_a_workspace_or_agent_name_longer_than_a_request_may_give_is_refused(
    store: WorkStateStore, agent: Agent, field: str
) -> None:
    """Indexed with others (an experience by workspace, agent and id), as the wire limits it."""
    with pytest.raises(InvalidInput, match=rf"{field}: 201 characters, at most 200$"):
        store.create_workspace("ws", [agent])
    with pytest.raises(InvalidInput, match=r"^workspace: 201 characters, at most 200$"):
        store.create_workspace("w" * 201, AGENTS)

    assert store.agents("ws") == {}


@pytest.mark.parametrize("name", ["A\x001", "A\ud8001"], ids=["NUL", "lone surrogate"])
def test_a_read_naming_what_no_store_holds_is_refused_by_both_stores(
    store: WorkStateStore, name: str
) -> None:
    """SQLite found nothing, PostgreSQL raised a `StoreError` for the NUL, both a
    ``UnicodeEncodeError`` for the surrogate (a review)."""
    _workspace(store)
    store.depart("ws", "A1", LATER)
    reads: list[Callable[[], object]] = [
        lambda: store.agents(name),
        lambda: store.departed_for("ws", name, LATER),
        lambda: store.has_departed("ws", name, LATER),
        lambda: store.visible_state(name, "A1"),
        lambda: store.unreadable("ws", "A1", ["h1", name]),
        lambda: store.newest_under("ws", "A1", name),
    ]

    for read in reads:
        with pytest.raises(InvalidInput, match=r"holds U\+(0000|D800) \(a NUL or a lone surrogate"):
            read()


def test_whether_an_agent_departed_by_a_time_with_no_utc_form_is_refused(
    store: WorkStateStore,
) -> None:
    """It raised Python's OverflowError (a review)."""
    _workspace(store)
    store.depart("ws", "A1", LATER)

    for read in (store.departed_for, store.has_departed):
        with pytest.raises(InvalidEvent, match="outside the years 1 to 9999 in UTC"):
            read("ws", "A1", FAR)


@pytest.mark.parametrize("keyed", [True, False], ids=["replaced by key", "revoked by id"])
def test_an_item_named_longer_than_a_request_may_is_judged_and_withdrawn_like_any(
    store: WorkStateStore, keyed: bool
) -> None:
    """Its withdrawal, read back as a verdict's evidence through the wire's 200-character
    names, failed every return with `InvalidEventAt` (a review)."""
    hotel, key = "h" * 300, "k" * 1800
    store.create_workspace("ws", AGENTS)
    pickup = _draft(id="p0", text="Pickup at 8:00 from the Sunrise Hotel.")
    booked = _draft(id=hotel, text="The Sunrise Hotel is booked.", key=key)
    store.append(
        "ws", [Assert(id=f"e{i.id[:2]}", at=T, author="A2", item=i) for i in (booked, pickup)]
    )
    store.depart("ws", "A1", T)
    later = _draft(id="h1", text="The Riverside Hotel is booked instead.", key=key)
    withdrawn = (
        Assert(id="e2", at=LATER, author="A2", item=later)
        if keyed
        else Revoke(id="e2", at=LATER, author="A2", target=hotel, why="Sunrise cancelled.")
    )
    store.append("ws", [withdrawn])
    request = ReturnRequest(id="r1", at=LATER, agent="A1", task="*", purpose="*")

    decided = decide(
        store, "ws", request, policy=Policy(), verifier=TermVerifier(), signer=SIGNER
    ).decision

    assert {e.item: e.reason for e in decided.exclusions} == {
        hotel: Reason.STALE_OR_SUPERSEDED if keyed else Reason.REVOKED,
        "p0": Reason.IMPLICITLY_INVALIDATED,
    }


class _Saying:
    """A verifier whose every verdict invalidates, for ``reason`` (as a model may word it)."""

    name = "saying"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [Verdict(invalidates=True, confidence=0.9, reason=self.reason) for _ in pairs]


@pytest.mark.parametrize(
    ("reason", "kept"),
    [
        ("linked\x00by the hotel", "linked\ufffdby the hotel"),
        ("linked \ud83d by the hotel", "linked \ufffd by the hotel"),
    ],
    ids=["NUL", "lone surrogate"],
)
def test_a_verdict_whose_reason_no_store_could_hold_is_kept_without_that_character(
    store: WorkStateStore, reason: str, kept: str
) -> None:
    """PostgreSQL refused the NUL with a `StoreError`, a surrogate failed to encode, and the
    cached answer failed every return after (a review)."""
    _workspace(store)
    store.append("ws", [_asserting(id="p0", text="Pickup at 8:00 from the hotel.")])
    store.depart("ws", "A1", LATER)
    store.append("ws", [_withdrawing(Revoke, id="e3", at=LATER, why="The hotel cancelled.")])
    request = ReturnRequest(id="r1", at=LATER, agent="A1", task="*", purpose="*")

    decided = decide(
        store, "ws", request, policy=Policy(), verifier=_Saying(reason), signer=SIGNER
    ).decision

    [detail] = [e.detail for e in decided.exclusions if e.reason is Reason.IMPLICITLY_INVALIDATED]
    assert detail.endswith(": " + kept)


def test_a_reader_with_the_longest_names_is_screened_and_its_screenings_kept(
    store: WorkStateStore,
) -> None:
    """Its workspace, principal and role, the verifier and the item overflowed PostgreSQL's
    index of screenings: every return that judged failed with a `StoreError` (a review)."""
    ws, principal, role = _wide(200, 1), _wide(200, 2), _wide(200, 3)
    store.create_workspace(
        ws,
        [
            Agent(id="A1", principal=principal, role=role),
            Agent(id="A2", principal=principal, role="r"),
        ],
    )
    hotel, pickup = _wide(256, 4), _wide(256, 5)
    booked = _draft(id=hotel, text="The Sunrise Hotel is booked.")
    note = _draft(id=pickup, text="Pickup at 8:00 from the Sunrise Hotel.")
    seats = _draft(id=_wide(256, 6), text="The family prefers window seats.")
    drafts = (booked, note, seats)
    store.append(ws, [Assert(id=f"e{n}", at=T, author="A2", item=i) for n, i in enumerate(drafts)])
    store.depart(ws, "A1", T)
    store.append(
        ws, [Revoke(id="e", at=LATER, author="A2", target=hotel, why="Sunrise cancelled.")]
    )
    request = ReturnRequest(id="r1", at=LATER, agent="A1", task="*", purpose="*")

    decided = decide(store, ws, request, policy=Policy(), verifier=TermVerifier(), signer=SIGNER)

    assert {e.item: e.reason for e in decided.decision.exclusions} == {
        hotel: Reason.REVOKED,
        pickup: Reason.IMPLICITLY_INVALIDATED,
    }
    assert isinstance(store, SqlStore)
    (kept,) = store.conn.execute("SELECT COUNT(*) FROM screenings").fetchone()
    assert kept == 1  # the seats, screened through the revocation
