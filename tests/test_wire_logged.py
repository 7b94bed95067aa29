"""Reading back the log: every stored body reads as the event it records, as the edge reads it."""

import json
from typing import Any

import pytest
from hypothesis import assume, given

from readmit.errors import InvalidEvent
from readmit.events import Event
from readmit.store.encoding import encode
from readmit.wire import event_from_json, parse_event
from readmit.wire.logged import loads, logged_event
from strategies import events, names

ASSERT = {
    "at": "2026-05-01T08:00:00Z",
    "author": "A1",
    "id": "e1",
    "op": "assert",
    "item": {
        "cites": [],
        "depends_on": ["d1"],
        "id": "i1",
        "key": "pickup",
        "kind": "fact",
        "purposes": "*",
        "readers": {"principals": ["org"], "roles": ["driver"]},
        "supports": [],
        "task": "*",
        "text": "Pickup at 9:00 at the Sunrise Hotel.",
        "unconfirmed": False,
        "valid_to": "2026-05-02T00:00:00.250000Z",
    },
}


@given(events(names))
def test_a_logged_event_reads_back_as_the_edge_reads_it(event: Event) -> None:
    body = loads(encode(event).text)
    try:
        edge = parse_event(body, 7)
    except InvalidEvent:  # could never have been logged
        assume(False)

    assert logged_event(body) == edge
    assert event_from_json(body, 7) == edge


def test_the_direct_read_equals_the_edges_read() -> None:
    assert logged_event(ASSERT) == parse_event(ASSERT, 1)
    assert event_from_json(ASSERT, 1) == parse_event(ASSERT, 1)


def _changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.dumps(ASSERT))
    inner = body
    for name in path[:-1]:
        inner = inner[name]
    inner[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("item", "readers"), "*"),  # the edge's wildcard readers: not what the log writes
        (("item", "readers"), {"principals": "*"}),
        (("at",), "2026-05-01T10:00:00+02:00"),  # an offset, from before times were UTC
        (("at",), "2026-05-01T08:00:00.1234567Z"),
        (("at",), "2026-05-01 08:00:00Z"),  # RFC 3339 allows a space, or a lower-case t
        (("at",), "2026-05-01t08:00:00.250000Z"),
        (("item", "kind"), "interface"),
        (("item", "supports"), []),
        (("item", "purposes"), ["*", "plan"]),  # the edge makes it "*"
    ],
)
def test_a_body_of_another_shape_reads_as_the_edge_reads_it(
    path: tuple[str, ...], value: object
) -> None:
    body = _changed(path, value)

    assert event_from_json(body, 1) == parse_event(body, 1)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("item", "extra"), 1),
        (("item", "supports"), "*"),
        (("item", "kind"), "obligation"),
        (("item", "unconfirmed"), 0),
        (("item", "valid_to"), 1714550400),
        (("item", "depends_on"), ["d1", 2]),
        (("item", "readers", "roles"), []),
        (("item", "text"), " "),
        (("op",), "explode"),
        (("at",), "2026-05-01x08:00:00Z"),  # Python's ISO reader takes any separator
        (("at",), "2026-W18-5T08:00:00Z"),  # and week dates
        (("at",), "2026-05-01T08:00:00,250000Z"),
    ],
)
def test_a_body_the_edge_refuses_is_not_read_directly(path: tuple[str, ...], value: object) -> None:
    body = _changed(path, value)

    assert logged_event(body) is None
    with pytest.raises(ValueError, match="e1"):
        event_from_json(body, 1)


def test_a_lone_surrogate_is_read_by_the_json_module() -> None:
    assert loads(json.dumps({"text": "\ud800"})) == {"text": "\ud800"}
    assert loads('{"text": "\\u00e9\\ud83d\\ude00"}') == {"text": "é😀"}


def test_a_body_with_an_offset_time_and_a_long_id_is_read_as_logged() -> None:
    """Times were logged with an offset (``+00:00``) before they were written in UTC: such a
    body went to the edge, whose names hold 200 characters, and an id a library caller made
    longer failed every read of the log (a review)."""
    body = _changed(("at",), "2026-05-01T08:00:00+00:00")
    body["item"]["id"] = "i" * 300

    read = event_from_json(body, 1)

    assert read == logged_event(_changed(("item", "id"), "i" * 300))
    assert read.at.utcoffset() is not None


@pytest.mark.parametrize("at", ["2026-05-01T08:00:00+00:60", "2026-05-01T08:00:00-05:75"])
def test_an_offset_of_sixty_minutes_or_more_is_no_time(at: str) -> None:
    """Python reads ``+00:60`` as an hour: the direct read took what the edge refuses."""
    body = _changed(("at",), at)

    assert logged_event(body) is None
    with pytest.raises(ValueError, match="e1"):
        event_from_json(body, 1)
