"""The published API description: every answer typed, every real answer true to its type."""

from typing import Any

import httpx
import jsonschema_rs
import pytest

from readmit.examples.travel import travel_scenario
from readmit.service.limits import Limits
from servicekit import Team, play

ROUTES = {
    ("get", "/health"),
    ("post", "/v1/events"),
    ("post", "/v1/memories"),
    ("get", "/v1/memories"),
    ("post", "/v1/depart"),
    ("post", "/v1/return"),
    ("post", "/v1/verify"),
    ("get", "/v1/decisions"),
    ("get", "/v1/decisions/{decision_id}"),
    ("get", "/v1/state"),
}


def answers(api: dict[str, Any], status: str = "200") -> dict[tuple[str, str], Any]:
    """The JSON schema of each route's answer with ``status``."""
    return {
        (method, path): op["responses"][status]["content"]["application/json"]["schema"]
        for path, item in api["paths"].items()
        for method, op in item.items()
        if status in op["responses"]
    }


def check(api: dict[str, Any], schema: dict[str, Any], body: Any) -> None:
    """Validate ``body`` against ``schema``, its references resolved in ``api``'s components."""
    jsonschema_rs.Draft202012Validator({**schema, "components": api["components"]}).validate(body)


def test_every_route_answers_with_a_typed_schema(client: httpx.Client) -> None:
    api = client.get("/openapi.json").json()

    typed = answers(api)

    assert set(typed) == ROUTES
    assert all("$ref" in schema for schema in typed.values()), typed
    closed = [api["components"]["schemas"][s["$ref"].split("/")[-1]] for s in typed.values()]
    assert all(s["additionalProperties"] is False for s in closed)


def test_every_real_answer_matches_its_published_schema(client: httpx.Client, team: Team) -> None:
    api = client.get("/openapi.json").json()
    schemas = answers(api)
    blocked, issued = play(client, team, travel_scenario())
    a1 = team.auth("A1")
    view = issued.json()["view"]
    seen = {
        ("post", "/v1/return"): [blocked, issued],
        ("get", "/health"): [client.get("/health")],
        ("get", "/v1/memories"): [client.get("/v1/memories", headers=a1)],
        ("post", "/v1/memories"): [
            client.post("/v1/memories", json={"id": "m", "text": "t", "source": "c"}, headers=a1)
        ],
        ("post", "/v1/events"): [
            client.post(
                "/v1/events",
                json={
                    "events": [{"op": "assert", "author": "A1", "item": {"id": "n", "text": "t"}}]
                },
                headers=a1,
            )
        ],
        ("post", "/v1/depart"): [client.post("/v1/depart", json={}, headers=a1)],
        ("post", "/v1/verify"): [
            client.post("/v1/verify", json={"view": view, "at": "2026-05-03T14:30:00Z"}),
            client.post("/v1/verify", json={"view": {**view, "agent": "A2"}}),
        ],
        ("get", "/v1/decisions"): [client.get("/v1/decisions", headers=a1)],
        ("get", "/v1/decisions/{decision_id}"): [
            client.get(f"/v1/decisions/{n}", headers=a1) for n in (1, 2)
        ],
        ("get", "/v1/state"): [client.get("/v1/state", headers=a1)],
    }

    assert set(seen) == ROUTES
    for route, responses in seen.items():
        for response in responses:
            assert response.status_code == 200, (route, response.text)
            check(api, schemas[route], response.json())


def test_an_error_matches_the_published_error_schema(client: httpx.Client, team: Team) -> None:
    api = client.get("/openapi.json").json()
    schema = api["paths"]["/v1/events"]["post"]["responses"]["422"]["content"]["application/json"]

    response = client.post(
        "/v1/events", json={"events": [{"op": "assert"}]}, headers=team.auth("A1")
    )

    assert response.status_code == 422
    check(api, schema["schema"], response.json())


@pytest.mark.parametrize("number", [1, 2])
def test_a_decision_reads_the_same_when_returned_and_when_explained(
    client: httpx.Client, team: Team, number: int
) -> None:
    returned = play(client, team, travel_scenario())[number - 1].json()

    explained = client.get(f"/v1/decisions/{number}", headers=team.auth("A1")).json()

    assert explained == returned
    assert all(set(m) == {"id", "text", "source", "epoch"} for m in explained["readmitted"])


def test_readmitted_memories_are_shown_whole_both_times(client: httpx.Client, team: Team) -> None:
    _, issued = play(client, team, travel_scenario())

    explained = client.get("/v1/decisions/2", headers=team.auth("A1")).json()

    quiet = {
        "id": "A1/x_quiet",
        "text": "The family cares most about quiet; near the station is fine if quiet.",
        "source": "A1/c",
        "epoch": 5,
    }
    assert issued.json()["readmitted"] == explained["readmitted"] == [quiet]


def test_health_documents_only_the_answers_it_can_give(client: httpx.Client, team: Team) -> None:
    """No key, parameters nor body: never 401, 403, 404, 422 or 429; a body over the
    limit is refused before routing, so 413 it can be."""
    api = client.get("/openapi.json").json()
    team.service.limits = Limits(max_body_bytes=16)

    too_large = client.request("GET", "/health", content=b"x" * 17)

    health = api["paths"]["/health"]["get"]["responses"]
    assert set(health) == {"200", "413", "500", "503"}
    assert too_large.status_code == 413
    check(api, health["413"]["content"]["application/json"]["schema"], too_large.json())
    verify = api["paths"]["/v1/verify"]["post"]["responses"]
    assert set(verify) == {"200", "413", "422", "500"}  # no key, no store
    for path, item in api["paths"].items():
        for op in item.values():
            if path not in ("/health", "/v1/verify"):
                assert {"401", "404", "429", "500", "503"} <= set(op["responses"]), path
