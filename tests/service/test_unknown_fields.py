"""A misspelled field is refused with the field it is close to, over HTTP and MCP alike.

Both reach the one event edge (`readmit.wire.edge`), so both say "did you mean".
"""

from typing import Any

import anyio
import httpx
from mcp import Client

from readmit.service.mcp import create_mcp
from servicekit import Team

NOTE = {"id": "n1", "text": "The build is green.", "support": ["d_build"]}


def _assert(item: dict[str, Any]) -> dict[str, Any]:
    return {"op": "assert", "author": "A2", "item": item}


def test_http_answers_422_naming_the_field_it_is_close_to(client: httpx.Client, team: Team) -> None:
    response = client.post("/v1/events", json={"events": [_assert(NOTE)]}, headers=team.auth("A2"))

    error = response.json()
    assert response.status_code == 422
    assert error["code"] == "invalid_event"
    assert error["message"] == "events[0]: item.support: unknown field (did you mean 'supports'?)"
    assert error["details"]["fields"] == ["item.support"]


def test_mcp_refuses_with_the_field_it_is_close_to(team: Team) -> None:
    server = create_mcp(team.service, team.service.authenticate(team.keys["A2"]))
    depends = {"id": "n2", "text": "It needs the build.", "depends": ["n1"]}

    async def session() -> Any:
        async with Client(server) as mcp:
            return await mcp.call_tool("record_events", {"events": [_assert(depends)]})

    result = anyio.run(session)

    assert result.is_error
    assert result.content[0].text.endswith(
        "error [invalid_event]: events[0]: item.depends: unknown field (did you mean 'depends_on'?)"
    )
