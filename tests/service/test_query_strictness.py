"""``GET /v1/state`` takes ``after`` and ``limit``, and nothing else, as a body's keys are
read (`readmit.service.strict_route.plain_query`)."""

import httpx
import pytest

from servicekit import Team


@pytest.mark.parametrize("query", ["cursor=a", "page=2", "offset=1", "Limit=5", "after_=a"])
def test_a_parameter_the_state_route_does_not_take_is_refused(
    client: httpx.Client, team: Team, query: str
) -> None:
    """A name near one it takes (another API's cursor, a case or a character off) is a
    typo or meant for another reader: read as absent, it would page otherwise than asked."""
    answer = client.get(f"/v1/state?{query}", headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["code"] == "invalid_request"


@pytest.mark.parametrize("digits", ["%D9%A3", "%C2%B2", "%EF%BC%95"])  # ٣, ², a fullwidth 5
def test_a_limit_in_digits_other_than_ascii_is_refused(
    client: httpx.Client, team: Team, digits: str
) -> None:
    """Only ASCII digits make a number: ``int`` reads ``٣`` and a fullwidth ``5`` as
    numbers, ``str.isdigit`` takes ``²`` too."""
    answer = client.get(f"/v1/state?limit={digits}", headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["code"] == "invalid_request"


def test_a_query_that_is_not_utf8_once_decoded_says_so(client: httpx.Client, team: Team) -> None:
    """Starlette read it with U+FFFD in place of what did not decode, silently (a probe); the
    state route's strict-query cases hold more such queries."""
    answer = client.get("/v1/state?after=%ff%fe", headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["message"] == "query: not UTF-8 once percent-decoded"


def test_the_parameters_it_takes_are_read(client: httpx.Client, team: Team) -> None:
    """Both at once, each once, ``limit`` in ASCII digits: an empty workspace's last page."""
    answer = client.get("/v1/state?after=a&limit=5", headers=team.auth("A1"))

    assert answer.status_code == 200
    assert answer.json() == {"items": [], "next": None}


def test_a_body_field_given_in_the_query_is_told_where_it_goes(
    client: httpx.Client, team: Team
) -> None:
    """``POST /v1/return?task=trip`` names a field of the return's JSON body."""
    answer = client.post("/v1/return?task=trip", json={}, headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["message"] == (
        "query: unknown parameter 'task'; give 'task' in the JSON body"
    )


def test_a_misspelled_parameter_is_told_the_one_it_is_closest_to(
    client: httpx.Client, team: Team
) -> None:
    answer = client.get("/v1/state?limt=5", headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["message"] == ("query: unknown parameter 'limt' (did you mean 'limit'?)")


def test_verify_takes_no_query(client: httpx.Client) -> None:
    """No key, no parameters: a view or a flag sent in the query is refused, not ignored."""
    answer = client.post("/v1/verify?view=1", json={"view": {}})

    assert answer.status_code == 422
    assert answer.json()["message"] == (
        "query: unknown parameter 'view'; give 'view' in the JSON body"
    )
