"""Values built in Python are held to the rules a request body is: the store refuses them
naming the field, and stores nothing (`readmit.wire.domain`)."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given

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
from readmit.model import Agent
from readmit.store import WorkStateStore
from readmit.wire import event_to_wire, parse_event
from readmit.wire.domain import checked_events
from strategies import events, names, texts

T = datetime(2026, 5, 1, 8, tzinfo=UTC)
LATER = T + timedelta(hours=1)
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
    Case("an escape in an item text", _asserting(text="\x1b[2J"), "item.text"),
    Case("a tab in a supports id", _asserting(supports={"d\t1"}), "item.supports"),
    Case("a space around a key", _asserting(key=" k"), "item.key"),
    Case("an empty key", _asserting(key=""), "item.key"),
    Case("an empty task", _asserting(task=""), "item.task"),
    Case("a reader role with a zero-width space", _asserting(roles={"o\u200bps"}), "item.roles"),
    Case("unconfirmed given as a string", _asserting(unconfirmed="no"), "item.unconfirmed"),
    Case(
        "a supersede of a target with a newline",
        _withdrawing(Supersede, target="h\n1", item=_draft()),
        "target",
    ),
    Case("a resolve of an id 201 long", _withdrawing(Resolve, target="o" * 201), "target"),
    Case(
        "a source id with a bidi override",
        Evidence(id="e2", at=LATER, author="A2", source_id="s\u202e1", text="x"),
        "source.id",
    ),
    Case("an obligation role with a NUL", _obligation(role="o\x00ps"), "obligation.role"),
    Case(
        "a frontier text with a bell",
        _obligation(frontier_text="Nothing\x07"),
        "obligation.frontier.text",
    ),
    Case(
        "a required id with a newline",
        _obligation(requires=frozenset({"d\n1"})),
        "obligation.requires",
    ),
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
            "agent.role: may not contain U[+]200B",
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
    [({"task": ""}, "task"), ({"purpose": "p\x00"}, "purpose"), ({"agent": " A1"}, "agent")],
)
def test_a_return_a_request_could_not_hold_is_refused_naming_the_field(
    store: WorkStateStore, request_fields: dict[str, str], field: str
) -> None:
    _workspace(store)
    store.depart("ws", "A1", LATER)
    said = {"agent": "A1", "task": "t", "purpose": "p", **request_fields}
    at = LATER + timedelta(hours=1)
    request = ReturnRequest(
        id="r1", at=at, agent=said["agent"], task=said["task"], purpose=said["purpose"]
    )

    with pytest.raises(InvalidEvent, match=rf"^event 'r1': {field}: "):
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
        id="x1", at=LATER, agent="A1", experience_id="m\n1", text="Ask Ana.", source="h1"
    )
    with pytest.raises(InvalidEvent, match=r"^event 'x1': experience.id: "):
        store.record_experience("ws", memory)

    assert not store.has_departed("ws", "A1", LATER)
    assert store.experiences("ws", "A1") == []


@given(events(texts) | events(names))
def test_a_built_event_is_refused_exactly_when_its_wire_form_is_refused_at_the_edge(
    event: Event,
) -> None:
    """The shortcut for plain names and texts, and the exact checks, agree with the edge."""
    try:
        parse_event(event_to_wire(event), 0)
    except InvalidEvent:
        edge = False
    else:
        edge = True
    try:
        checked_events([event])
    except InvalidInput:
        built = False
    else:
        built = True

    assert built == edge
