"""`readmit serve`'s connection guard, on a real uvicorn server over loopback.

Each wait is for something that must happen (a close), bounded generously: a slow
machine makes these tests slower, never wrong.
"""

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from click.testing import CliRunner
from fastapi import FastAPI, Request
from starlette.requests import ClientDisconnect

from builders import KEY
from readmit.cli import cli
from readmit.service.connections import GuardedH11Protocol, guarded
from readmit.store import open_store
from servicekit import free_port

WAIT = 60.0
"""The longest a test waits for the server to close a connection."""
HEAD = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"bytes": len(await request.body())}

    @app.post("/later")
    async def later(request: Request, delay: float = 1.5) -> dict[str, int]:
        await asyncio.sleep(delay)  # busy elsewhere before it reads the body
        try:
            return {"bytes": len(await request.body())}
        except ClientDisconnect:
            return {"bytes": -1}  # never sent: the connection is gone

    return app


@contextmanager
def guarded_server(
    header_timeout: float = 10.0,
    max_connections: int = 1024,
    per_client: int = 64,
    body_timeout: float = 30.0,
    body_rate: float = 1e12,  # no allowance for what was sent, unless a test asks for one
) -> Iterator[int]:
    port = free_port()
    http = guarded(header_timeout, max_connections, per_client, body_timeout, body_rate)
    config = uvicorn.Config(_app(), host="127.0.0.1", port=port, log_level="error", http=http)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=120)


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT)


def _closed(conn: socket.socket) -> bytes | None:
    """What the server sent on ``conn`` before closing it (None: still open after `WAIT`)."""
    got = b""
    try:
        while chunk := conn.recv(4096):
            got += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        return None
    return got


def _answered(conn: socket.socket) -> bytes:
    """The first response on ``conn`` (its status line and headers)."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = conn.recv(4096)
        assert chunk, f"closed before an answer ({got!r} so far)"
        got += chunk
    return got


def _then_ok(conn: socket.socket, told: bytes) -> bool:
    """Whether a 200 follows the interim answer ``told`` on ``conn`` (False: closed first)."""
    got = told.split(b"\r\n\r\n", 1)[1]
    while b"HTTP/1.1 200" not in got:
        chunk = conn.recv(4096)
        if not chunk:
            return False
        got += chunk
    return True


def test_a_connection_that_sends_half_a_request_head_is_closed_after_the_timeout() -> None:
    with guarded_server(header_timeout=0.5) as port, _connect(port) as conn:
        conn.sendall(b"GET /health HT")
        started = time.monotonic()

        assert _closed(conn) == b""
        assert time.monotonic() - started >= 0.4  # not before the timeout


def test_a_kept_alive_connection_that_starts_its_next_head_and_stalls_is_closed() -> None:
    """Sending part of the next request stops uvicorn's keep-alive timer: only ours is left."""
    with guarded_server(header_timeout=0.5) as port, _connect(port) as conn:
        conn.sendall(HEAD)
        assert _answered(conn).startswith(b"HTTP/1.1 200")
        conn.sendall(b"GET /hea")

        rest = _closed(conn)  # maybe the first response's body, never a second response
        assert rest is not None
        assert b"HTTP/" not in rest


def test_a_head_sent_in_parts_within_the_timeout_is_answered() -> None:
    with guarded_server(header_timeout=WAIT) as port, _connect(port) as conn:
        conn.sendall(HEAD[:10])
        time.sleep(0.2)
        conn.sendall(HEAD[10:])

        assert _answered(conn).startswith(b"HTTP/1.1 200")


def _post_head(length: int) -> bytes:
    return f"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_a_request_whose_body_stalls_after_its_head_is_closed_after_the_body_timeout(
    framing: str,
) -> None:
    """A head in time and then a byte now and then held the connection as long as the
    client liked: the header timeout stops at the head."""
    head = (
        _post_head(100)
        if framing == "length"
        else b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    with guarded_server(header_timeout=WAIT, body_timeout=0.5) as port, _connect(port) as conn:
        conn.sendall(head + (b"x" * 10 if framing == "length" else b"a\r\nxxxxxxxxxx\r\n"))
        started = time.monotonic()

        assert _closed(conn) == b""
        assert time.monotonic() - started >= 0.4  # not before the timeout


def test_a_body_sent_in_parts_within_the_body_timeout_is_answered() -> None:
    with guarded_server(header_timeout=0.5, body_timeout=WAIT) as port, _connect(port) as conn:
        conn.sendall(_post_head(100) + b"x" * 50)
        time.sleep(1.0)  # past the header timeout: the head is in, the body is not
        conn.sendall(b"x" * 50)

        answer = _answered(conn)
        assert answer.startswith(b"HTTP/1.1 200")


def test_a_body_the_server_has_not_asked_for_yet_is_not_timed_out() -> None:
    """Past uvicorn's 64 KiB buffer the server stops reading until the app reads: the
    client has sent everything, and the wait is the server's."""
    size = 1 << 20
    with guarded_server(header_timeout=WAIT, body_timeout=0.5) as port, _connect(port) as conn:
        conn.sendall(_post_head(size).replace(b"/echo", b"/later") + b"x" * size)

        answer = _answered(conn)
        assert answer.startswith(b"HTTP/1.1 200")


def test_a_body_that_stalls_once_the_server_reads_it_again_is_closed() -> None:
    """The deadline starts again when the server reads again; the client must then go on."""
    size = 1 << 20
    with guarded_server(header_timeout=WAIT, body_timeout=0.5) as port, _connect(port) as conn:
        conn.sendall(_post_head(2 * size).replace(b"/echo", b"/later") + b"x" * size)

        assert _closed(conn) == b""


def test_a_large_body_arriving_steadily_is_given_the_time_it_needs() -> None:
    """The deadline grows with what arrives: a whole body at 16 KiB/s or faster is read."""
    size, piece = 120 * 1024, 4 * 1024
    with (
        guarded_server(header_timeout=WAIT, body_timeout=1.5, body_rate=16 * 1024) as port,
        _connect(port) as conn,
    ):
        conn.sendall(_post_head(size))
        for _ in range(size // piece):  # 120 KiB in about 3 s, twice the timeout
            conn.sendall(b"x" * piece)
            time.sleep(0.1)

        assert _answered(conn).startswith(b"HTTP/1.1 200")


def test_a_body_that_stalls_is_closed_a_timeout_after_its_last_bytes_whatever_it_sent() -> None:
    """Credit for what was sent was spent all at once: 1 MiB and then nothing held the
    connection 94 s past its last byte (a review). It still grows the deadline, never past
    the timeout after the last bytes."""
    with (
        guarded_server(header_timeout=WAIT, body_timeout=1.5, body_rate=1024) as port,
        _connect(port) as conn,
    ):
        started = time.monotonic()
        conn.sendall(_post_head(100 * 1024) + b"x" * 16 * 1024)  # 16 s of credit
        time.sleep(0.3)
        sent = time.monotonic()
        conn.sendall(b"x" * 16 * 1024)  # then nothing more

        assert _closed(conn) == b""
        assert time.monotonic() - sent >= 1.5  # the timeout after the last bytes
        assert time.monotonic() - started < WAIT / 2  # not the 32 s its bytes earned


def test_a_client_waiting_for_100_continue_is_not_timed_out_while_the_app_is_busy() -> None:
    """Nothing arrives while the client waits to be told to send: the wait is the app's."""
    head = (
        _post_head(2)
        .replace(b"/echo", b"/later")
        .replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n")
    )
    with guarded_server(header_timeout=WAIT, body_timeout=0.5) as port, _connect(port) as conn:
        conn.sendall(head)
        told = _answered(conn)  # the app reads after 1.5 s: only then is 100 sent
        assert told.startswith(b"HTTP/1.1 100")
        conn.sendall(b"ab")

        assert _then_ok(conn, told)


def test_the_deadline_starts_again_when_the_app_answers_100_continue_before_it_passes() -> None:
    """A wait for the app shorter than the timeout was still charged to the client."""
    head = (
        _post_head(4)
        .replace(b"/echo", b"/later?delay=3")
        .replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n")
    )
    with guarded_server(header_timeout=WAIT, body_timeout=4.0) as port, _connect(port) as conn:
        conn.sendall(head)
        told = _answered(conn)  # 100 Continue, once the app reads, 3 s on
        conn.sendall(b"ab")
        time.sleep(2.0)  # past the 4 s from the head, within 4 s of the 100
        conn.sendall(b"cd")

        assert _then_ok(conn, told)


def test_a_kept_alive_connection_gets_a_new_body_timeout_for_each_request() -> None:
    with guarded_server(header_timeout=WAIT, body_timeout=0.5) as port, _connect(port) as conn:
        conn.sendall(_post_head(2) + b"ab")
        got = _answered(conn)
        assert got.startswith(b"HTTP/1.1 200")
        time.sleep(1.0)  # longer than the body timeout, between two whole requests
        conn.sendall(HEAD)

        while got.count(b"HTTP/1.1 200") < 2:
            chunk = conn.recv(4096)
            assert chunk, "closed before the second answer"
            got += chunk


@pytest.mark.parametrize(("total", "per_client"), [(64, 3), (3, 64)])
def test_a_connection_past_a_cap_is_closed_unread_and_served_once_others_close(
    total: int, per_client: int
) -> None:
    with guarded_server(WAIT, max_connections=total, per_client=per_client) as port:
        held = [_connect(port) for _ in range(3)]  # WAIT: not timed out on a slow machine
        for conn in held:
            conn.sendall(b"GET /")  # each holds its place with half a request
        with _connect(port) as extra:
            extra.sendall(HEAD)
            assert _closed(extra) == b""  # not answered: closed before it was read
        for conn in held:
            conn.close()
        deadline = time.monotonic() + WAIT
        while True:  # the server sees the closes in its own time
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=WAIT).is_success
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.05)


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--header-timeout", "0"),
        ("--body-timeout", "0"),
        ("--max-connections", "0"),
        ("--max-connections-per-client", "0"),
    ],
)
def test_serve_refuses_a_bound_that_would_refuse_everything(flag: str, value: str) -> None:
    result = CliRunner().invoke(cli, ["serve", flag, value])

    assert result.exit_code == 2
    assert flag in result.output


def test_serve_runs_uvicorn_with_the_guard_its_flags_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr("uvicorn.run", lambda app, **options: seen.update(options))
    monkeypatch.setattr("readmit.collector.tune_for_server", lambda: None)
    made = tmp_path / "r.db"
    open_store(f"sqlite:///{made}").close()
    flags = [
        "--header-timeout",
        "2.5",
        "--body-timeout",
        "4.5",
        "--max-connections",
        "7",
        "--max-connections-per-client",
        "3",
    ]

    result = CliRunner().invoke(
        cli,
        ["serve", "--db", f"sqlite:///{made}", *flags],
        env={"READMIT_SIGNING_KEY": KEY.decode()},
    )

    assert result.exit_code == 0, result.output
    guard = seen["http"]
    assert issubclass(guard, GuardedH11Protocol)
    bounds = (guard.header_timeout, guard.body_timeout, guard.max_connections, guard.per_client)
    assert bounds == (2.5, 4.5, 7, 3)
    assert seen["proxy_headers"] is False  # a caller is its connection's address
