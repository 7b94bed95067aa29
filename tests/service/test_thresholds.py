"""An agent's copy of its decision says what its coverage had to reach, over HTTP and MCP.

The thresholds are those of the policy the server decided under, not the default's.
"""

from typing import Any

import anyio
import httpx
from mcp import Client

from readmit.examples.travel import travel_scenario
from readmit.policy import Policy
from readmit.report import thresholds_json
from readmit.service.mcp import create_mcp
from servicekit import Team, play

STRICT = Policy(gamma=0.9, rho=0.8, threshold=0.7)


def test_http_answers_and_shows_again_the_servers_thresholds(
    client: httpx.Client, team: Team
) -> None:
    team.service.policy = STRICT

    blocked, issued = (r.json() for r in play(client, team, travel_scenario()))
    again = client.get("/v1/decisions/1", headers=team.auth("A1")).json()

    assert blocked["outcome"] == "blocked"
    assert blocked["thresholds"] == thresholds_json(STRICT)
    assert (blocked["thresholds"]["obligations"], blocked["thresholds"]["critical"]) == (0.9, 0.8)
    assert issued["thresholds"] == again["thresholds"] == thresholds_json(STRICT)


def test_mcp_explain_shows_the_thresholds(client: httpx.Client, team: Team) -> None:
    team.service.policy = STRICT
    play(client, team, travel_scenario())
    server = create_mcp(team.service, team.service.authenticate(team.keys["A1"]))

    async def session() -> Any:
        async with Client(server) as mcp:
            return await mcp.call_tool("explain", {"decision_id": 1})

    result = anyio.run(session)

    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["thresholds"] == thresholds_json(STRICT)
