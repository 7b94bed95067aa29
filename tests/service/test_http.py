"""The HTTP service end to end: the travel case, auth, errors, isolation, OpenAPI."""

import inspect
import json
import re
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from builders import spent
from readmit.errors import StoreError
from readmit.examples.travel import travel_scenario
from readmit.service import health as health_check
from readmit.service.answers import UNAVAILABLE
from readmit.service.app import create_app
from readmit.service.operations import Service
from readmit.strict_json import MAX_DEPTH
from readmit.testing import UnavailableEmbedder
from servicekit import Team, play

NOTE = {
    "at": "2026-05-01T08:00:00Z",
    "op": "assert",
    "author": "A2",
    "item": {"id": "h0", "text": "Sunrise Hotel is booked.", "key": "hotel"},
}


def events(client: httpx.Client, team: Team, agent: str = "A2") -> list[dict[str, Any]]:
    response = client.get("/v1/state", headers=team.auth(agent))
    assert response.status_code == 200
    items: list[dict[str, Any]] = response.json()["items"]
    return items


@pytest.mark.loopback
def test_the_travel_case_over_http(client: httpx.Client, team: Team) -> None:
    first, second = play(client, team, travel_scenario())

    blocked, issued = first.json(), second.json()
    assert blocked["outcome"] == "blocked"
    assert blocked["coverage"] == {"obligations": 0.5, "critical": 0.75}
    assert blocked["view"] is None
    assert issued["outcome"] == "issued"
    assert set(issued["items"]) == {
        "A1/o_h",
        "A1/f_h",
        "A4/o_t",
        "A4/f_t",
        "A2/h1",
        "A4/t1",
        "A4/p1",
        "A1/c",
    }
    assert [m["id"] for m in issued["readmitted"]] == ["A1/x_quiet"]
    check = client.post("/v1/verify", json={"view": issued["view"], "at": "2026-05-03T14:30:00Z"})
    assert check.json() == {"valid": True, "items": issued["items"]}


def test_an_embedder_that_is_down_withholds_the_return_view(
    client: httpx.Client, team: Team
) -> None:
    team.service.embedder = UnavailableEmbedder()

    _, second = play(client, team, travel_scenario())

    issued = second.json()
    assert issued["outcome"] == "blocked"
    assert issued["view"] is None
    reasons = {e["item"]: e["reason"] for e in issued["excluded"]}
    assert reasons["A1/c"] == "verifier_unavailable"


def test_an_agent_never_sees_what_it_may_not_read(client: httpx.Client, team: Team) -> None:
    _, second = play(client, team, travel_scenario())

    body = second.text + client.get("/v1/state", headers=team.auth("A1")).text
    decision = second.json()["decision"]
    body += client.get(f"/v1/decisions/{decision}", headers=team.auth("A1")).text
    assert "n1" not in body
    assert "agency" not in body.lower()
    assert not re.search(r"\bevt14\b", body)  # the event that recorded the agency's note


def test_private_memories_stay_private(client: httpx.Client, team: Team) -> None:
    play(client, team, travel_scenario())

    mine = client.get("/v1/memories", headers=team.auth("A1")).json()["memories"]
    theirs = client.get("/v1/memories", headers=team.auth("A2")).json()["memories"]

    assert {m["id"] for m in mine} == {"A1/x_quiet", "A1/x_desk", "A1/x_door"}
    assert theirs == []


def test_decisions_of_other_agents_are_not_found(client: httpx.Client, team: Team) -> None:
    _, second = play(client, team, travel_scenario())
    decision = second.json()["decision"]

    response = client.get(f"/v1/decisions/{decision}", headers=team.auth("A2"))

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert client.get("/v1/decisions", headers=team.auth("A2")).json() == {
        "decisions": [],
        "next": None,
    }


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({}, "send your agent key as 'Authorization: Bearer <key>'"),
        (
            {"Authorization": "Bearer rmk_wrong"},
            "that agent key is not known to this store (an operator makes one with 'readmit "
            "keys create WORKSPACE AGENT' against this same store: its --db or READMIT_DB)",
        ),
        (
            {"Authorization": "Bearer signing-key-0123"},
            "that agent key is not known to this store (an operator makes one with 'readmit "
            "keys create WORKSPACE AGENT' against this same store: its --db or READMIT_DB; "
            "an agent key starts with rmk_)",
        ),
        ({"Authorization": "Basic QTE6eA=="}, "send your agent key as"),
    ],
)
@pytest.mark.loopback
def test_requests_without_a_valid_key_are_401(
    client: httpx.Client, headers: dict[str, str], says: str
) -> None:
    response = client.get("/v1/state", headers=headers)

    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"
    assert says in response.json()["message"]


def test_an_agent_cannot_author_for_another(client: httpx.Client, team: Team) -> None:
    response = client.post("/v1/events", json={"events": [NOTE]}, headers=team.auth("A1"))

    assert response.status_code == 403
    assert response.json()["code"] == "forbidden"
    assert events(client, team) == []


def test_a_bad_batch_is_422_and_stores_nothing(client: httpx.Client, team: Team) -> None:
    bad = {
        "id": "bad",
        "op": "revoke",
        "author": "A2",
        "target": "nothing",
        "why": "x",
        "at": "2026-05-01T09:00:00Z",
    }

    response = client.post("/v1/events", json={"events": [NOTE, bad]}, headers=team.auth("A2"))

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_event"
    assert response.json()["details"] == {"event_id": "A2/bad", "index": 1, "fields": ["target"]}
    assert events(client, team) == []


_INVISIBLE = "item.text: must say something (it is empty, blank or invisible)"


@pytest.mark.parametrize(
    ("text", "said"),
    [("  ", "the text is blank"), ("\u202e", _INVISIBLE), ("\u200b\u2060 ", _INVISIBLE)],
    ids=["blank", "rlo", "zw"],
)
def test_a_blank_statement_is_422_and_stores_nothing(
    client: httpx.Client, team: Team, text: str, said: str
) -> None:
    """Only invisible characters (a lone U+202E) were stored as a statement (a probe)."""
    blank = {**NOTE, "item": {"id": "h1", "text": text, "key": "hotel2"}}

    response = client.post("/v1/events", json={"events": [NOTE, blank]}, headers=team.auth("A2"))

    assert response.status_code == 422
    assert said in response.json()["message"]
    assert events(client, team) == []


@pytest.mark.parametrize(
    "body",
    [
        {"events": []},
        {"events": [{"op": "assert"}]},
        {"events": "nope"},
        {"wrong": 1},
    ],
)
def test_malformed_bodies_are_422_with_a_code(
    client: httpx.Client, team: Team, body: dict[str, Any]
) -> None:
    response = client.post("/v1/events", json=body, headers=team.auth("A2"))

    assert response.status_code == 422
    assert response.json()["code"] in {"invalid_request", "invalid_event"}
    assert events(client, team) == []


@pytest.mark.loopback
def test_invalid_json_is_422(client: httpx.Client, team: Team) -> None:
    response = client.post(
        "/v1/events",
        content=b"{not json",
        headers={**team.auth("A2"), "Content-Type": "application/json"},
    )

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"


def test_events_default_to_now_and_get_epochs(client: httpx.Client, team: Team) -> None:
    note = {k: v for k, v in NOTE.items() if k != "at"}

    response = client.post("/v1/events", json={"events": [note]}, headers=team.auth("A2"))

    [recorded] = response.json()["recorded"]
    assert recorded["epoch"] == 1
    assert recorded["id"].startswith("ev-")


def test_a_return_before_departing_is_422(client: httpx.Client, team: Team) -> None:
    response = client.post(
        "/v1/return", json={"task": "t", "purpose": "p"}, headers=team.auth("A1")
    )

    assert response.status_code == 422
    assert response.json()["message"] == "agent 'A1' has not departed: depart first"


def test_a_tampered_view_does_not_verify(client: httpx.Client, team: Team) -> None:
    _, second = play(client, team, travel_scenario())
    view = second.json()["view"]
    view["items"][0]["text"] = "Skip the hotel."

    check = client.post("/v1/verify", json={"view": view, "at": "2026-05-03T14:30:00Z"})

    assert check.status_code == 200
    assert check.json()["valid"] is False


def test_verify_needs_no_store_so_it_reads_not_the_stores_clock(
    client: httpx.Client, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By the database's clock, /v1/verify answered 503 while the database was down, and
    waited out its timeout while it hung (a review): a server checks expiry by its
    machine's clock unless given one."""
    _, second = play(client, team, travel_scenario())
    asked: list[str] = []

    def down() -> datetime:
        asked.append("now")
        raise StoreError("PostgreSQL: the server is down")

    monkeypatch.setattr(team.service.store, "now", down)
    service = Service(team.service.store, signer=team.service.signer, verifier=None)
    check = service.verify(second.json()["view"])

    assert asked == []
    assert check["valid"] is False
    assert str(check.get("problem")).startswith("not valid at 20")  # today, by this machine


def test_a_view_sent_unwrapped_to_verify_is_told_how_to_send_it(
    client: httpx.Client, team: Team
) -> None:
    _, second = play(client, team, travel_scenario())

    bare = client.post("/v1/verify", json=second.json()["view"])
    whole = client.post("/v1/verify", json=second.json())
    empty = client.post("/v1/verify", json={})

    assert bare.status_code == 422
    assert bare.json()["message"] == 'send {"view": <the view>}: this body is a view itself'
    assert whole.json()["message"] == 'send {"view": <its view>}: this body is a return\'s answer'
    assert (
        empty.json()["message"] == "the request does not match the API schema: view: Field required"
    )


def test_a_view_with_a_repeated_key_does_not_verify(client: httpx.Client, team: Team) -> None:
    _, second = play(client, team, travel_scenario())
    view = json.dumps(second.json()["view"])
    doubled = '{"view": ' + view[:-1] + ', "items": []}, "at": "2026-05-03T14:30:00Z"}'

    check = client.post("/v1/verify", content=doubled, headers={"Content-Type": "application/json"})

    assert check.status_code == 422
    assert check.json()["code"] == "invalid_input"
    assert check.json()["message"] == "JSON object repeats the key 'items'"


def test_health_reports_a_damaged_store(
    client: httpx.Client, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health_check, "FRESH_S", 0.0)  # each call checks (else within 2 s of it)
    monkeypatch.setattr(health_check, "PER_CHECK_S", 0)
    assert client.get("/health").status_code == 200
    team.service.store.conn.execute("DELETE FROM _readmit_migrations WHERE name = 'm003_judgments'")

    health = client.get("/health")

    assert health.status_code == 503
    assert health.json()["code"] == "store_error"


def test_a_database_error_is_answered_without_the_databases_words(
    client: httpx.Client, team: Team, caplog: pytest.LogCaptureFixture
) -> None:
    """Its text can name the database's host, port and statements, to any caller."""
    team.service.store.conn.execute("ALTER TABLE agent_keys RENAME TO agent_keys_gone")

    refused = client.get("/v1/decisions", headers=team.auth("A1"))  # the key lookup fails

    assert refused.status_code == 503
    assert refused.json() == {"code": "store_error", "message": UNAVAILABLE, "details": None}
    assert "agent_keys" in caplog.text  # the operator's log has it


def test_the_openapi_schema_is_published(client: httpx.Client) -> None:
    schema = client.get("/openapi.json").json()

    assert {
        "/v1/events",
        "/v1/depart",
        "/v1/return",
        "/v1/verify",
        "/v1/decisions",
        "/v1/decisions/{decision_id}",
        "/v1/state",
        "/v1/memories",
    } <= set(schema["paths"])


def test_a_stale_plan_stays_out_after_departing_again_over_http(
    client: httpx.Client, team: Team
) -> None:
    first, _ = play(client, team, travel_scenario())
    assert {e["item"]: e["reason"] for e in first.json()["excluded"]}["A1/p0"] == (
        "implicitly_invalidated"
    )
    headers = team.auth("A1")

    active = {i["id"] for i in events(client, team, "A1")}
    team.clock.set("2026-05-03T15:00:00Z")
    departed = client.post("/v1/depart", json={"at": "2026-05-03T15:00:00Z"}, headers=headers)
    team.clock.set("2026-05-03T15:05:00Z")
    assert "A1/p0" in active
    assert departed.json()["items"] == len(active) - 1  # all but p0 are captured
    again = client.post(
        "/v1/return",
        json={"task": "trip", "purpose": "itinerary", "at": "2026-05-03T15:05:00Z"},
        headers=headers,
    ).json()

    assert again["outcome"] == "issued"
    assert "A1/p0" not in again["items"]
    assert spent(team.service.store, "trip", "A1")["calls"] == 0  # nothing new: nothing to judge


def test_decision_ids_count_only_the_callers_own_decisions(
    client: httpx.Client, team: Team
) -> None:
    for agent in ("A2", "A3", "A1"):
        assert client.post("/v1/depart", json={}, headers=team.auth(agent)).status_code == 200

    ids = [
        client.post(
            "/v1/return", json={"task": "t", "purpose": "p"}, headers=team.auth(agent)
        ).json()["decision"]
        for agent in ("A2", "A3", "A1", "A1")
    ]

    assert ids == [1, 1, 1, 2]
    assert [
        d["id"] for d in client.get("/v1/decisions", headers=team.auth("A1")).json()["decisions"]
    ] == [1, 2]
    assert client.get("/v1/decisions/2", headers=team.auth("A1")).json()["decision"] == 2
    assert client.get("/v1/decisions/2", headers=team.auth("A2")).status_code == 404


def test_a_blocked_return_names_what_is_missing_without_what_the_agent_may_not_read(
    client: httpx.Client, team: Team
) -> None:
    scenario = travel_scenario()
    agency_note = next(e for e in scenario["events"] if e.get("item", {}).get("id") == "n1")
    agency_note["item"]["supports"] = ["d_p"]  # an unreadable item that would cover d_p

    first, _ = play(client, team, scenario)

    blocked = first.json()
    assert blocked["missing"] == [
        {
            "requirement": "d_p",
            "obligations": ["A4/o_t"],
            "critical": True,
            "supported_by_excluded": [
                {"item": "A3/px", "reason": "missing_receipt"},
                {"item": "A1/p0", "reason": "implicitly_invalidated"},
            ],
        }
    ]
    assert [(m["id"], m["reason"]) for m in blocked["withheld_memories"]] == [
        ("A1/x_desk", "view_withheld"),
        ("A1/x_door", "view_withheld"),
        ("A1/x_quiet", "view_withheld"),
    ]
    explained = client.get(f"/v1/decisions/{blocked['decision']}", headers=team.auth("A1"))
    assert explained.json()["missing"] == blocked["missing"]
    assert explained.json()["withheld_memories"] == blocked["withheld_memories"]
    assert "n1" not in first.text + explained.text


def test_an_issued_return_says_why_each_memory_stays_withheld(
    client: httpx.Client, team: Team
) -> None:
    _, second = play(client, team, travel_scenario())

    issued = second.json()
    assert issued["missing"] == []
    assert issued["withheld_memories"] == [
        {
            "id": "A1/x_desk",
            "source": "A2/h0",
            "reason": "source_not_admitted",
            "source_reason": "revoked",
        },
        {
            "id": "A1/x_door",
            "source": "A1/p0",
            "reason": "source_not_admitted",
            "source_reason": "implicitly_invalidated",
        },
    ]


def test_a_departure_may_say_what_its_agent_returns_to(client: httpx.Client, team: Team) -> None:
    store = team.service.store
    said = {"task": "trip", "purpose": "itinerary"}

    first = client.post("/v1/depart", json=said, headers=team.auth("A1"))
    assert store.departed_for("trip", "A1") == ("trip", "itinerary")
    again = client.post("/v1/depart", json={}, headers=team.auth("A1"))

    assert first.status_code == again.status_code == 200
    assert store.departed_for("trip", "A1") is None  # the latest departure said nothing


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"task": "trip"}, "body: give task and purpose together, or neither"),
        ({"purpose": "itinerary"}, "body: give task and purpose together, or neither"),
        ({"task": "", "purpose": "p"}, "task: "),
    ],
)
def test_a_departure_saying_half_of_what_it_returns_to_is_422_and_departs_nothing(
    client: httpx.Client, team: Team, body: dict[str, str], said: str
) -> None:
    response = client.post("/v1/depart", json=body, headers=team.auth("A1"))

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert said in response.json()["message"]
    assert team.service.store.away("trip") == []


def test_a_departure_needs_no_body(client: httpx.Client, team: Team) -> None:
    response = client.post("/v1/depart", headers=team.auth("A1"))

    assert response.status_code == 200
    assert team.service.store.away("trip") == ["A1"]


def test_a_departure_before_the_latest_return_says_how_to_depart(
    client: httpx.Client, team: Team
) -> None:
    headers = team.auth("A1")
    client.post("/v1/depart", json={}, headers=headers).raise_for_status()
    client.post("/v1/return", json={"task": "t", "purpose": "p"}, headers=headers)
    response = client.post("/v1/depart", json={"at": "2026-01-01T00:00:00Z"}, headers=headers)

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_input"
    assert response.json()["message"].endswith("leave `at` out to depart now")
    assert team.service.store.away("trip") == []


@pytest.mark.parametrize("sent", [None, "application/x-www-form-urlencoded", "text/plain"])
def test_a_body_not_sent_as_json_is_refused_saying_so_and_nothing_is_stored(
    client: httpx.Client, team: Team, sent: str | None
) -> None:
    """``curl -d`` sends a form; the answer names the header to send, not pydantic's words."""
    body = json.dumps({"events": [{"op": "assert", "item": {"id": "x1", "text": "Hi."}}]})
    headers = team.auth("A2") | ({"Content-Type": sent} if sent else {})

    r = client.post("/v1/events", content=body, headers=headers)

    assert r.status_code == 422
    assert r.json()["code"] == "invalid_request"
    assert "Content-Type: application/json" in r.json()["message"]
    assert (sent or "no Content-Type") in r.json()["message"]
    assert events(client, team) == []


@pytest.mark.parametrize("sent", ["application/json", "application/merge-patch+json; q=1"])
def test_a_json_body_that_is_no_object_is_refused_with_the_schemas_words(
    client: httpx.Client, team: Team, sent: str
) -> None:
    r = client.post("/v1/events", content="[1]", headers=team.auth("A2") | {"Content-Type": sent})

    assert r.status_code == 422
    assert "Content-Type" not in r.json()["message"]


@pytest.mark.parametrize("sent", [{"json": {}}, {}], ids=["empty object", "no body"])
def test_a_return_without_task_and_purpose_returns_to_those_its_departure_named(
    client: httpx.Client, team: Team, sent: dict[str, Any]
) -> None:
    headers = team.auth("A1")
    named = {"task": "trip", "purpose": "itinerary"}
    client.post("/v1/depart", json=named, headers=headers).raise_for_status()

    response = client.post("/v1/return", headers=headers, **sent)

    assert response.status_code == 200, response.text
    view = response.json()["view"]
    assert (view["task"], view["purpose"]) == ("trip", "itinerary")
    explained = client.get("/v1/decisions/1", headers=headers).json()
    for shown in (response.json(), explained):  # said even where no view was issued
        assert (shown["task"], shown["purpose"]) == ("trip", "itinerary")


@pytest.mark.parametrize(
    ("body", "code", "said"),
    [
        (
            {},
            "invalid_input",
            'give task and purpose ("*" for any): your latest departure named none',
        ),
        ({"task": "trip"}, "invalid_request", "give task and purpose together, or neither"),
    ],
)
def test_a_return_naming_no_task_after_a_departure_that_named_none_says_what_to_give(
    client: httpx.Client, team: Team, body: dict[str, str], code: str, said: str
) -> None:
    headers = team.auth("A1")
    client.post("/v1/depart", json={}, headers=headers).raise_for_status()

    response = client.post("/v1/return", json=body, headers=headers)

    assert response.status_code == 422
    assert response.json()["code"] == code
    assert said in response.json()["message"]
    assert team.service.store.away("trip") == ["A1"]  # still away: nothing was decided


@pytest.mark.parametrize(
    ("method", "path", "status", "code", "said"),
    [
        ("POST", "/v1/event", 404, "not_found", "no such path: POST /v1/event (did you mean"),
        ("POST", "/v1/events/", 404, "not_found", "did you mean /v1/events? the API is listed"),
        ("GET", "/health/", 404, "not_found", "no such path: GET /health/ (did you mean /health?"),
        ("GET", "/v1/nothing", 404, "not_found", "no such path: GET /v1/nothing (the API is"),
        ("GET", "/v1/return", 405, "method_not_allowed", "this path takes POST"),
        ("DELETE", "/v1/memories", 405, "method_not_allowed", "this path takes GET, POST"),
    ],
)
def test_a_path_or_method_the_api_lacks_is_answered_in_the_error_shape(
    client: httpx.Client, team: Team, method: str, path: str, status: int, code: str, said: str
) -> None:
    response = client.request(method, path, headers=team.auth("A1"))

    assert response.status_code == status
    assert set(response.json()) == {"code", "message", "details"}
    if status == 405:
        assert response.headers["allow"] == said.removeprefix("this path takes ")
    assert response.json()["code"] == code
    assert said in response.json()["message"]


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        ("/v1/events", "{'events': []}", "the body is not valid JSON: Expecting property name"),
        ("/v1/events", "[]", 'the body must be one JSON object, {"events": [event, ...]}'),
        ("/v1/memories", '[{"id": "m"}]', 'one JSON object, {"id", "text", "source"}'),
        (
            "/v1/events",
            '{"op": "assert", "author": "A1", "item": {"id": "i", "text": "T."}}',
            'the body must be one JSON object, {"events": [event, ...]} '
            "(it held 'op', 'author', 'item')",
        ),
    ],
)
def test_a_body_that_is_not_one_json_object_is_told_what_to_send(
    client: httpx.Client, team: Team, path: str, body: str, said: str
) -> None:
    headers = team.auth("A1") | {"Content-Type": "application/json"}

    response = client.post(path, content=body, headers=headers)

    assert response.status_code == 422
    assert said in response.json()["message"]


def test_a_body_of_the_right_shape_with_an_unknown_field_is_not_told_of_another_shape(
    client: httpx.Client, team: Team
) -> None:
    """Only a body holding none of the route's required fields is of another shape: a
    memory with its id and text but ``note`` for ``source`` is told that source is missing,
    not that it must be one JSON object (it is one) holding 'note'."""
    headers = team.auth("A1") | {"Content-Type": "application/json"}
    body = '{"id": "m", "text": "T.", "note": "x"}'

    response = client.post("/v1/memories", content=body, headers=headers)

    assert response.status_code == 422
    message = response.json()["message"]
    assert "must be one JSON object" not in message
    assert message.endswith("source: Field required")


@pytest.mark.parametrize("given", ["h0", "nothing"])
def test_a_bare_reference_that_names_nothing_of_yours_says_how_to_name_a_teammates(
    client: httpx.Client, team: Team, given: str
) -> None:
    """The same hint whether or not a teammate has such an item: it probes nothing."""
    hotel = {"op": "assert", "author": "A2", "item": {"id": "h0", "text": "Sunrise Hotel."}}
    client.post("/v1/events", json={"events": [hotel]}, headers=team.auth("A2"))
    revoke = {"op": "revoke", "author": "A1", "target": given, "why": "cancelled"}

    response = client.post("/v1/events", json={"events": [revoke]}, headers=team.auth("A1"))

    assert response.status_code == 422
    message = response.json()["message"]
    assert f"unknown target item 'A1/{given}'" in message
    assert "name a teammate's as AUTHOR/ID, as /v1/state shows it" in message


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        (
            "/v1/events",
            {"evnets": []},
            "evnets: Extra inputs are not permitted (did you mean 'events'?)",
        ),
        ("/v1/memories", {"id": "m", "txt": "x", "source": "h0"}, "(did you mean 'text'?)"),
        ("/v1/verify", {"veiw": {}}, "veiw: Extra inputs are not permitted (did you mean 'view'?)"),
    ],
)
def test_a_misspelled_required_field_says_what_was_meant_not_only_that_it_is_missing(
    client: httpx.Client, team: Team, path: str, body: dict[str, Any], said: str
) -> None:
    response = client.post(path, json=body, headers=team.auth("A1"))

    assert response.status_code == 422
    assert response.json()["message"].endswith(said)


def test_a_misspelled_body_field_says_what_was_probably_meant(
    client: httpx.Client, team: Team
) -> None:
    headers = team.auth("A1")
    client.post("/v1/depart", json={}, headers=headers).raise_for_status()

    response = client.post("/v1/return", json={"taks": "trip", "purpose": "p"}, headers=headers)

    assert response.status_code == 422
    assert response.json()["message"].endswith(
        "taks: Extra inputs are not permitted (did you mean 'task'?)"
    )
    assert team.service.store.away("trip") == ["A1"]


def test_a_return_with_no_task_by_an_agent_that_never_departed_says_to_depart(
    client: httpx.Client, team: Team
) -> None:
    response = client.post("/v1/return", headers=team.auth("A1"))

    assert response.status_code == 422
    assert response.json()["message"] == "agent 'A1' has not departed: depart first"


def test_a_default_return_takes_the_task_of_the_departure_it_is_decided_against(
    client: httpx.Client, team: Team
) -> None:
    """A departure dated ahead (within the skew) is not yet the one a return uses."""
    headers = team.auth("A1")
    first = {"task": "t1", "purpose": "p1"}
    client.post("/v1/depart", json=first, headers=headers).raise_for_status()
    ahead = (team.clock() + timedelta(minutes=4)).isoformat()
    later = {"task": "t2", "purpose": "p2", "at": ahead}
    client.post("/v1/depart", json=later, headers=headers).raise_for_status()

    response = client.post("/v1/return", headers=headers)

    assert (response.json()["task"], response.json()["purpose"]) == ("t1", "p1")


def test_verify_reads_any_content_type_so_a_list_is_told_the_object_to_send(
    client: httpx.Client,
) -> None:
    response = client.post("/v1/verify", content="[1]", headers={"Content-Type": "text/plain"})

    assert response.status_code == 422
    assert response.json()["message"].endswith('one JSON object, {"view": <the view>}')


@pytest.mark.parametrize("path", ["/v1/events", "/v1/memories", "/v1/verify"])
@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"events": ["\xff"]}', "the body is refused: not valid UTF-8 at byte 13"),
        ('{"events": []}'.encode("utf-16"), "the body is refused: not valid UTF-8 at byte 0"),
        (
            '{"view": {}}'.encode("utf-16-le"),
            "the body is not valid JSON: Expecting property name enclosed in double quotes "
            "(at character 1)",
        ),
        (
            '\ufeff{"events": []}'.encode(),
            "the body is refused: it starts with a byte order mark: send UTF-8 JSON without one",
        ),
    ],
    ids=["not UTF-8", "UTF-16", "UTF-16 without a BOM", "a UTF-8 BOM"],
)
def test_a_body_that_is_not_utf8_json_is_refused_alike_on_every_route(
    client: httpx.Client, team: Team, path: str, body: bytes, said: str
) -> None:
    """Body routes read UTF-16 and a BOM (FastAPI's reading), which /v1/verify refused."""
    headers = team.auth("A1") | {"Content-Type": "application/json"}

    response = client.post(path, content=body, headers=headers)

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request")
    assert response.json()["message"] == said


@pytest.mark.parametrize("path", ["/v1/events", "/v1/verify"])
@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 3000])
def test_a_body_nested_too_deep_to_read_says_so(
    client: httpx.Client, team: Team, levels: int, path: str
) -> None:
    """It was told to send UTF-8 JSON, which it did (a newcomer's finding); then that at most
    64 levels are ever needed, though some 900 were read (a review's). /v1/verify called
    such a body, valid JSON, "not valid JSON"."""
    headers = team.auth("A1") | {"Content-Type": "application/json"}
    deep = '{"events": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"

    response = client.post(path, content=deep, headers=headers)

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert response.json()["message"] == (
        f"the body nests deeper than {MAX_DEPTH} levels: JSON is read no deeper here"
    )


@pytest.mark.parametrize("path", ["/v1/events", "/v1/verify"])
def test_a_body_nested_as_deep_as_is_read_is_read(
    client: httpx.Client, team: Team, path: str
) -> None:
    headers = team.auth("A1") | {"Content-Type": "application/json"}
    deep = '{"events": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"

    response = client.post(path, content=deep, headers=headers)

    assert response.json()["message"].startswith("the request does not match the API schema")


@pytest.mark.parametrize("path", ["/v1/events", "/v1/memories", "/v1/verify"])
def test_a_number_too_long_to_read_is_an_invalid_request_on_every_route_as_bad_json_is(
    client: httpx.Client, team: Team, path: str
) -> None:
    """It was ``invalid_input`` on the routes FastAPI reads, ``invalid_request`` on /v1/verify."""
    headers = team.auth("A1") | {"Content-Type": "application/json"}

    response = client.post(path, content='{"view": ' + "9" * 5000 + "}", headers=headers)

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request")


@pytest.mark.parametrize("path", ["/v1/events", "/v1/verify"])
def test_a_body_that_is_not_json_is_an_invalid_request_on_every_route(
    client: httpx.Client, team: Team, path: str
) -> None:
    headers = team.auth("A1") | {"Content-Type": "application/json"}

    response = client.post(path, content="{bad", headers=headers)

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert response.json()["message"] == (  # once: not "not valid JSON: not JSON: ..."
        "the body is not valid JSON: Expecting property name enclosed in double quotes "
        "(at character 1)"
    )


def test_refusals_are_answered_on_the_event_loop_not_in_a_thread(team: Team) -> None:
    """A sync handler takes a thread of the pool the routes share: behind 40 writers stalled
    on a database that stopped answering, refusals already decided waited up to 40 s for
    one (an operator's probe)."""
    app = create_app(team.service)
    ours = [h for h in app.exception_handlers.values() if h.__module__ == "readmit.service.app"]

    assert len(ours) == 3  # readmit's errors, routing's, and a body that fits no schema
    assert all(inspect.iscoroutinefunction(h) for h in ours)
