"""A JSON body that repeats a key is refused: ``json.loads`` keeps the last, and whoever reads
the first (a gateway, an audit tool) would see another request than the one stored."""

import httpx

from servicekit import Team

JSON = {"Content-Type": "application/json"}


def test_an_event_naming_its_author_twice_is_refused_and_nothing_is_stored(
    client: httpx.Client, team: Team
) -> None:
    before = len(team.service.store.events("trip"))
    body = (
        '{"events": [{"op": "assert", "author": "A2", "author": "A1", '
        '"item": {"id": "x", "text": "A fact."}}]}'
    )

    response = client.post("/v1/events", content=body, headers=JSON | team.auth("A1"))

    assert (response.status_code, response.json()["code"]) == (422, "invalid_input")
    assert response.json()["message"] == "JSON object repeats the key 'author'"
    assert len(team.service.store.events("trip")) == before


def test_readers_given_twice_are_refused(client: httpx.Client, team: Team) -> None:
    item = '{"id": "x", "text": "t", "readers": {"principals": ["p"]}, "readers": "*"}'
    body = '{"events": [{"op": "assert", "author": "A2", "item": ' + item + "}]}"

    response = client.post("/v1/events", content=body, headers=JSON | team.auth("A2"))

    assert response.json()["message"] == "JSON object repeats the key 'readers'"


def test_every_route_with_a_body_refuses_a_repeated_key(client: httpx.Client, team: Team) -> None:
    bodies = {
        "/v1/depart": '{"task": "a", "task": "b", "purpose": "p"}',
        "/v1/return": '{"task": "a", "purpose": "p", "purpose": "q"}',
        "/v1/memories": '{"id": "m", "id": "n", "text": "t", "source": "s"}',
    }

    for path, body in bodies.items():
        response = client.post(path, content=body, headers=JSON | team.auth("A1"))
        assert response.status_code == 422, path
        assert response.json()["message"].startswith("JSON object repeats the key"), path


def test_a_body_that_is_no_json_is_still_described_as_before(
    client: httpx.Client, team: Team
) -> None:
    response = client.post("/v1/events", content="{nope", headers=JSON | team.auth("A2"))

    assert response.json()["message"].startswith("the body is not valid JSON: ")


def test_a_body_nested_past_the_parsers_depth_is_still_a_422(
    client: httpx.Client, team: Team
) -> None:
    deep = "[" * 5000 + "]" * 5000

    response = client.post("/v1/depart", content=deep, headers=JSON | team.auth("A1"))

    assert response.status_code == 422


def test_a_number_too_long_to_read_is_said_to_be_one_not_a_body_that_is_not_json(
    client: httpx.Client, team: Team
) -> None:
    body = '{"events": [{"op": "assert", "author": "A2", "id": ' + "9" * 5000 + "}]}"

    response = client.post("/v1/events", content=body, headers=JSON | team.auth("A2"))

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request")
    assert response.json()["message"] == (
        "the body has a number longer than 100 characters: send it as a string"
    )
