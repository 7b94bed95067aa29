"""A refused event in a batch is named by its position, ``events[i]``, and by the field at fault.

Ids the sender never wrote (the server's ``ev-…``, or the stored ``<agent>/<id>``) are
no way to find an event; its position in the batch it sent always is.
"""

import tracemalloc
from typing import Any

import httpx
import pytest

from readmit.clock import format_time, now
from readmit.errors import PayloadTooLarge
from readmit.service.limits import Limits, check_strings
from servicekit import Team

AT = "2026-05-01T08:00:00Z"
HINT = " (a bare id is your own; name a teammate's as AUTHOR/ID, as /v1/state shows it)"


def note(item_id: str, text: str = "A fact.", **more: Any) -> dict[str, Any]:
    return {"op": "assert", "author": "A2", "item": {"id": item_id, "text": text}, **more}


def send(client: httpx.Client, team: Team, *events: dict[str, Any]) -> httpx.Response:
    return client.post("/v1/events", json={"events": list(events)}, headers=team.auth("A2"))


def test_an_invalid_event_is_named_by_its_position_and_field(
    client: httpx.Client, team: Team
) -> None:
    response = send(client, team, note("a"), note("b"), note("c", text=""))

    error = response.json()
    assert response.status_code == 422
    assert error["code"] == "invalid_event"
    assert error["details"]["index"] == 2
    assert error["details"]["fields"] == ["item.text"]
    assert error["details"]["event_id"] is None  # it was sent without one
    assert error["message"].startswith("events[2]: item.text: ")
    assert "ev-" not in error["message"]  # no id the sender never saw


def test_an_event_with_its_own_id_is_named_by_id_and_position(
    client: httpx.Client, team: Team
) -> None:
    response = send(client, team, note("a"), {**note("b"), "id": "mine", "colour": "red"})

    error = response.json()
    assert error["details"] == {"event_id": "A2/mine", "index": 1, "fields": ["colour"]}
    assert error["message"] == "event 'A2/mine' (events[1]): colour: unknown field"


def test_an_id_that_is_no_name_is_refused_by_position_and_never_echoed(
    client: httpx.Client, team: Team
) -> None:
    """A lone surrogate in an event's id was echoed back in the error: a 500, as no JSON
    answer can hold it."""
    body = '{"events": [{"op": "assert", "id": "e\\ud800", "author": "A2", '
    body += '"item": {"id": "x", "text": "t"}}]}'

    response = client.post(
        "/v1/events",
        content=body,
        headers={**team.auth("A2"), "Content-Type": "application/json"},
    )

    assert response.status_code == 422, response.text
    error = response.json()
    assert error["details"]["event_id"] is None
    assert error["details"]["fields"] == ["id"]
    assert error["message"].startswith("events[0]: id: ")


def test_every_field_at_fault_is_listed(client: httpx.Client, team: Team) -> None:
    bad = {"op": "assert", "author": "", "item": {"id": "x", "text": "t", "kind": "rumour"}}

    details = send(client, team, bad).json()["details"]

    assert (details["index"], details["fields"]) == (0, ["author", "item.kind"])


def test_an_event_the_store_refuses_is_located_in_the_batch(
    client: httpx.Client, team: Team
) -> None:
    revoke = {"op": "revoke", "author": "A2", "target": "nothing", "why": "gone"}

    response = send(client, team, note("a"), note("b"), revoke)

    error = response.json()
    assert error["details"] == {"event_id": None, "index": 2, "fields": ["target"]}
    assert error["message"] == "events[2]: unknown target item 'A2/nothing'" + HINT


SOURCE = {"id": "a", "text": "A source."}
REVOKE_A = {"op": "revoke", "author": "A2", "target": "a", "why": "gone"}


def _obligation(obligation_id: str, role: str = "booking") -> dict[str, Any]:
    frontier = {"id": f"{obligation_id}-f", "text": "Open."}
    said = {"id": obligation_id, "text": "Book it.", "role": role, "requires": ["x"]}
    return {"op": "obligation", "author": "A2", "obligation": {**said, "frontier": frontier}}


@pytest.mark.parametrize(
    ("events", "field"),
    [
        ([note("a"), note("a")], "item.id"),
        ([note("a"), {"op": "evidence", "author": "A2", "source": SOURCE}], "source.id"),
        ([note("a"), _obligation("a")], "obligation.id"),
        ([note("a"), _obligation("o", role="partner")], "obligation.role"),
        ([note("a"), {"op": "resolve", "author": "A2", "target": "o"}], "target"),
        ([note("a"), REVOKE_A, REVOKE_A], "target"),
        ([note("a"), note("x/y")], "item.id"),
        ([note("a"), {**note("b"), "id": "x/y"}], "id"),
        ([note("a"), _obligation("o/p")], "obligation.id"),
    ],
    ids=[
        "item id",
        "source id",
        "obligation id",
        "role",
        "resolve",
        "revoked twice",
        "item id in another namespace",
        "event id in another namespace",
        "obligation id in another namespace",
    ],
)  # fmt: skip
def test_an_event_the_store_refuses_names_the_field_at_fault(
    client: httpx.Client, team: Team, events: list[dict[str, Any]], field: str
) -> None:
    """The store's own refusals (an id taken, a target or role it does not know) say
    which field, as the schema's do (a review's finding: ``fields`` was empty)."""
    error = send(client, team, *events).json()

    assert error["code"] == "invalid_event"
    assert (error["details"]["index"], error["details"]["fields"]) == (len(events) - 1, [field])


LATER = "2030-01-01T00:00:00Z"
LABEL = {"label": "x" * 20_000}
OBLIGATION = {"id": "o", "text": "t", "role": "booking", "requires": [LABEL]}


@pytest.mark.parametrize(
    ("event", "status", "field"),
    [
        (note("n", text="x\x00y"), 422, "item.text"),
        (note("n", text="x" * 20_000), 413, "item.text"),
        (note("n", item={"id": "n", "text": "t", "x\x00": 1}), 422, "item"),
        ({"op": "open_obligation", "author": "A2", "obligation": OBLIGATION}, 413,
         "obligation.requires.0.label"),
        ({**note("n"), "author": "A1"}, 403, "author"),
        ({**note("n"), "at": LATER}, 422, "at"),
        (note("n", item={"id": "n", "text": "t", "valid_to": "9999-12-31T23:00:00-14:00"}),
         422, "item.valid_to"),
    ],
    ids=["NUL", "long text", "NUL in a key", "long label", "another author", "clock skew",
         "outside the calendar"],
)  # fmt: skip
def test_a_refusal_of_another_class_names_the_event_and_field_too(
    client: httpx.Client, team: Team, event: dict[str, Any], status: int, field: str
) -> None:
    """Before, ``details`` was null for these, and a NUL or a long string was named by its
    event alone (a review's finding)."""
    first = {**note("a"), "at": format_time(now())} if event.get("at") else note("a")
    sent = {**event, "id": "mine"}

    response = send(client, team, first, sent)

    error = response.json()
    assert response.status_code == status
    assert error["details"] == {"event_id": "A2/mine", "index": 1, "fields": [field]}
    assert error["message"].startswith("event 'A2/mine' (events[1]): ")
    assert field in error["message"] or field == "author"


@pytest.mark.parametrize(
    "inside",
    ['{"k\\ud800": "LONG"}', '{"x": {"\\udfff": ["LONG"]}}', '{"k\\ud800": "a\\u0000"}'],
    ids=["key", "nested key", "key beside a NUL"],
)
def test_a_refused_string_under_a_key_no_answer_can_hold_is_still_a_4xx(
    client: httpx.Client, team: Team, inside: str
) -> None:
    """A lone surrogate in a key went into the message and ``fields``: a 500 (a review's
    finding). A key that is no plain name is shown quoted, escaped and cut."""
    item = inside[1:-1].replace("LONG", "x" * 20_000)
    body = '{"events": [{"op": "assert", "id": "e\\ud800", "author": "A2", '
    body += f'"item": {{"id": "n", "text": "t", {item}}}}}]}}'

    response = client.post(
        "/v1/events", content=body, headers={**team.auth("A2"), "Content-Type": "application/json"}
    )

    assert response.status_code in (413, 422), response.text
    error = response.json()
    assert error["details"]["event_id"] is None  # the id cannot be stored either
    assert "\\ud" in error["details"]["fields"][0] or error["details"]["fields"] == ["item"]


def test_finding_a_refused_string_holds_no_copy_of_the_body_per_value() -> None:
    """Each value's path was made up front: a body of 4 MB could take gigabytes (a
    review's finding, 1 MB more for each number under a 16,000-character key)."""
    body = {"k" * 1_000: [0] * 100_000, "item": {"text": "x" * 2_000}}
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge) as refused:
            check_strings(body, 1_500, "events[0]")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < 1_000_000  # about the depth of the walk, not its size (100 MB before)
    assert refused.value.located == {"fields": ["item.text"]}


@pytest.mark.parametrize("given", ["A1/ev9", "A2/x/y", "x" * 199])
def test_an_id_that_cannot_be_stored_is_not_given_back_as_the_events(
    client: httpx.Client, team: Team, given: str
) -> None:
    """docs/reason-codes.md: ``event_id`` is null for an id that cannot be stored (a review
    found it given back as sent, so A2's refused event read as A1's)."""
    error = send(client, team, {**note("n"), "id": given}).json()

    assert error["details"]["event_id"] is None
    assert error["message"].startswith("events[0]: ")


@pytest.mark.parametrize(
    ("key", "shown"),
    [("a.b", "item.'a.b'"), ("0", "item.'0'"), ("", "item.''"), ("k" * 50, f"item.'{'k' * 40}'…")],
)
def test_an_unknown_key_that_is_no_plain_name_is_shown_as_refused_strings_are(
    client: httpx.Client, team: Team, key: str, shown: str
) -> None:
    """One way to write a key in a path, whatever refuses it (a review found an unknown
    field's key given back raw, a refused string's quoted)."""
    unknown = send(client, team, note("n", item={"id": "n", "text": "t", key: 1})).json()
    nul = send(client, team, note("n", item={"id": "n", "text": "t", key: "\x00"})).json()

    assert unknown["details"]["fields"] == [shown]
    assert nul["details"]["fields"] == [shown]


def test_a_bare_premise_or_citation_that_names_nothing_gets_the_hint(
    client: httpx.Client, team: Team
) -> None:
    premise = note("b", item={"id": "b", "text": "t", "depends_on": ["gone"]})
    cited = note("c", item={"id": "c", "text": "t", "cites": ["src"]})

    assert send(client, team, premise).json()["message"] == (
        "events[0]: depends_on names unknown item 'A2/gone'" + HINT
    )
    assert send(client, team, cited).json()["message"] == (
        "events[0]: cites missing evidence 'A2/src'" + HINT
    )
    assert send(client, team, premise).json()["details"]["fields"] == ["item.depends_on"]
    assert send(client, team, cited).json()["details"]["fields"] == ["item.cites"]


def test_a_teammates_reference_that_names_nothing_gets_no_hint(
    client: httpx.Client, team: Team
) -> None:
    revoke = {"op": "revoke", "author": "A2", "target": "A1/nothing", "why": "gone"}

    message = send(client, team, revoke).json()["message"]

    assert message == "events[0]: unknown target item 'A1/nothing'"


def test_a_repeated_id_is_named_at_its_second_place(client: httpx.Client, team: Team) -> None:
    response = send(client, team, {**note("a"), "id": "e"}, note("b"), {**note("c"), "id": "e"})

    error = response.json()
    assert error["details"] == {"event_id": "A2/e", "index": 2, "fields": ["id"]}
    assert "(events[0])" in error["message"]


def test_an_agent_action_in_a_batch_is_named_by_position(client: httpx.Client, team: Team) -> None:
    response = send(client, team, note("a"), {"op": "depart", "agent": "A2"})

    assert response.json()["details"]["index"] == 1
    assert (
        response.json()["message"]
        == "events[1]: op 'depart' has its own endpoint, POST /v1/depart (MCP: the depart tool)"
    )


def test_an_event_authored_by_another_agent_is_named_by_position(
    client: httpx.Client, team: Team
) -> None:
    response = send(client, team, note("a"), {**note("b"), "author": "A1"})

    assert response.status_code == 403
    assert response.json()["message"].startswith("events[1]: agent 'A2' may only record")


def test_an_event_dated_too_far_ahead_is_named_by_position(
    client: httpx.Client, team: Team
) -> None:
    team.clock.set(AT)

    response = send(client, team, note("a", at=AT), note("b", at="2026-05-02T08:00:00Z"))

    assert response.json()["code"] == "clock_skew"
    assert response.json()["message"].startswith("events[1]: at 2026-05-02T08:00:00Z")


def test_a_string_over_the_limit_is_named_by_position(client: httpx.Client, team: Team) -> None:
    team.service.limits = Limits(max_text_chars=10)

    response = send(client, team, note("a"), note("b", text="x" * 11))

    assert response.status_code == 413
    assert response.json()["message"].startswith("events[1]: ")


def test_a_new_id_that_is_only_the_agents_prefix_is_refused(
    client: httpx.Client, team: Team
) -> None:
    response = send(client, team, note("A2/"))

    assert response.status_code == 422
    assert response.json()["message"] == "events[0]: new id 'A2/': give an id after A2/"
