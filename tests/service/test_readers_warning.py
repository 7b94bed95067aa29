"""An item whose readers leave out its own writer is recorded with a warning.

Readers are not checked against the workspace's agents (that would tell a writer which
principals and roles it holds), so a misspelled principal or role is stored as given and
makes an item that, among others, its writer may not read, revoke or supersede. The answer
says so, from the writer's own principal and role alone.
"""

from typing import Any

import anyio
import httpx
from mcp import Client

from readmit.service.mcp import create_mcp
from servicekit import Team

KEPT = (
    "It is recorded as sent (readers are not checked against the workspace's agents, so "
    "a misspelled name is kept), and only an agent that may read it can revoke or "
    "supersede it"
)


def note(item_id: str, **readers: list[str]) -> dict[str, Any]:
    """A2's note (principal family, role booking) for ``readers``."""
    item = {"id": item_id, "text": "The Sunrise Hotel is booked.", "readers": readers}
    return {"op": "assert", "id": f"e-{item_id}", "author": "A2", "item": item}


def send(client: httpx.Client, team: Team, *events: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/events", json={"events": list(events)}, headers=team.auth("A2"))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_misspelled_principal_is_recorded_and_its_writer_told(
    client: httpx.Client, team: Team
) -> None:
    answer = send(client, team, note("h0", principals=["famliy"]))

    assert answer["recorded"] == [{"id": "A2/e-h0", "epoch": 1}]
    assert answer["warnings"] == [
        {
            "index": 0,
            "id": "A2/e-h0",
            "field": "item.readers.principals",
            "message": "you may not read item 'A2/h0' yourself: its principals ('famliy') "
            f"leave out yours ('family'). {KEPT}",
        }
    ]
    state = client.get("/v1/state", headers=team.auth("A2")).json()
    assert state["items"] == []  # as the warning said: not even its writer reads it


def test_its_writer_may_not_revoke_it_and_is_told_as_of_no_such_item(
    client: httpx.Client, team: Team
) -> None:
    """Its status is another principal's to know: had the writer been let withdraw it while
    active, a batch's refusal moving from its second event to its first told the writer
    when the agency withdrew or replaced it (a review)."""
    send(client, team, note("h0", principals=["famliy"]))
    revoke = {"op": "revoke", "id": "e-r", "author": "A2", "target": "h0", "why": "no"}
    missing = {**revoke, "id": "e-m", "target": "h9"}

    refused = client.post("/v1/events", json={"events": [revoke, missing]}, headers=team.auth("A2"))
    assert refused.status_code == 422
    assert "unknown target item 'A2/h0'" in refused.text  # at its first event: as for h9
    theirs = {**revoke, "author": "A1", "target": "A2/h0"}
    other = client.post("/v1/events", json={"events": [theirs]}, headers=team.auth("A1"))
    assert other.status_code == 422
    assert "unknown target item 'A2/h0'" in other.text


def test_each_item_and_field_that_leaves_its_writer_out_is_named_by_position(
    client: httpx.Client, team: Team
) -> None:
    answer = send(
        client,
        team,
        note("h0", roles=["itinerary", "bookng"]),
        note("h1", principals=["agency"], roles=["partner"]),
        note("h2", principals=["family"], roles=["booking"]),
    )

    said = [(w["index"], w["id"], w["field"]) for w in answer["warnings"]]
    assert said == [
        (0, "A2/e-h0", "item.readers.roles"),
        (1, "A2/e-h1", "item.readers.principals"),
        (1, "A2/e-h1", "item.readers.roles"),
    ]
    assert answer["warnings"][0]["message"] == (
        "you may not read item 'A2/h0' yourself: its roles ('bookng', 'itinerary') leave "
        f"out yours ('booking'). {KEPT}"
    )


def test_readers_that_include_the_writer_get_no_warning(client: httpx.Client, team: Team) -> None:
    answer = send(
        client,
        team,
        note("h0"),
        note("h1", principals=["*"], roles=["*"]),
        note("h2", principals=["family", "agency"], roles=["booking"]),
        note("h3", roles=["*"]),
    )

    assert answer == {"recorded": [{"id": f"A2/e-h{n}", "epoch": n + 1} for n in range(4)]}


def test_a_supersession_that_leaves_its_writer_out_is_told_too(
    client: httpx.Client, team: Team
) -> None:
    send(client, team, note("h0"))
    item = {"id": "h1", "text": "The Moonrise Hotel is booked.", "readers": {"roles": ["x"]}}
    answer = send(client, team, {"op": "supersede", "author": "A2", "target": "h0", "item": item})

    (warning,) = answer["warnings"]
    assert (warning["index"], warning["field"]) == (0, "item.readers.roles")
    assert warning["id"] == answer["recorded"][0]["id"]  # the server's id: no other to name
    assert warning["message"].startswith("you may not read item 'A2/h1' yourself: its roles")


def test_the_mcp_tool_answers_the_same_warning(team: Team) -> None:
    server = create_mcp(team.service, team.service.authenticate(team.keys["A2"]))

    async def session() -> Any:
        async with Client(server) as mcp:
            return await mcp.call_tool("record_events", {"events": [note("h0", roles=["x"])]})

    result = anyio.run(session)

    assert not result.is_error, result.content
    (warning,) = result.structured_content["warnings"]
    assert warning["field"] == "item.readers.roles"
    assert warning["message"].startswith("you may not read item 'A2/h0' yourself: its roles")


def test_the_principals_a_warning_names_are_sorted(client: httpx.Client, team: Team) -> None:
    """The same readers give the same message, whatever order a set iterates in."""
    named = ["zeta", "famliy", "agency", "mu", "beta", "omega"]

    answer = send(client, team, note("h0", principals=named))

    (warning,) = answer["warnings"]
    assert warning["message"] == (
        "you may not read item 'A2/h0' yourself: its principals ('agency', 'beta', 'famliy', "
        f"'mu', 'omega', 'zeta') leave out yours ('family'). {KEPT}"
    )
