"""Property: no request reveals an item outside the caller's scope, nor another agent's
private memory, not even by id."""

import re
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from readmit.model import Agent
from readmit.service.app import create_app
from readmit.store import open_store
from servicekit import make_team

AGENTS = [
    Agent(id="A1", principal="family", role="itinerary"),
    Agent(id="A2", principal="family", role="booking"),
    Agent(id="X1", principal="agency", role="partner"),
    Agent(id="X2", principal="agency", role="ops"),
]
WORDS = ["Sunrise Hotel", "the 9:00 train", "pickup", "INC-42", "budget"]


@st.composite
def workspaces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Items with random readers and random authors, plus private memories."""
    steps: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 8))):
        author = draw(st.sampled_from(AGENTS))
        readers = draw(
            st.sampled_from(
                [
                    None,
                    {"principals": "*"},
                    {"principals": ["family"]},
                    {"principals": ["agency"]},
                    {"roles": [author.role]},
                    {"principals": "*", "roles": ["ops", "itinerary"]},
                ]
            )
        )
        item: dict[str, Any] = {
            "id": f"itemx{n}q",
            "text": f"{n}: "
            + " and ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=2))),
            "supports": ["d1"],
        }
        if readers is not None:
            item["readers"] = readers
        steps.append(
            {"author": author.id, "event": {"op": "assert", "author": author.id, "item": item}}
        )
        if draw(st.booleans()):
            steps.append(
                {
                    "author": author.id,
                    "memory": {"id": f"memx{n}q", "text": "private", "source": f"itemx{n}q"},
                }
            )
    return steps


def readable(agent: Agent, item: dict[str, Any], author: Agent) -> bool:
    readers = item.get("readers")
    principals: Any = [author.principal]
    roles: Any = "*"
    if readers is not None:
        principals = readers.get("principals", principals)
        roles = readers.get("roles", roles)
    return (principals == "*" or agent.principal in principals) and (
        roles == "*" or agent.role in roles
    )


def ids_in(text: str) -> set[str]:
    return set(re.findall(r"(?:itemx|memx)\d+q", text))


@settings(max_examples=25, deadline=None)
@given(workspaces())
def test_no_response_names_what_the_caller_may_not_see(steps: list[dict[str, Any]]) -> None:
    store = open_store("sqlite://:memory:")
    team = make_team(store, AGENTS)
    by_id = {a.id: a for a in AGENTS}
    with TestClient(create_app(team.service)) as client:
        for agent in AGENTS:
            client.post("/v1/depart", json={}, headers=team.auth(agent.id))
        allowed: dict[str, set[str]] = {a.id: set() for a in AGENTS}
        for step in steps:
            author = by_id[step["author"]]
            if "event" in step:
                item = step["event"]["item"]
                response = client.post(
                    "/v1/events", json={"events": [step["event"]]}, headers=team.auth(author.id)
                )
                assert response.status_code == 200, response.text
                for agent in AGENTS:
                    if readable(agent, item, author):
                        allowed[agent.id].add(item["id"])
            else:
                response = client.post(
                    "/v1/memories", json=step["memory"], headers=team.auth(author.id)
                )
                if response.status_code == 200:
                    allowed[author.id].add(step["memory"]["id"])
        for agent in AGENTS:
            me = team.auth(agent.id)
            seen = client.get("/v1/state", headers=me).text
            seen += client.get("/v1/memories", headers=me).text
            returned = client.post("/v1/return", json={"task": "t", "purpose": "p"}, headers=me)
            seen += returned.text
            seen += client.get(f"/v1/decisions/{returned.json()['decision']}", headers=me).text
            seen += client.get("/v1/decisions", headers=me).text

            assert ids_in(seen) <= allowed[agent.id], agent.id
    store.close()
