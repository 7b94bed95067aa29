"""`readmit serve`'s connection guard, on a real uvicorn server over loopback.

Each wait is for something that must happen (a close), bounded generously: a slow
machine makes these tests slower, never wrong.
"""

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
from fastapi import FastAPI

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

    return app


@contextmanager
def guarded_server(
    header_timeout: float = 10.0, max_connections: int = 1024, per_client: int = 64
) -> Iterator[int]:
    port = free_port()
    http = guarded(header_timeout, max_connections, per_client)
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
        got += conn.recv(4096)
    return got


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
    [("--header-timeout", "0"), ("--max-connections", "0"), ("--max-connections-per-client", "0")],
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
    assert (guard.header_timeout, guard.max_connections, guard.per_client) == (2.5, 7, 3)
