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

At the end of stdin the library cancels every request still in flight and answers none
of them: requests piped to ``readmit mcp`` lost their answers (a ping after a refused
line was answered 2 times in 20). Here the end is passed on once every request read has
been answered (`Pending`) or cancelled by the client, or once the client has gone: the
far end of stdout closed (`gone`), when what is in flight is cancelled as before (a
return then records nothing).
"""

import json
import logging
import os
import select
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import BinaryIO, cast

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from readmit import strict_json
from readmit.errors import InvalidInput
from readmit.service.limits import Limits

log = logging.getLogger("readmit.mcp")
MAX_MESSAGE_BYTES = Limits().max_body_bytes
"""The largest message read when none is given: the largest HTTP body's default."""


class StrictLines:
    """stdin's lines for the MCP library, each a message read strictly (``async for``).

    A line `readmit.strict_json` refuses never reaches the server: it is answered, once
    ``answer`` is set, with a JSON-RPC error naming why (its ``id`` where one can be read,
    else null), and logged.
    """

    def __init__(
        self,
        stdin: BinaryIO,
        client_gone: Callable[[], bool] = lambda: False,
        max_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self._stdin = stdin
        self._gone = client_gone
        self._max = max_bytes
        self.answer: MemoryObjectSendStream[SessionMessage] | None = None
        """Where the server's answers go (the library's writer to stdout)."""
        self.pending = Pending()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line, cut in self._cut():
            if not line.strip():
                continue
            if cut or len(line.rstrip(b"\r\n")) > self._max:
                why = f"it is over {self._max} bytes, the largest message read (max_body_bytes)"
                await self._refuse(line, PARSE_ERROR, why)
                continue
            try:
                message = strict_json.loads(line)
            except InvalidInput as refused:
                await self._refuse(line, PARSE_ERROR, str(refused))
                continue
            read = _jsonrpc(message, line)
            if isinstance(read, str):
                await self._refuse(line, INVALID_REQUEST, read)
                continue
            self.pending.read(read)
            yield line.decode()
        await self.pending.settled(self._gone)  # the end, once what was asked is answered

    async def _cut(self) -> AsyncIterator[tuple[bytes, bool]]:
        """The lines of stdin, each with whether it was cut short, its rest read and dropped.

        A line longer than the largest message and its line end is cut. A line was read
        whole into memory, however long (an HTTP body is refused past ``max_body_bytes``
        as it is read).
        """
        readline, most = self._stdin.readline, self._max + 2
        while line := await anyio.to_thread.run_sync(readline, most):
            cut = len(line) == most and not line.endswith(b"\n")
            if cut:  # read on to its end ("\r\r" there once passed for its line end)
                while (rest := await anyio.to_thread.run_sync(readline, 1 << 16)) and not (
                    rest.endswith(b"\n")
                ):
                    pass
            yield line, cut

    async def _refuse(self, line: bytes, code: int, why: str) -> None:
        log.warning("refused a message (not read): %s", why)
        if self.answer is not None:
            await self.answer.send(SessionMessage(_refusal(line, code, why)))


class Pending:
    """The requests passed on to the server and not answered yet, by id."""

    def __init__(self) -> None:
        self._ids: Counter[int | str] = Counter()
        """By id as the library matches them (`coerce_request_id`: "7" is 7)."""
        self._none = anyio.Event()
        self._none.set()

    def read(self, message: JSONRPCMessage) -> None:
        """Note a message passed on, as the library reads it: a request awaits its answer.

        A client's cancellation of one ends the wait for it: the server never answers a
        cancelled request.
        """
        if isinstance(message, JSONRPCRequest):
            if not self._ids:
                self._none = anyio.Event()
            self._ids[coerce_request_id(message.id)] += 1
        elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
            request = (message.params or {}).get("requestId")
            if isinstance(request, int | str) and not isinstance(request, bool):
                self.answered(request)

    def answered(self, request: int | str) -> None:
        """Note request ``request`` answered (an answer to no request waiting: nothing)."""
        request = coerce_request_id(request)
        waiting = self._ids.get(request, 0)
        if waiting > 1:
            self._ids[request] = waiting - 1
        elif waiting:
            del self._ids[request]
        if not self._ids:
            self._none.set()

    def clear(self) -> None:
        """Wait for no answer: none can be written any more."""
        self._ids.clear()
        self._none.set()

    async def settled(self, gone: Callable[[], bool]) -> None:
        """Return once no request is waiting for its answer, or the client is ``gone``."""
        while not self._none.is_set() and not gone():
            with anyio.move_on_after(CHECK_GONE_EVERY):
                await self._none.wait()


CANCELLED = "notifications/cancelled"
"""A client's cancellation of a request it sent (its ``requestId``)."""

CHECK_GONE_EVERY = 0.1
"""Seconds between checks that the client is still there, once stdin has ended."""


def gone(fd: int | None) -> bool:
    """Whether the far end of ``fd`` (a pipe's or a socket's) has closed: no one reads it.

    A TCP peer that closes cleanly looks no different from one that only stopped
    writing: over TCP the server runs what was asked to its end (a probe).
    """
    if fd is None or not hasattr(select, "poll"):  # a file, or no way to tell: never gone
        return False
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: only an error or a hang-up is reported
    return bool(poller.poll(0))


class Answering:
    """The server's writer to stdout, noting each request it answers in `Pending`."""

    def __init__(self, write: MemoryObjectSendStream[SessionMessage], pending: Pending) -> None:
        self._write = write
        self._pending = pending

    async def send(self, item: SessionMessage, /) -> None:
        try:
            await self._write.send(item)
        except BaseException:  # stdout is gone, or the server is stopping: nothing waits
            self._pending.clear()
            raise
        answer = item.message
        if isinstance(answer, JSONRPCResponse | JSONRPCError) and answer.id is not None:
            self._pending.answered(answer.id)

    async def aclose(self) -> None:
        self._pending.clear()
        await self._write.aclose()

    async def __aenter__(self) -> "Answering":
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _jsonrpc(message: object, line: bytes) -> JSONRPCMessage | str:
    """``message`` (``line``, strict JSON) as the library reads it, or why it is none.

    Why it is no JSON-RPC 2.0 message MCP reads, that is.
    """
    if isinstance(message, list):
        return "a batch (a JSON array) is not read: MCP has none"
    if not isinstance(message, dict):
        return "a message is one JSON object"
    if "method" in message and "id" in message and type(message["id"]) not in (int, str):
        return "its 'id' is neither a string nor an integer"
    try:
        read: JSONRPCMessage = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as unread:
        shape = "JSONRPCRequest" if "method" in message else None
        first = next(e for e in unread.errors() if shape is None or e["loc"][0] == shape)
        field = ".".join(str(part) for part in first["loc"][1:])
        return f"not a JSON-RPC 2.0 message: {f'{field!r}: ' if field else ''}{first['msg']}"
    return read


def _refusal(line: bytes, code: int, why: str) -> JSONRPCError:
    """The JSON-RPC error ``code`` answering ``line``, with its id if it has a plain one."""
    try:
        message = json.loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # nested too deep for Python's parser: no id read
        message = None
    said = message.get("id") if isinstance(message, dict) else None
    plain = type(said) is int or (type(said) is str and len(said) <= 200 and _utf8(said))
    error = ErrorData(code=code, message=f"the message is refused: {why}")
    return JSONRPCError(jsonrpc="2.0", id=said if plain else None, error=error)


def _utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8.

    A lone surrogate cannot: answered as a refused message's id, it ended the server.
    """
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


async def _serve(server: MCPServer, stdin: BinaryIO, max_bytes: int) -> None:
    try:
        stdout: int | None = os.dup(sys.stdout.fileno())  # the wire, before the library moves it
    except (OSError, ValueError):
        stdout = None
    try:
        lines = StrictLines(stdin, lambda: gone(stdout), max_bytes)
        async with stdio_server(stdin=cast(anyio.AsyncFile[str], lines)) as (read, write):
            lines.answer = write  # before the reader's first line: it has not run yet
            low = server._lowlevel_server  # what run_stdio_async runs (no public name in mcp 2)
            answering = Answering(write, lines.pending)
            await low.run(read, answering, low.create_initialization_options())
    finally:
        if stdout is not None:
            os.close(stdout)


def serve_stdio(
    server: MCPServer, stdin: BinaryIO | None = None, max_bytes: int = MAX_MESSAGE_BYTES
) -> None:
    """Run ``server`` on stdio, its messages read from ``stdin`` (the process's) strictly.

    A message over ``max_bytes`` is refused unread. A client that closes its end of stdout
    ends the server, as the end of stdin does (it was ``error [internal]: ExceptionGroup``,
    exit 1).
    """
    try:
        anyio.run(_serve, server, sys.stdin.buffer if stdin is None else stdin, max_bytes)
    except* (BrokenPipeError, anyio.BrokenResourceError):
        log.warning("the client closed stdout: answers not yet written are lost")
