"""How a body route reads JSON before FastAPI does (`readmit.service.strict_route`)."""

import json
from typing import Any

import httpx
import pytest

from builders import build_note
from readmit.strict_json import MAX_NUMBER_CHARS
from servicekit import Team

JSON = {"Content-Type": "application/json"}
LONG = f"the body has a number longer than {MAX_NUMBER_CHARS} characters: send it as a string"


@pytest.mark.parametrize("path", ["/v1/events", "/v1/memories", "/v1/verify"])
@pytest.mark.parametrize(
    "number", ["9" * (MAX_NUMBER_CHARS + 1), "0." + "1" * MAX_NUMBER_CHARS], ids=["int", "float"]
)
def test_every_route_reads_numbers_to_one_length_and_says_so_in_one_wording(
    client: httpx.Client, team: Team, path: str, number: str
) -> None:
    """It was 4,300 digits (Python's limit for an integer) on the routes FastAPI reads, 100
    characters on /v1/verify, whose message called the body not JSON."""
    response = client.post(path, content=f'{{"view": {number}}}', headers=JSON | team.auth("A1"))

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request")
    assert response.json()["message"] == LONG


def test_a_number_as_long_as_is_read_is_read(client: httpx.Client, team: Team) -> None:
    number = "9" * MAX_NUMBER_CHARS

    response = client.post(
        "/v1/events", content=f'{{"events": {number}}}', headers=JSON | team.auth("A1")
    )

    assert response.json()["message"].startswith("the request does not match the API schema")


def test_a_json_body_is_parsed_once_not_again_by_fastapi(
    client: httpx.Client, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strict read (repeated keys, depth, numbers) was thrown away and FastAPI parsed the
    body again: a 1,000-event batch took twice the parsing it needed."""
    body = json.dumps({"events": [build_note("A2", n) for n in range(3)]}).encode()
    parses: list[str | bytes] = []
    real = json.loads

    def counted(text: str | bytes, **hooks: Any) -> Any:  # the real parser, counted
        if text in (body, body.decode()):  # bytes, or the text they decode to
            parses.append(text)
        return real(text, **hooks)

    monkeypatch.setattr(json, "loads", counted)

    response = client.post("/v1/events", content=body, headers=JSON | team.auth("A2"))

    assert response.status_code == 200
    assert len(response.json()["recorded"]) == 3
    assert len(parses) == 1


def test_a_batch_is_counted_before_the_schema_reads_each_entry(
    client: httpx.Client, team: Team
) -> None:
    """The schema answered each entry that is not an event with an error of its own: an
    8 MiB body of four million ``1``s took 22–40 s to refuse and stalled the server (a
    review's finding). Too many entries are refused by their count, whatever they are."""
    body = '{"events": [' + ", ".join(["1"] * 1001) + "]}"

    response = client.post("/v1/events", content=body, headers=JSON | team.auth("A1"))

    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")
    assert response.json()["message"] == "at most 1000 events per request"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"view": 1e400}', "the body is refused: JSON number '1e400' is out of range"),
        ('{"view": NaN}', "the body is refused: JSON may not contain NaN"),
    ],
    ids=["out of range", "NaN"],
)
@pytest.mark.parametrize("path", ["/v1/verify", "/v1/events", "/v1/memories"])
def test_every_route_refuses_json_it_will_not_read_without_calling_it_not_json(
    client: httpx.Client, team: Team, body: str, message: str, path: str
) -> None:
    """``1e400`` is valid JSON, out of range: it was called "not valid JSON" (a review). The
    body routes read it as infinity, and ``NaN`` as such, with hooks of their own."""
    response = client.post(path, content=body, headers=JSON | team.auth("A2"))

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request")
    assert response.json()["message"] == message
