r"""``readmit mcp``'s standard input, each message read as strictly as an HTTP body.

The MCP library reads stdin as UTF-8 with what does not decode replaced by U+FFFD, and
parses each line keeping the last of a repeated key: two items keyed ``h\xe9tel`` and
``h\xe8tel`` (Latin-1 bytes) were stored under one key, the second replacing the first,
and a text given twice was stored as its second (a probe), where the HTTP API refuses
both. Here each line is parsed first by `readmit.strict_json` (UTF-8, no repeated key,
no ``NaN``, nesting and numbers bounded); one it refuses never reaches the server, and
the client is answered with a JSON-RPC parse error naming why (the library answers no line
it cannot parse: a client sending one waited for good). A line that parses but is no
JSON-RPC 2.0 message (a batch, ``"jsonrpc": "1.0"``, an ``id`` that is an object, no
``method``) is answered as an invalid request: the library answered none of those either,
and read a request with an object for its ``id`` as a notification, answered never.
"""

import json
import logging
import sys
from collections.abc import AsyncIterator
from typing import BinaryIO, cast

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from readmit import strict_json
from readmit.errors import InvalidInput

log = logging.getLogger("readmit.mcp")


class StrictLines:
    """stdin's lines for the MCP library, each a message read strictly (``async for``).

    A line `readmit.strict_json` refuses never reaches the server: it is answered, once
    ``answer`` is set, with a JSON-RPC error naming why (its ``id`` where one can be read,
    else null), and logged.
    """

    def __init__(self, stdin: BinaryIO) -> None:
        self._stdin = stdin
        self.answer: MemoryObjectSendStream[SessionMessage] | None = None
        """Where the server's answers go (the library's writer to stdout)."""

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in anyio.wrap_file(self._stdin):
            if not line.strip():
                continue
            try:
                strict_json.loads(line)
            except InvalidInput as refused:
                await self._refuse(line, PARSE_ERROR, str(refused))
                continue
            unlike = _not_jsonrpc(line)
            if unlike is not None:
                await self._refuse(line, INVALID_REQUEST, unlike)
                continue
            yield line.decode()

    async def _refuse(self, line: bytes, code: int, why: str) -> None:
        log.warning("refused a message (not read): %s", why)
        if self.answer is not None:
            await self.answer.send(SessionMessage(_refusal(line, code, why)))


def _not_jsonrpc(line: bytes) -> str | None:
    """Why ``line`` (strict JSON) is no JSON-RPC 2.0 message MCP reads, or None if it is one."""
    message = json.loads(line)
    if isinstance(message, list):
        return "a batch (a JSON array) is not read: MCP has none"
    if not isinstance(message, dict):
        return "a message is one JSON object"
    if "method" in message and "id" in message and type(message["id"]) not in (int, str):
        return "its 'id' is neither a string nor an integer"
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as unread:
        shape = "JSONRPCRequest" if "method" in message else None
        first = next(e for e in unread.errors() if shape is None or e["loc"][0] == shape)
        field = ".".join(str(part) for part in first["loc"][1:])
        return f"not a JSON-RPC 2.0 message: {f'{field!r}: ' if field else ''}{first['msg']}"
    return None


def _refusal(line: bytes, code: int, why: str) -> JSONRPCError:
    """The JSON-RPC error ``code`` answering ``line``, with its id if it has a plain one."""
    try:
        message = json.loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # nested too deep for Python's parser: no id read
        message = None
    said = message.get("id") if isinstance(message, dict) else None
    plain = type(said) is int or (type(said) is str and len(said) <= 200)
    error = ErrorData(code=code, message=f"the message is refused: {why}")
    return JSONRPCError(jsonrpc="2.0", id=said if plain else None, error=error)


async def _serve(server: MCPServer, stdin: BinaryIO) -> None:
    lines = StrictLines(stdin)
    async with stdio_server(stdin=cast(anyio.AsyncFile[str], lines)) as (read, write):
        lines.answer = write  # before the reader's first line: it has not run yet
        low = server._lowlevel_server  # what run_stdio_async runs (no public name in mcp 2)
        await low.run(read, write, low.create_initialization_options())


def serve_stdio(server: MCPServer, stdin: BinaryIO | None = None) -> None:
    """Run ``server`` on stdio, its messages read from ``stdin`` (the process's) strictly."""
    anyio.run(_serve, server, sys.stdin.buffer if stdin is None else stdin)
