"""The gate before the body: a key, the request rate and the agent's byte budget are decided
from the headers, so a refused body is never read, let alone parsed.

"Never read" is observed at the ASGI edge: the app is called with a ``receive`` that counts
how often the body was asked for, and over real loopback HTTP by declaring a body and
never sending it (an answer can only come from the headers).
"""

import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
from starlette.types import Message, Scope

from readmit.errors import ConfigError
from readmit.service.app import create_app
from readmit.service.limits import Limits, Throttle
from readmit.service.settings import limits_from_flags
from servicekit import Team, serving

NOTE = {"op": "assert", "author": "A2", "item": {"id": "n0", "text": "A note."}}


@dataclass
class Clock:
    """The throttle's monotonic clock, moved by hand."""

    t: float = 0.0

    def __call__(self) -> float:
        return self.t


def limited(team: Team, **limits: Any) -> Clock:
    clock = Clock()
    limits.setdefault("refusal_pause", 0.0)  # answered at once, unless a test says otherwise
    team.service.limits = Limits(**limits)
    team.service.throttle = Throttle(team.service.limits, monotonic=clock)
    return clock


def notes(count: int, start: int = 0) -> bytes:
    batch = [{**NOTE, "item": {"id": f"n{start + i}", "text": "A note."}} for i in range(count)]
    return json.dumps({"events": batch}).encode()


@dataclass
class Exchange:
    """One request played straight into the ASGI app, counting the body reads."""

    body: bytes
    reads: int = 0
    sent: list[Message] = field(default_factory=list)

    async def receive(self) -> Message:
        self.reads += 1
        return {"type": "http.request", "body": self.body, "more_body": False}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.sent[0]["headers"]}

    def json(self) -> Any:
        return json.loads(b"".join(m.get("body", b"") for m in self.sent[1:]))


def post(team: Team, path: str, body: bytes, key: str | None) -> Exchange:
    """POST ``body`` to ``path`` with ``key`` (a raw ``Authorization`` value) as one ASGI call."""
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if key is not None:
        headers.append((b"authorization", key.encode()))
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    exchange = Exchange(body)
    anyio.run(create_app(team.service), scope, exchange.receive, exchange.send)
    return exchange


def test_a_flood_of_unparseable_batches_is_refused_from_the_headers_once_its_budget_is_spent(
    team: Team,
) -> None:
    """The flood of bench/service.py --flood: batches over --max-events, back to back."""
    limited(team, max_events=10, max_body_bytes=10_000, byte_rate=100.0)
    flood = notes(50)  # 50 events: over max_events, within max_body_bytes
    key = f"Bearer {team.keys['A2']}"

    answers = [post(team, "/v1/events", flood, key) for _ in range(20)]

    parsed = [a for a in answers if a.reads]
    refused = answers[len(parsed) :]
    assert len(parsed) == 10_000 // len(flood)  # the bucket holds one maximal body
    assert {a.status for a in parsed} == {413}
    assert {a.status for a in refused} == {429}
    assert all(a.reads == 0 for a in refused)
    assert refused[0].json()["code"] == "rate_limited"
    assert "bytes of request body per second" in refused[0].json()["message"]
    left = 10_000 % len(flood)
    assert int(refused[0].headers["retry-after"]) == -(-(len(flood) - left) // 100)
    assert team.service.store.events("trip") == []


def test_a_body_over_the_budget_is_answered_after_its_pause_and_still_unread(team: Team) -> None:
    """A sender of refused bodies waits (`Limits.refusal_pause`), instead of keeping the
    server draining them; the pause is the Retry-After, at most the limit."""
    limited(team, max_body_bytes=10_000, byte_rate=100.0, refusal_pause=0.3)
    key = f"Bearer {team.keys['A2']}"
    assert post(team, "/v1/events", b" " * 10_000, key).status == 422  # the budget is spent

    start = time.monotonic()
    refused = post(team, "/v1/events", notes(20), key)
    waited = time.monotonic() - start

    assert refused.status == 429
    assert refused.reads == 0
    assert int(refused.headers["retry-after"]) > 10
    assert waited >= 0.3
    assert waited < 30  # the pause, not the Retry-After (a loaded machine meets this)


def test_the_byte_budget_is_the_agents_own_and_refills_with_time(team: Team) -> None:
    body = notes(1)
    clock = limited(team, max_body_bytes=3 * len(body) + 10, byte_rate=100.0)
    spent = [post(team, "/v1/events", notes(1, n), f"Bearer {team.keys['A2']}") for n in range(4)]
    assert [a.status for a in spent] == [200, 200, 200, 429]

    theirs = notes(1, 50).replace(b"A2", b"A3")
    other = post(team, "/v1/events", theirs, f"Bearer {team.keys['A3']}")
    clock.t = len(body) / 100.0
    again = post(team, "/v1/events", notes(1, 99), f"Bearer {team.keys['A2']}")

    assert other.status == 200
    assert again.status == 200


@pytest.mark.parametrize(
    "key", [None, "Bearer rmk_wrong", "Basic QTE6eA==", "Bearer", "bearer  "], ids=repr
)
def test_a_body_without_a_valid_key_is_401_unread(team: Team, key: str | None) -> None:
    answer = post(team, "/v1/events", notes(3), key)

    assert answer.status == 401
    assert answer.json()["code"] == "unauthenticated"
    assert answer.reads == 0
    body = b"".join(m.get("body", b"") for m in answer.sent[1:])
    assert body.startswith(b'{"code":"unauthenticated","message":')  # as the app's own answers


def test_a_request_over_the_request_rate_is_429_unread(team: Team) -> None:
    limited(team, rate=1.0, burst=1)
    key = f"Bearer {team.keys['A2']}"
    assert post(team, "/v1/events", notes(1), key).status == 200

    answer = post(team, "/v1/events", notes(1, 1), key)

    assert answer.status == 429
    assert "requests per second" in answer.json()["message"]
    assert answer.reads == 0


def test_routes_without_a_key_are_not_gated(team: Team) -> None:
    limited(team, max_body_bytes=1000, byte_rate=1.0)
    view = json.dumps({"view": {"items": []}}).encode()

    answers = [post(team, "/v1/verify", view, None) for _ in range(3)]

    assert {a.status for a in answers} == {200}


def test_a_declared_body_over_the_budget_is_answered_before_it_is_sent(team: Team) -> None:
    limited(team, max_body_bytes=100_000, byte_rate=1000.0)
    head = (
        "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {team.keys['A2']}\r\nContent-Length: {{length}}\r\n"
        "Connection: close\r\n\r\n"
    )

    with serving(create_app(team.service)) as url:
        host, port = url.removeprefix("http://").split(":")
        with httpx.Client(base_url=url, timeout=60) as client:
            spend = client.post("/v1/events", content=b"x" * 99_000, headers=team.auth("A2"))
        # The body is declared and never sent: only an answer from the headers can come back.
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(head.format(length=50_000).encode())
            answer = b"".join(iter(lambda: sock.recv(65536), b""))

    assert spend.status_code == 422  # read and parsed: not JSON
    assert answer.startswith(b"HTTP/1.1 429")
    assert b"retry-after: 49" in answer.lower()
    assert b'"rate_limited"' in answer


@pytest.mark.loopback
def test_a_body_declared_both_by_length_and_by_chunks_is_refused_unread(team: Team) -> None:
    """A body of megabytes in chunks, declared as one byte, was read, parsed and charged one
    byte: it passed the byte budget (a security helper's attack)."""
    limited(team, max_body_bytes=100_000, byte_rate=1.0)
    chunk = b"x" * 60_000
    request = (
        (
            "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {team.keys['A2']}\r\nContent-Length: 1\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        ).encode()
        + f"{len(chunk):x}\r\n".encode()
        + chunk
        + b"\r\n0\r\n\r\n"
    )

    with serving(create_app(team.service)) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(request)
            answer = b"".join(iter(lambda: sock.recv(65536), b""))

    assert answer.startswith(b"HTTP/1.1 422")
    assert b"Content-Length or Transfer-Encoding, not both" in answer
    assert team.service.store.events("trip") == []


@pytest.mark.loopback
def test_a_chunked_body_is_charged_as_it_arrives(client: httpx.Client, team: Team) -> None:
    limited(team, max_body_bytes=20_000, byte_rate=1.0)
    json_type = {"Content-Type": "application/json"}
    spend = b" " * 17_000 + notes(1)  # leaves less than the chunked batch below
    spent = client.post("/v1/events", content=spend, headers={**team.auth("A2"), **json_type})
    assert spent.status_code == 200
    before = team.service.store.events("trip")

    def chunks() -> Iterator[bytes]:
        batch = json.loads(notes(60, 1))["events"]
        yield b'{"events": ['
        for event in batch[:-1]:
            yield json.dumps(event).encode() + b","
        yield json.dumps(batch[-1]).encode() + b"]}"

    refused = client.post(
        "/v1/events",
        content=chunks(),
        headers={**team.auth("A2"), **json_type},
    )

    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert refused.headers["connection"] == "close"  # the rest of the stream is not waited for
    assert team.service.store.events("trip") == before


@pytest.mark.parametrize("bad", [-1.0, 61.0, float("nan"), float("inf")])
def test_the_refusal_pause_is_a_setting_of_0_to_60_seconds(bad: float) -> None:
    assert limits_from_flags(refusal_pause=0.0).refusal_pause == 0.0
    assert Limits().refusal_pause == 1.0
    with pytest.raises(ConfigError, match="refusal_pause must be 0 to 60 seconds"):
        Limits(refusal_pause=bad)


def test_the_byte_rate_is_a_setting_and_must_be_positive() -> None:
    assert limits_from_flags(byte_rate=1024.0).byte_rate == 1024.0
    assert Limits().byte_rate == 256 * 1024
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="byte_rate"):
            Limits(byte_rate=bad)
