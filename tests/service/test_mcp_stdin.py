"""`readmit.service.mcp_stdin`: the end of stdin waits for answers while the client is there."""

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, jsonrpc_message_adapter

from readmit.service.mcp_stdin import Pending, StrictLines, gone


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """A pipe, as the client's end and the server's stdout; whatever is left open is closed."""
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):  # closed by the test
            os.close(fd)


def test_a_pipe_is_gone_once_its_reader_has_closed(pipe: tuple[int, int], tmp_path: Path) -> None:
    read, write = pipe
    assert not gone(write)
    os.close(read)
    assert gone(write)
    with (tmp_path / "out").open("w") as file:  # a file has no far end: never gone
        assert not gone(file.fileno())
    assert not gone(None)


def _read(pending: Pending, message: dict[str, Any]) -> None:
    """``message`` noted by ``pending`` as the library reads it."""
    pending.read(jsonrpc_message_adapter.validate_python({"jsonrpc": "2.0", **message}))


def test_the_end_waits_for_an_unanswered_request_until_the_client_has_gone(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    pending = Pending()
    _read(pending, {"id": 1, "method": "tools/call"})
    _read(pending, {"method": "notifications/initialized"})

    async def ends() -> None:
        with anyio.move_on_after(0.5) as waited:  # the client reads on: the end waits
            await pending.settled(lambda: gone(write))
        assert waited.cancelled_caught
        os.close(read)  # the client has gone: what is in flight is the library's to cancel
        with anyio.fail_after(30):
            await pending.settled(lambda: gone(write))

    anyio.run(ends)


def test_the_end_waits_for_no_request_answered_or_cancelled_as_the_library_matches_ids() -> None:
    """An id is matched as the library matches it ("1" is 1): a request cancelled by its
    id as a string was waited for for good, and so was a line with an ``error`` that the
    library reads as an answer, not a request (a probe)."""
    pending = Pending()
    for message in (
        {"id": 1, "method": "ping"},
        {"id": "two", "method": "ping"},
        {"id": 1, "method": "ping"},  # an id used again: two answers awaited
        {"id": "3", "method": "ping"},
        {"id": 4, "method": "ping", "error": {"code": 1, "message": "read as an answer"}},
        {"id": 5, "result": {}},  # a client's answer to the server: nothing awaited
    ):
        _read(pending, message)
    pending.answered(1)
    pending.answered(7)  # answers no request waiting
    _read(pending, {"method": "notifications/cancelled", "params": {"requestId": "1"}})
    pending.answered(3)

    async def ends(left: str | None) -> bool:
        if left is not None:
            pending.answered(left)
        with anyio.move_on_after(0.3):
            await pending.settled(lambda: False)
            return True
        return False

    assert not anyio.run(ends, None)
    assert anyio.run(ends, "two")


def test_a_line_over_the_largest_message_is_refused_unread_and_the_next_is_read() -> None:
    """A line was read whole, however long (a probe's note): one past ``max_bytes`` is
    answered as refused, its rest dropped as it is read, and the server reads on."""
    ping = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'  # awaits no answer
    big = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"y" * 5000 + b'"}}\n'
    )
    cr = ping.rstrip(b"\n") + b"\r\r" + b"z" * 100 + b"\n"  # the message, then junk
    stdin = io.BytesIO(big + ping + cr + ping.rstrip(b"\n"))
    lines = StrictLines(stdin, max_bytes=len(ping) - 1)
    sent, answers = anyio.create_memory_object_stream[SessionMessage](10)
    lines.answer = sent

    async def read() -> list[str]:
        return [line async for line in lines]

    with sent, answers:
        read_through = anyio.run(read)
        refused = [answers.receive_nowait().message for _ in range(2)]

    assert read_through == [ping.decode(), ping.rstrip(b"\n").decode()]
    for answer in refused:
        assert isinstance(answer, JSONRPCError)
        assert answer.id is None  # the line was not read: no id is known
        assert f"over {len(ping) - 1} bytes" in answer.error.message
