"""A body refused by the schema: told it is of another shape only when it holds none of
the fields the route requires, and holds fields it does not take."""

import httpx
import pytest

from servicekit import Team


def _message(client: httpx.Client, team: Team, path: str, body: str) -> str:
    headers = team.auth("A1") | {"Content-Type": "application/json"}
    response = client.post(path, content=body, headers=headers)
    assert response.status_code == 422
    message = response.json()["message"]
    assert isinstance(message, str)
    return message


def test_a_memory_route_sent_an_event_is_told_the_shape_it_takes(
    client: httpx.Client, team: Team
) -> None:
    """A memory's optional ``at`` is no field the body must hold."""
    said = _message(client, team, "/v1/memories", '{"op": "assert", "author": "A1"}')

    assert said.endswith(
        'the body must be one JSON object, {"id", "text", "source"} (it held \'op\', \'author\')'
    )


def test_a_body_of_another_shape_with_four_fields_names_three_and_more(
    client: httpx.Client, team: Team
) -> None:
    body = '{"op": "assert", "author": "A1", "item": {}, "at": "x"}'

    said = _message(client, team, "/v1/events", body)

    assert said.endswith("(it held 'op', 'author', 'item', ...)")


@pytest.mark.parametrize("path", ["/v1/depart", "/v1/return"])
def test_an_unknown_field_where_every_field_is_optional_is_named_as_such(
    client: httpx.Client, team: Team, path: str
) -> None:
    """Nothing is required, so nothing is missing: the field is not of another shape."""
    said = _message(client, team, path, '{"zzzz": 1}')

    assert "must be one JSON object" not in said
    assert said.endswith("zzzz: Extra inputs are not permitted")
