"""The MCP server: readmit's operations as tools, for MCP-speaking agents.

One server process acts as one agent, authenticated by the key in
``READMIT_AGENT_KEY``; the tools are the HTTP API's operations. A refusal reaches
the client as a tool error ``error [code]: message``, the same code the HTTP API
answers with, and the server logs it without a traceback. Tool arguments are
checked like the HTTP API's bodies (`check_name`, `check_text`) before the
service sees them.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from readmit.errors import ReadmitError
from readmit.service.operations import Caller, Service
from readmit.wire import check_name, check_text


@contextmanager
def refusals() -> Iterator[None]:
    """Turn a `ReadmitError` into the tool error the client reads (code and message)."""
    try:
        yield
    except ReadmitError as exc:
        raise ToolError(f"error [{exc.code}]: {exc}") from None


def create_mcp(service: Service, caller: Caller) -> MCPServer:
    """An MCP server whose tools act as ``caller``."""
    server = MCPServer(
        name="readmit",
        instructions=(
            "readmit decides which remembered state you may still act on after an absence. "
            "Record what you do with record_events, call depart before you leave and "
            "return_view when you come back; act only on the items of an issued view."
        ),
    )

    @server.tool()
    def record_events(events: list[dict[str, Any]]) -> dict[str, Any]:
        """Record events you author (readmit.scenario/1 format, `at` defaults to now).

        Ids you give are stored as `<you>/<id>`; name a teammate's item by its full id.
        """
        with refusals():
            return {"recorded": service.record(caller, events)}

    @server.tool()
    def remember(id: str, text: str, source: str) -> dict[str, Any]:
        """Add a private memory to your bank, bound to the work-state item `source`.

        `id` is stored as `<you>/<id>`; `source` is your own item's id, a teammate's full
        `<agent>/<id>`, or `/<id>` for a plain id from a replayed scenario.
        """
        with refusals():
            check_name(id, "id")
            check_text(text, "text")
            check_name(source, "source")
            return service.remember(caller, id, text, source)

    @server.tool()
    def depart() -> dict[str, Any]:
        """Checkpoint what you can see now, before you go away."""
        with refusals():
            return service.depart(caller)

    @server.tool()
    def return_view(task: str, purpose: str) -> dict[str, Any]:
        """Come back: get your signed Return View, or why it was withheld."""
        with refusals():
            check_name(task, "task")
            check_name(purpose, "purpose")
            return service.return_(caller, task, purpose)

    @server.tool()
    def verify_view(view: dict[str, Any]) -> dict[str, Any]:
        """Check a Return View's signature, item digests and expiry."""
        with refusals():
            return service.verify(view)

    @server.tool()
    def audit() -> dict[str, Any]:
        """List your return decisions."""
        with refusals():
            return {"decisions": service.decisions(caller)}

    @server.tool()
    def explain(decision_id: int) -> dict[str, Any]:
        """Why each item of one of your decisions was kept or excluded."""
        with refusals():
            return service.explain(caller, decision_id)

    @server.tool()
    def state() -> dict[str, Any]:
        """The active shared items you may read now."""
        with refusals():
            return {"items": service.state(caller)}

    return server
