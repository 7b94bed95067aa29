"""The MCP server: readmit's operations as tools, for MCP-speaking agents.

One server process acts as one agent, authenticated by the key in
``READMIT_AGENT_KEY``; the tools are the HTTP API's operations. A refusal reaches
the client as a tool error ``error [code]: message``, the same code the HTTP API
answers with, and the server logs it without a traceback. Tool arguments are
checked like the HTTP API's bodies before the service sees them: an argument the
tool does not take is refused (as an unknown field is), a value of the wrong type
is ``invalid_input`` naming the argument, and names and texts are checked
(`check_name`, `check_text`). Each tool's result has the HTTP API's shape for the same operation
(`readmit.service.schemas`), published as the tool's output schema.
"""

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import Field, StrictInt, ValidationError

from readmit import strict_json
from readmit.errors import InvalidInput, InvalidRequest, ReadmitError
from readmit.service.mcp_stdin import serve_stdio as stdio
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.service.schemas import (
    AFTER_MOST,
    PAGE,
    PAGE_MOST,
    DecisionsOut,
    DepartureOut,
    MemoriesOut,
    RecordedOut,
    StateOut,
    VerifyOut,
)
from readmit.service.strict_route import refusal
from readmit.wire import check_name, check_returning, check_text
from readmit.wire.edge import did_you_mean
from readmit.wire.fields import name_characters, plain
from readmit.wire.outbound import AgentDecisionOut, MemoryOut


@contextmanager
def refusals() -> Iterator[None]:
    """Turn a `ReadmitError` into the tool error the client reads (code and message)."""
    try:
        yield
    except ReadmitError as exc:
        raise ToolError(f"error [{exc.code}]: {exc}") from None


@contextmanager
def _acting(service: Service, key: str | None) -> Iterator[None]:
    """`refusals`, with ``key`` (if given) looked up again: a revoked one is refused.

    A key never moves to another agent, so the caller it names is the one it named.
    """
    with refusals():
        if key is not None:
            service.authenticate(key)
        yield


Limit = Annotated[StrictInt, Field(ge=1, le=PAGE_MOST)]
"""A page's size, bounded in the tool's schema as in the HTTP API's."""
After = Annotated[StrictInt, Field(ge=0)]
"""A page of decisions' cursor: how many of yours the pages before held."""
Cursor = Annotated[str, Field(max_length=AFTER_MOST)]
"""A page of the state's or the memories' cursor: an id."""


def create_mcp(service: Service, caller: Caller, key: str | None = None) -> "_CheckedServer":
    """An MCP server whose tools act as ``caller``.

    With ``key``, the caller's agent key, each tool call looks it up again first, as each
    HTTP request does: a key revoked while the server runs is refused from the next call.
    """
    server = _CheckedServer(
        partial(_acting, service, key),
        service.limits.max_body_bytes,
        name="readmit",
        instructions=(
            "readmit decides which remembered state you may still act on after an absence. "
            "Record what you do with record_events, call depart before you leave and "
            "return_view when you come back; act only on the items of an issued view."
        ),
    )

    @server.tool()
    def record_events(events: list[dict[str, Any]]) -> RecordedOut:
        """Record events you author (readmit.scenario/1 format, `at` defaults to now).

        Ids you give are stored as `<you>/<id>`; name a teammate's item by its full id.
        """
        with refusals():  # the key was looked up by the server (`_CheckedServer`)
            return service.record(caller, events)

    @server.tool()
    def remember(id: str, text: str, source: str) -> MemoryOut:
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
    def memories(after: Cursor | None = None, limit: Limit = PAGE) -> MemoriesOut:
        """Your own private bank, oldest first, a page at a time.

        ``limit`` memories at most (1,000 unless asked; 10,000 at most; fewer past 1 Mi
        characters) after the memory ``after``: give the answer's ``next`` as ``after`` for
        the next page, until it is null.
        """
        with refusals():
            _check_cursor(after)
            found, following = service.memories(caller, after, limit)
            return {"memories": found, "next": following}

    @server.tool()
    def depart(task: str | None = None, purpose: str | None = None) -> DepartureOut:
        """Checkpoint what you can see now, before you go away.

        ``task`` and ``purpose`` (together): what you will return to, so that a server
        judging ahead can screen that return while you are away.
        """
        with refusals():
            return service.depart(caller, returning_to=check_returning(task, purpose))

    @server.tool()
    async def return_view(task: str | None = None, purpose: str | None = None) -> AgentDecisionOut:
        """Come back: get your signed Return View, or why it was withheld.

        Without ``task`` and ``purpose``, those your departure named.
        """
        with refusals():
            named = check_returning(task, purpose) or (None, None)
            return await server.returns.abandonable(partial(service.return_, caller, *named))

    @server.tool()
    def verify_view(view: dict[str, Any] | None = None, view_json: str = "") -> VerifyOut:
        """Check a Return View's signature, item digests and expiry.

        Give the view as ``view``, or as ``view_json``, the JSON text you received, to have
        it parsed strictly (refused as ``/v1/verify`` refuses its body: a repeated key, text
        that is not JSON): as an object, the client's JSON parser has already kept one of
        any repeated key's values.
        """
        with refusals():
            return service.verify(_view_of(view, view_json))

    @server.tool()
    def audit(after: After = 0, limit: Limit = PAGE) -> DecisionsOut:
        """List your return decisions, oldest first, numbered from 1, a page at a time.

        ``limit`` at most (1,000 unless asked; 10,000 at most) numbered after ``after``:
        give the answer's ``next`` as ``after`` for the next page, until it is null.
        """
        with refusals():
            found, following = service.decisions(caller, after, limit)
            return {"decisions": found, "next": following}

    @server.tool()
    def explain(decision_id: StrictInt) -> AgentDecisionOut:
        """Why each item of one of your decisions was kept or excluded."""
        with refusals():
            return service.explain(caller, decision_id)

    @server.tool()
    def state(after: Cursor | None = None, limit: Limit = PAGE) -> StateOut:
        """The active shared items you may read now, by id, a page at a time.

        ``limit`` items at most (1,000 unless asked; 10,000 at most; fewer past 1 Mi
        characters) after ``after``: give the answer's ``next`` as ``after`` for the next
        page, until it is null.
        """
        with refusals():
            _check_cursor(after)
            items, following = service.state(caller, after, limit)
            return {"items": items, "next": following}

    return server


def _check_cursor(after: str | None) -> None:
    """Refuse a cursor as ``GET /v1/state`` and ``/v1/memories`` do (its length: the schema)."""
    if after is not None and not name_characters(after):
        raise InvalidInput("after must be an id: no control or invisible character")


def _view_of(view: dict[str, Any] | None, text: str) -> dict[str, Any]:
    """The view ``verify_view`` was given: as an object, or its text parsed strictly."""
    if (view is None) == (not text):
        raise InvalidInput("give the view once: as view, or as view_json (its JSON text)")
    if view is not None:
        return view
    try:
        parsed = strict_json.loads(text)
    except InvalidInput as exc:  # in ``/v1/verify``'s words for its body
        raise refusal(exc, "view_json") from None
    if not isinstance(parsed, dict):
        raise InvalidRequest("view_json: give the view, a JSON object")  # as /v1/verify
    return parsed


class _Returns:
    """The returns a server's calls run in threads, each cancelled with its call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[threading.Event] = set()

    async def abandonable(self, decide: Callable[..., AgentDecisionOut]) -> AgentDecisionOut:
        """``decide(cancel=...)`` in a thread, cancelled with the call (as HTTP's client gone).

        A call the client cancelled, or cut by its stdin closing, ran to the end and was
        recorded (a probe); now it stops at its next stage or verifier call, recording
        nothing (`Abandoned`), as a return over HTTP does.
        """
        cancel, ended = threading.Event(), threading.Event()

        def run() -> AgentDecisionOut:
            with self._lock:  # here, not before: a call cancelled before its thread runs
                self._running.add(ended)  # has nothing to wait for
            try:
                return decide(cancel=cancel)
            finally:
                with self._lock:
                    self._running.discard(ended)
                ended.set()

        try:
            return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()
            raise

    def settle(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the returns still running; whether they all ended.

        Before the store is closed: an abandoned return stops at its next stage, and closing
        the store under it cut it with a store error instead (a review).
        """
        deadline = time.monotonic() + seconds
        with self._lock:
            running = list(self._running)
        return all(e.wait(max(0.0, deadline - time.monotonic())) for e in running)


SETTLE_S = 60.0
"""How long `serve_stdio` waits, once stdin has closed, for returns the client abandoned."""


def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdio (`readmit.service.mcp_stdin`), then settle its returns.

    A message is read up to the service's largest HTTP body (``max_body_bytes``). Once its
    client has gone, the returns it abandoned are waited for, so that the store is not
    closed under them.
    """
    if isinstance(server, _CheckedServer):
        stdio(server, max_bytes=server.max_message)
    else:
        stdio(server)
    if isinstance(server, _CheckedServer):
        server.returns.settle(SETTLE_S)


class _CheckedServer(MCPServer):
    """An `MCPServer` that checks a call's arguments as the HTTP API checks a body.

    The library drops an argument its tool does not take, and words a wrong type in
    pydantic's terms with a link; both reach the client here as ``invalid_input``, after
    the key is checked (as HTTP answers 401 before it reads a body), in the words of the
    tools' own refusals. The tools themselves then only turn refusals into tool errors.
    """

    def __init__(
        self,
        acting: Callable[[], AbstractContextManager[None]],
        max_message: int,
        **options: Any,
    ):
        super().__init__(**options)
        self._acting = acting
        self.max_message = max_message
        self.returns = _Returns()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            try:
                with self._acting():
                    _check_arguments(tool, arguments)
            except ToolError as exc:
                raise ToolError(f"Error executing tool {name}: {exc}") from None
        return await super().call_tool(name, arguments, context)


def _check_arguments(tool: Tool, arguments: dict[str, Any]) -> None:
    """Refuse an argument ``tool`` does not take, or one of the wrong type.

    Raises:
        InvalidInput: ``<tool>: ...``, naming the argument.
    """
    known = sorted(tool.parameters.get("properties", {}))
    for given in arguments:
        if given not in known:
            hint = did_you_mean(given, known)
            takes = f"it takes {', '.join(known)}" if known else "it takes none"
            raise InvalidInput(
                f"{tool.name}: unknown argument {given!r}"
                + (f" ({hint})" if hint else "")
                + f"; {takes}"
            )
    try:
        tool.fn_metadata.arg_model.model_validate(tool.fn_metadata.pre_parse_json(arguments))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {plain(e['msg'])}"
            for e in exc.errors(include_url=False)
        )
        raise InvalidInput(f"{tool.name}: {problems}") from None


__all__ = ["create_mcp", "serve_stdio"]
