"""`readmit.service.mcp_stdin`: the end of stdin waits for answers while the client is there."""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from readmit.service.mcp_stdin import Pending, gone


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


def test_the_end_waits_for_an_unanswered_request_until_the_client_has_gone(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    pending = Pending()
    pending.read({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
    pending.read({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def ends() -> None:
        with anyio.move_on_after(0.5) as waited:  # the client reads on: the end waits
            await pending.settled(lambda: gone(write))
        assert waited.cancelled_caught
        os.close(read)  # the client has gone: what is in flight is the library's to cancel
        with anyio.fail_after(30):
            await pending.settled(lambda: gone(write))

    anyio.run(ends)


def test_the_end_waits_for_no_request_answered_or_cancelled() -> None:
    pending = Pending()
    for message in (
        {"id": 1, "method": "ping"},
        {"id": "two", "method": "ping"},
        {"id": 1, "method": "ping"},  # an id used again: two answers awaited
        {"id": 3},  # a client's answer to the server: nothing awaited
    ):
        pending.read({"jsonrpc": "2.0", **message})
    pending.answered(1)
    pending.answered(7)  # answers no request waiting
    pending.read(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    )

    async def ends(left: str | None) -> bool:
        if left is not None:
            pending.answered(left)
        with anyio.move_on_after(0.3):
            await pending.settled(lambda: False)
            return True
        return False

    assert not anyio.run(ends, None)
    assert anyio.run(ends, "two")
