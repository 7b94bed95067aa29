"""Events at the edge: every op parses to its domain value; every malformed one is an
`InvalidEvent` naming the event and the field; shared-state events round-trip."""

from datetime import UTC, datetime
from typing import Any

import pytest

from readmit.errors import InvalidEvent
from readmit.events import (
    Assert,
    Close,
    Depart,
    Evidence,
    OpenObligation,
    RecordExperience,
    Resolve,
    ReturnRequest,
    Revoke,
    Supersede,
)
from readmit.model import ANY, Kind
from readmit.wire import InvalidEventAt, event_to_wire, parse_event, parse_step

AT = "2026-05-01T08:00:00Z"
WHEN = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
ITEM = {"id": "h1", "text": "The hotel is booked."}
OBLIGATION = {
    "id": "o1",
    "text": "Plan the trip.",
    "role": "itinerary",
    "requires": ["d_h", "d_t"],
    "critical": ["d_h"],
    "frontier": {"id": "f1", "text": "Next: trains."},
}
EVENTS: dict[str, dict[str, Any]] = {
    "evidence": {"author": "A2", "source": {"id": "s1", "text": "Receipt 42."}},
    "assert": {"author": "A2", "item": ITEM},
    "supersede": {"author": "A2", "target": "h0", "item": ITEM},
    "revoke": {"author": "A2", "target": "h0", "why": "Cancelled."},
    "close": {"author": "A2", "target": "h0"},
    "obligation": {"author": "A2", "obligation": OBLIGATION},
    "resolve": {"author": "A2", "target": "o1"},
    "experience": {"agent": "A1", "experience": {"id": "m1", "text": "I saw it.", "source": "h1"}},
    "depart": {"agent": "A1"},
    "return": {"agent": "A1", "task": "trip", "purpose": "itinerary"},
}
KINDS = {
    "evidence": Evidence,
    "assert": Assert,
    "supersede": Supersede,
    "revoke": Revoke,
    "close": Close,
    "obligation": OpenObligation,
    "resolve": Resolve,
    "experience": RecordExperience,
    "depart": Depart,
    "return": ReturnRequest,
}
SHARED = ["evidence", "assert", "supersede", "revoke", "close", "obligation", "resolve"]


def event(op: str, **changes: Any) -> dict[str, Any]:
    return {"id": "e1", "at": AT, "op": op, **EVENTS[op], **changes}


def refused(raw: object, index: int = 0) -> InvalidEvent:
    with pytest.raises(InvalidEvent) as raised:
        parse_step(raw, index)
    return raised.value


@pytest.mark.parametrize("op", list(EVENTS))
def test_every_op_parses_to_its_domain_value(op: str) -> None:
    step = parse_step(event(op), 0)

    assert isinstance(step, KINDS[op])
    assert (step.id, step.at, step.op) == ("e1", WHEN, op)


def test_an_events_op_is_its_class_and_cannot_be_given() -> None:
    """The tag of the union is fixed by the class: code that tells events apart by ``op``
    (the store's log queries, explicit invalidation) can never be misled."""
    with pytest.raises(TypeError):
        Revoke(id="e1", at=WHEN, author="A1", target="h1", why="gone", op="assert")  # type: ignore[call-arg]

    assert Revoke(id="e1", at=WHEN, author="A1", target="h1", why="gone").op == "revoke"


def test_an_item_is_parsed_with_its_defaults() -> None:
    step = parse_step(event("assert"), 0)

    assert isinstance(step, Assert)
    draft = step.item
    assert (draft.kind, draft.key, draft.principals) == (Kind.FACT, None, None)
    assert (draft.roles, draft.task, draft.purposes) == (frozenset({ANY}), ANY, frozenset({ANY}))
    assert draft.unconfirmed is False


def test_readers_and_wildcards_become_sets() -> None:
    item = {**ITEM, "readers": {"principals": ["family"], "roles": ["booking"]}, "purposes": "*"}

    step = parse_step(event("assert", item=item), 0)
    everyone = parse_step(event("assert", item={**ITEM, "readers": "*"}), 0)

    assert isinstance(step, Assert)
    assert isinstance(everyone, Assert)
    assert step.item.principals == frozenset({"family"})
    assert step.item.roles == frozenset({"booking"})
    assert everyone.item.principals == frozenset({ANY})


def test_an_event_without_an_id_is_named_by_its_position() -> None:
    raw = event("close")
    del raw["id"]

    assert parse_step(raw, 7).id == "e7"
    assert refused({**raw, "target": ""}, 7).event_id == "e7"


@pytest.mark.parametrize("raw", [[], "assert", None, 3, [{"op": "assert"}]])
def test_an_event_must_be_an_object(raw: object) -> None:
    assert "must be a JSON object" in refused(raw).problem


@pytest.mark.parametrize("op", ["explode", None, 1, ["assert"], "ASSERT"])
def test_an_unknown_op_names_the_known_ones(op: object) -> None:
    problem = refused({**event("close"), "op": op}).problem

    assert f"unknown op {op!r}" in problem
    assert "known: evidence, assert" in problem


@pytest.mark.parametrize("op", list(EVENTS))
def test_an_unknown_field_is_refused_for_every_op(op: str) -> None:
    assert refused(event(op, colour="red")).problem == "colour: unknown field"


def _misspelled(op: str, path: tuple[str, ...], wrong: str) -> dict[str, Any]:
    """``event(op)`` with the object at ``path`` given an extra field ``wrong``."""
    raw = event(op)
    target = raw
    for part in path:
        target[part] = dict(target[part])
        target = target[part]
    target[wrong] = ["x"]
    return raw


@pytest.mark.parametrize(
    ("op", "path", "wrong", "meant"),
    [
        ("assert", ("item",), "support", "supports"),
        ("assert", ("item",), "depends", "depends_on"),
        ("supersede", ("item",), "cite", "cites"),
        ("assert", (), "autor", "author"),
        ("revoke", (), "targt", "target"),
        ("obligation", ("obligation",), "require", "requires"),
        ("obligation", ("obligation", "frontier"), "txt", "text"),
        ("experience", ("experience",), "sourc", "source"),
        ("return", (), "purpos", "purpose"),
    ],
)
def test_a_misspelled_field_is_named_with_the_field_it_is_close_to(
    op: str, path: tuple[str, ...], wrong: str, meant: str
) -> None:
    where = ".".join((*path, wrong))

    error = refused(_misspelled(op, path, wrong))

    assert error.problem == f"{where}: unknown field (did you mean {meant!r}?)"
    assert isinstance(error, InvalidEventAt)
    assert error.fields == (where,)


def test_a_suggestion_is_one_of_the_fields_where_the_misspelling_is() -> None:
    """``target`` is a field of revoke, not of assert: an assert is not told to use it."""
    assert refused(event("assert", targe="h0")).problem == "targe: unknown field"
    readers = {**ITEM, "readers": {"role": ["booking"]}}
    problem = refused(event("assert", item=readers)).problem
    assert "item.readers.role: unknown field (did you mean 'roles'?)" in problem


def test_a_misspelled_op_is_named_with_the_op_it_is_close_to() -> None:
    problem = refused({**event("close"), "op": "revok"}).problem

    assert problem.startswith("unknown op 'revok' (did you mean 'revoke'? known: evidence, ")


@pytest.mark.parametrize(
    ("op", "field"),
    [
        ("evidence", "source"),
        ("assert", "item"),
        ("supersede", "target"),
        ("revoke", "why"),
        ("close", "target"),
        ("obligation", "obligation"),
        ("resolve", "target"),
        ("experience", "experience"),
        ("depart", "agent"),
        ("return", "purpose"),
        ("assert", "at"),
    ],
)
def test_a_missing_field_is_named(op: str, field: str) -> None:
    raw = event(op)
    del raw[field]

    assert refused(raw).problem.startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ({"author": 7}, "author"),
        ({"author": True}, "author"),
        ({"author": ""}, "author"),
        ({"author": " A2"}, "author"),
        ({"author": "A" * 201}, "author"),
        ({"item": {**ITEM, "text": 5}}, "item.text"),
        ({"item": {**ITEM, "text": "x" * 100_001}}, "item.text"),
        ({"item": {**ITEM, "kind": "rumour"}}, "item.kind"),
        ({"item": {**ITEM, "supports": "d_h"}}, "item.supports"),
        ({"item": {**ITEM, "unconfirmed": "no"}}, "item.unconfirmed"),
        ({"item": {**ITEM, "unconfirmed": 0}}, "item.unconfirmed"),
        ({"item": {**ITEM, "readers": {"roles": "booking"}}}, "item.readers"),
        ({"item": {**ITEM, "valid_from": "2026-05-01T08:00:00"}}, "item.valid_from"),
        ({"at": "2026-05-01T08:00:00"}, "at"),
        ({"at": "yesterday"}, "at"),
        ({"id": 5}, "id"),
    ],
)
def test_a_wrong_type_or_shape_names_the_field(changes: dict[str, Any], where: str) -> None:
    raw = event("assert", **changes)

    problem = refused(raw).problem

    assert problem.startswith(where)


@pytest.mark.parametrize("at", [1714550400, "1714550400"])
def test_a_time_is_text_with_an_offset_never_a_number(at: object) -> None:
    assert refused(event("assert", at=at)).problem.startswith("at: ")


def test_every_problem_of_an_event_is_named_at_once() -> None:
    problem = refused(event("assert", author="", item={**ITEM, "kind": "rumour"})).problem

    assert "author: " in problem
    assert "item.kind: " in problem


def test_critical_dependencies_must_be_required_ones() -> None:
    obligation = {**OBLIGATION, "critical": ["d_zz"]}

    assert "subset" in refused(event("obligation", obligation=obligation)).problem


def test_a_returns_policy_is_kept_for_the_caller_to_judge() -> None:
    step = parse_step(event("return", policy={"gamma": 0.5}), 0)

    assert isinstance(step, ReturnRequest)
    assert dict(step.policy) == {"gamma": 0.5}
    assert "policy" in refused(event("return", policy=[1])).problem


@pytest.mark.parametrize("op", ["experience", "depart", "return"])
def test_agent_actions_are_not_shared_state_events(op: str) -> None:
    with pytest.raises(InvalidEvent, match="agent action"):
        parse_event(event(op), 0)


@pytest.mark.parametrize("op", SHARED)
def test_shared_state_events_round_trip_through_the_wire(op: str) -> None:
    parsed = parse_event(event(op), 0)

    assert parse_event(event_to_wire(parsed), 0) == parsed


def test_an_item_with_every_field_round_trips() -> None:
    item = {
        **ITEM,
        "kind": "constraint",
        "key": "hotel",
        "supports": ["d_h"],
        "depends_on": ["h0"],
        "cites": ["s1"],
        "readers": {"principals": ["family"], "roles": ["booking", "itinerary"]},
        "task": "trip",
        "purposes": ["booking"],
        "valid_from": "2026-05-01T08:00:00+02:00",
        "valid_to": AT,
        "unconfirmed": True,
    }
    parsed = parse_event(event("assert", item=item), 0)

    assert parse_event(event_to_wire(parsed), 0) == parsed


def test_a_problem_names_the_field_as_written_without_pydantic_tags() -> None:
    item = {**ITEM, "readers": {"roles": [1]}}

    problem = refused(event("assert", item=item)).problem

    assert problem.startswith("item.readers.roles.0: ")
    assert "ReadersIn" not in problem
    assert "[" not in problem.replace("['*']", "")


def test_a_refused_event_names_its_position_and_the_fields_at_fault() -> None:
    raw = event("assert", author="", item={**ITEM, "kind": "rumour"})

    error = refused(raw, 4)

    assert isinstance(error, InvalidEventAt)
    assert (error.index, error.fields) == (4, ("author", "item.kind"))
    assert str(error).startswith("event 'e1' (events[4]): author: ")


def test_an_event_without_an_id_is_named_by_its_position_alone() -> None:
    raw = event("close", target="")
    del raw["id"]

    assert str(refused(raw, 7)).startswith("events[7]: target: ")
