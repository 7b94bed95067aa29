"""Two worlds: an agent's item taken by another principal's item it may not read, by key in
one world and by supersession in the other. The agent's return shows both alike
(``stale_or_superseded``, no evidence: docs/security.md, "What an agent cannot do"), and so
must a write that names the item: "(replaced)" told it that an item it may not read holds
the item's key."""

from typing import Any, cast

import httpx
import pytest
from fastapi.testclient import TestClient

from readmit.model import Agent
from readmit.service.app import create_app
from readmit.store import open_store
from servicekit import make_team

AGENTS = [
    Agent(id="A1", principal="family", role="itinerary"),
    Agent(id="X1", principal="agency", role="partner"),
]
HOTEL = {
    "id": "s1",
    "text": "Sunrise Hotel booked.",
    "key": "hotel",
    "readers": {"principals": "*"},
}
HIDDEN = {"id": "h1", "text": "A family note.", "readers": {"principals": ["family"]}}
BY_KEY = {"op": "assert", "author": "A1", "id": "e-h1", "item": {**HIDDEN, "key": "hotel"}}
BY_SUPERSEDE = {"op": "supersede", "author": "A1", "id": "e-h1", "target": "X1/s1", "item": HIDDEN}
NAMING = [
    {"op": "revoke", "author": "X1", "target": "X1/s1", "why": "done"},
    {"op": "close", "author": "X1", "target": "X1/s1"},
    {"op": "supersede", "author": "X1", "target": "X1/s1", "item": {"id": "n1", "text": "New."}},
]


def _answers(hidden: dict[str, Any]) -> list[tuple[int, str]]:
    """What X1 is answered when it names its item after A1's ``hidden`` event took it."""
    store = open_store("sqlite://:memory:")
    team = make_team(store, AGENTS)
    seen: list[tuple[int, str]] = []
    with TestClient(create_app(team.service)) as test_client:
        client = cast(httpx.Client, test_client)  # a TestClient is an httpx.Client over ASGI

        def post(agent: str, path: str, body: Any) -> httpx.Response:
            return client.post(path, json=body, headers=team.auth(agent))

        sent = {"op": "assert", "author": "X1", "id": "e-s1", "item": HOTEL}
        assert post("X1", "/v1/events", {"events": [sent]}).status_code == 200
        assert post("X1", "/v1/depart", {}).status_code == 200
        assert post("A1", "/v1/events", {"events": [hidden]}).status_code == 200
        for event in NAMING:
            answer = post("X1", "/v1/events", {"events": [event]})
            seen.append((answer.status_code, answer.text))
        returned = post("X1", "/v1/return", {"task": "trip", "purpose": "booking"})
        excluded = returned.json()["excluded"]
        seen.append((returned.status_code, repr(excluded)))
    store.close()
    return seen


def test_a_target_taken_by_a_hidden_item_reads_the_same_by_key_or_by_supersession() -> None:
    by_key, by_supersession = _answers(BY_KEY), _answers(BY_SUPERSEDE)

    assert by_key == by_supersession
    assert all(status == 422 for status, _ in by_key[:-1])
    assert "is no longer active (superseded or replaced)" in by_key[0][1]


@pytest.mark.parametrize("how", ["revoke", "close"])
def test_a_target_revoked_or_closed_still_says_so(how: str) -> None:
    """A revocation or a closing is named in the return (its event and why): so it is here."""
    hidden = {"op": how, "author": "A1", "id": "e-h1", "target": "X1/s1"}
    if how == "revoke":
        hidden["why"] = "gone"
    refused = _answers(hidden)[0][1]

    assert f"is no longer active ({ {'revoke': 'revoked', 'close': 'closed'}[how] })" in refused
