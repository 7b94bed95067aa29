"""Ids, names and texts with control characters are refused at the edge, before any store."""

import re
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from readmit.errors import InvalidEvent, InvalidEventAt, InvalidInput
from readmit.events import Assert, Evidence
from readmit.examples.travel import travel_scenario
from readmit.scenario import load_scenario
from readmit.wire import Name, Text, check_name, check_text, parse_step

AT = "2026-05-01T08:00:00Z"


def _assert(**item: Any) -> dict[str, Any]:
    body = {"id": "h1", "text": "The hotel is booked.", **item}
    return {"op": "assert", "id": "e1", "at": AT, "author": "A1", "item": body}


@dataclass(frozen=True)
class Case:
    id: str
    event: dict[str, Any]
    where: str
    char: str


CASES = [
    Case("NUL in an item id", _assert(id="h\x001"), "item.id", "U+0000"),
    Case("NUL alone as an item id", _assert(id="\x00"), "item.id", "U+0000"),
    Case("NUL in an item text", _assert(text="booked\x00"), "item.text", "U+0000"),
    Case("escape in an item text", _assert(text="\x1b[2Jbooked"), "item.text", "U+001B"),
    Case("carriage return in a text", _assert(text="a\rb"), "item.text", "U+000D"),
    Case("DEL in a key", _assert(key="hotel\x7f"), "item.key", "U+007F"),
    Case("C1 control in a supports id", _assert(supports=["x\x85y"]), "item.supports.0", "U+0085"),
    Case("tab in an item id", _assert(id="h\t1"), "item.id", "U+0009"),
    Case("NUL in a reader role", _assert(readers={"roles": ["r\x00"]}), "item.readers", "U+0000"),
    Case(
        "NUL in an author",
        {
            "op": "assert",
            "id": "e1",
            "at": AT,
            "author": "A\x001",
            "item": {"id": "h", "text": "t"},
        },
        "author",
        "U+0000",
    ),
    Case(
        "NUL in an evidence source",
        {
            "op": "evidence",
            "id": "e1",
            "at": AT,
            "author": "A1",
            "source": {"id": "s", "text": "\x00"},
        },
        "source.text",
        "U+0000",
    ),
    Case(
        "NUL in a return purpose",
        {"op": "return", "id": "e1", "at": AT, "agent": "A1", "task": "t", "purpose": "p\x00"},
        "purpose",
        "U+0000",
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_control_characters_are_refused_naming_the_field(case: Case) -> None:
    with pytest.raises(InvalidEvent) as raised:
        parse_step(case.event, 0)

    assert case.where in str(raised.value)
    assert case.char in str(raised.value)


def test_tab_and_newline_are_allowed_in_text() -> None:
    step = parse_step(_assert(text="line one\n\tline two"), 0)

    assert isinstance(step, Assert)
    assert step.item.text == "line one\n\tline two"


def test_ordinary_unicode_ids_and_texts_still_parse() -> None:
    step = parse_step(
        {
            "op": "evidence",
            "id": "é-1",
            "at": AT,
            "author": "Agent ✓",
            "source": {"id": "s—1", "text": "Ça marche 🚆"},
        },
        0,
    )

    assert isinstance(step, Evidence)
    assert (step.source_id, step.text) == ("s—1", "Ça marche 🚆")


@pytest.mark.parametrize("value", ["a\x00b", "\x1b", "a\nb", " a", "", "x" * 201])
def test_check_name_refuses_what_a_name_field_refuses(value: str) -> None:
    with pytest.raises(InvalidInput, match=r"^workspace: "):
        check_name(value, "workspace")


@pytest.mark.parametrize(
    ("value", "char"),
    [
        ("a\u202eb", "U+202E"),  # right-to-left override
        ("a\u2066b", "U+2066"),  # left-to-right isolate
        ("a\u200bb", "U+200B"),  # zero-width space
        ("a\u200db", "U+200D"),  # zero-width joiner
        ("a\ufeffb", "U+FEFF"),  # zero-width no-break space
        ("a\u00adb", "U+00AD"),  # soft hyphen
        ("a\u2028b", "U+2028"),  # line separator
        ("a\U000e0041b", "U+E0041"),  # a tag character
        ("a\ufe0eb", "U+FE0E"),  # a text variation selector
        ("a\u00a0b", "U+00A0"),  # a no-break space: reads as "a b"
        ("a\u3164b", "U+3164"),  # Hangul filler
        ("a\u034fb", "U+034F"),  # combining grapheme joiner
    ],
)
def test_a_name_may_not_hide_characters_that_change_how_it_reads(value: str, char: str) -> None:
    with pytest.raises(InvalidInput, match=f"may not contain {re.escape(char)} .*invisible"):
        check_name(value, "item id")

    assert check_name("Ça-1 ✓ 東京 ☕\ufe0f", "item id") == "Ça-1 ✓ 東京 ☕\ufe0f"


@pytest.mark.parametrize("value", ["\x00", "a\rb", "\x07"])
def test_check_text_refuses_control_characters_but_tab_and_newline(value: str) -> None:
    with pytest.raises(InvalidInput, match=r"text: .*may not contain"):
        check_text(value, "text")

    assert check_text("a\tb\nc", "text") == "a\tb\nc"


def test_a_huge_event_id_is_named_not_echoed() -> None:
    event = {**_assert(), "id": "e" * 1_000_000, "op": "teleport"}

    with pytest.raises(InvalidEvent) as raised:
        parse_step(event, 0)

    assert len(str(raised.value)) < 500
    assert raised.value.event_id == "e0"  # an id that is no name is not given back anywhere


@pytest.mark.parametrize(
    "raw",
    [
        {**_assert(), "at": "0001-01-01T00:00:00+14:00"},
        {**_assert(), "at": "9999-12-31T23:59:59-10:00"},
        _assert(valid_to="9999-12-31T23:59:59-10:00"),
    ],
)
def test_a_time_with_no_utc_date_is_refused_not_crashed(raw: dict[str, Any]) -> None:
    with pytest.raises(InvalidEvent, match="outside the years 1 to 9999 in UTC"):
        parse_step(raw, 0)


def test_a_scenarios_bad_event_is_named_by_its_position() -> None:
    scenario = travel_scenario()
    scenario["events"][3] = {**scenario["events"][3], "colour": "red"}

    with pytest.raises(InvalidEventAt) as raised:
        load_scenario(scenario)

    assert raised.value.index == 3
    assert str(raised.value) == "events[3]: colour: unknown field"


def test_an_event_refused_at_a_position_is_in_the_error_tree_with_the_invalid_event_code() -> None:
    import readmit.wire
    import readmit.wire.edge

    error = InvalidEventAt("e1", "bad", index=2, fields=("op",))

    assert isinstance(error, InvalidEvent)
    assert error.code == InvalidEvent.code == "invalid_event"
    assert readmit.wire.InvalidEventAt is readmit.wire.edge.InvalidEventAt is InvalidEventAt


@given(st.text(max_size=210) | st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=210))
@example("x" * 200)
@example("x" * 201)
def test_check_name_takes_exactly_what_a_name_field_takes(value: str) -> None:
    """Its printable-ASCII shortcut agrees with the `Name` type of request bodies."""
    try:
        TypeAdapter(Name).validate_python(value)
    except ValidationError:
        with pytest.raises(InvalidInput):
            check_name(value, "id")
    else:
        assert check_name(value, "id") == value


@given(st.text(max_size=40).map(lambda s: s * 2_600))
@example("x" * 100_000)
@example("x" * 100_001)
def test_check_text_takes_exactly_what_a_text_field_takes(value: str) -> None:
    """Its shortcut agrees with the `Text` type, at its length limit too."""
    try:
        TypeAdapter(Text).validate_python(value)
    except ValidationError:
        with pytest.raises(InvalidInput):
            check_text(value, "text")
    else:
        assert check_text(value, "text") == value
