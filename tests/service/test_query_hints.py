"""Where a misplaced query parameter goes: a body field is sent to the body, whatever the
route's model (required or optional), and a misspelling of any parameter the route takes,
a text one too, is told the one it is closest to."""

import httpx
import pytest
from starlette.requests import Request

from readmit.errors import InvalidRequest
from readmit.service.strict_route import plain_query
from servicekit import Team


@pytest.mark.parametrize(
    ("path", "name", "body"),
    [
        ("/v1/memories", "text", {"id": "m", "text": "T.", "source": "user"}),
        ("/v1/events", "events", {"events": []}),
        ("/v1/depart", "purpose", {}),
    ],
)
def test_a_body_field_in_the_query_of_any_body_route_is_told_where_it_goes(
    client: httpx.Client, team: Team, path: str, name: str, body: dict[str, object]
) -> None:
    answer = client.post(f"{path}?{name}=x", json=body, headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["message"] == (
        f"query: unknown parameter {name!r}; give {name!r} in the JSON body"
    )


def test_a_misspelled_text_parameter_is_told_the_one_it_is_closest_to(
    client: httpx.Client, team: Team
) -> None:
    answer = client.get("/v1/state?aftr=x", headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["message"] == "query: unknown parameter 'aftr' (did you mean 'after'?)"


def _query(query: bytes) -> Request:
    return Request({"type": "http", "method": "POST", "path": "/", "query_string": query})


def test_a_body_field_is_sent_to_the_body_not_to_a_parameter_it_is_near() -> None:
    with pytest.raises(InvalidRequest) as refused:
        plain_query(_query(b"task=x"), frozenset({"tasks"}), frozenset(), frozenset({"task"}))

    assert str(refused.value) == "query: unknown parameter 'task'; give 'task' in the JSON body"
