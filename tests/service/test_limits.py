"""Limits at the service edge: body size before authentication, batch and text sizes, rate,
concurrent returns, abandoned returns and crashes that stay JSON."""

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import anyio
import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.errors import RateLimited
from readmit.events import OpenObligation, Resolve
from readmit.examples.travel import travel_scenario
from readmit.service.app import _slot, create_app
from readmit.service.connections import guarded
from readmit.service.limits import Limits, Throttle
from readmit.service.shared_limits import SharedThrottle
from readmit.store import SqlStore
from readmit.testing import FunctionVerifier
from servicekit import Team, free_port, make_team, play, serving

NOTE = {"op": "assert", "author": "A2", "item": {"id": "n0", "text": "A note."}}


def limited(team: Team, **limits: Any) -> Team:
    team.service.limits = Limits(**limits)
    team.service.throttle = Throttle(team.service.limits, monotonic=lambda: 0.0)
    return team


def raw_request(url: str, head: str) -> bytes:
    """Send ``head`` (request line and headers, no body) and read the answer until it closes."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head.encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_declared_body_over_the_limit_is_413_before_reading_or_authenticating(
    team: Team,
) -> None:
    limited(team, max_body_bytes=1000)
    head = (
        "POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000000000\r\nConnection: close\r\n\r\n"
    )

    with serving(create_app(team.service)) as url:
        answer = raw_request(url, head)

    assert answer.startswith(b"HTTP/1.1 413")
    assert b'"payload_too_large"' in answer


@pytest.mark.loopback
def test_a_chunked_body_is_cut_off_at_the_limit(client: httpx.Client, team: Team) -> None:
    limited(team, max_body_bytes=1000)

    def body() -> Iterator[bytes]:
        yield b'{"view": {"items": ['
        for _ in range(100):
            yield b'{"id": "x", "text": "y"},'
        yield b"{}]}}"

    response = client.post(
        "/v1/verify", content=body(), headers={"Content-Type": "application/json"}
    )

    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert response.headers["connection"] == "close"  # the rest of the stream is not waited for


def test_too_many_events_in_one_request_are_413_and_store_nothing(
    client: httpx.Client, team: Team
) -> None:
    limited(team, max_events=3)
    batch = [{**NOTE, "item": {"id": f"n{i}", "text": "A note."}} for i in range(4)]

    response = client.post("/v1/events", json={"events": batch}, headers=team.auth("A2"))

    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert team.service.store.events("trip") == []


@pytest.mark.parametrize(
    ("item", "code"),
    [
        ({"id": "n0", "text": "x" * 101}, "payload_too_large"),
        ({"id": "n" * 101, "text": "x"}, "payload_too_large"),
        ({"id": "n\x00", "text": "x"}, "invalid_input"),
    ],
)
def test_long_or_nul_strings_are_refused(
    client: httpx.Client, team: Team, item: dict[str, str], code: str
) -> None:
    limited(team, max_text_chars=100)

    response = client.post(
        "/v1/events", json={"events": [{**NOTE, "item": item}]}, headers=team.auth("A2")
    )

    assert response.json()["code"] == code
    assert team.service.store.events("trip") == []


def test_an_agent_over_its_rate_gets_429_with_retry_after_and_others_do_not(
    client: httpx.Client, team: Team
) -> None:
    limited(team, rate=1.0, burst=3)
    for _ in range(3):
        assert client.get("/v1/state", headers=team.auth("A1")).status_code == 200

    refused = client.get("/v1/state", headers=team.auth("A1"))
    other = client.get("/v1/state", headers=team.auth("A2"))

    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert refused.headers["Retry-After"] == "1"
    assert other.status_code == 200


def test_the_bucket_refills_with_time(client: httpx.Client, team: Team) -> None:
    limited(team, rate=1.0, burst=1)
    t = [0.0]
    team.service.throttle.monotonic = lambda: t[0]
    assert client.get("/v1/state", headers=team.auth("A1")).status_code == 200
    assert client.get("/v1/state", headers=team.auth("A1")).status_code == 429

    t[0] = 1.0

    assert client.get("/v1/state", headers=team.auth("A1")).status_code == 200


@pytest.mark.parametrize("ended", [False, True], ids=["kept", "left out"])
def test_a_departure_is_charged_its_checkpoint_and_the_next_waits_until_it_is_paid(
    client: httpx.Client, team: Team, ended: bool
) -> None:
    """Each departure keeps a row for every item its agent may read, whether it keeps it
    or leaves it out as no longer valid: departing over and over, one agent grew the store
    by 280 MB a minute in a workspace of 5,000 items (240 with them all expired)."""
    until = {"valid_to": "2001-01-01T00:00:00Z"} if ended else {}
    batch = [{**NOTE, "item": {"id": f"n{n}", "text": f"Note {n}.", **until}} for n in range(20)]
    assert client.post("/v1/events", json={"events": batch}, headers=team.auth("A2")).is_success
    limited(team, byte_rate=48.0 * 20, max_body_bytes=48 * 10)  # one checkpoint of 20 a second
    t = [0.0]
    team.service.throttle.monotonic = lambda: t[0]
    first = client.post("/v1/depart", headers=team.auth("A1"))

    refused = client.post("/v1/depart", headers=team.auth("A1"))
    other = client.post("/v1/depart", headers=team.auth("A2"))  # its own budget
    t[0] = 1.0
    paid = client.post("/v1/depart", headers=team.auth("A1"))

    assert first.is_success, first.text
    assert (refused.status_code, refused.json()["code"]) == (429, "rate_limited")
    assert other.is_success
    assert paid.is_success, paid.text


def test_an_agent_over_its_event_rate_waits_and_stores_nothing_meanwhile(
    client: httpx.Client, team: Team
) -> None:
    limited(team, event_rate=10.0, max_events=4)
    batch = [{**NOTE, "item": {"id": f"n{n}", "text": f"Note {n}."}} for n in range(4)]
    assert client.post("/v1/events", json={"events": batch}, headers=team.auth("A2")).is_success

    refused = client.post("/v1/events", json={"events": [NOTE]}, headers=team.auth("A2"))

    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert "events per second" in refused.json()["message"]
    assert refused.headers["Retry-After"] == "1"
    assert len(team.service.store.events("trip")) == 4


def test_returns_over_the_concurrent_limit_are_429(client: httpx.Client, team: Team) -> None:
    limited(team, concurrent_returns=1)
    assert client.post("/v1/depart", json={}, headers=team.auth("A1")).status_code == 200

    with team.service.throttle.return_slot(("trip", "A1")):
        busy = client.post(
            "/v1/return", json={"task": "t", "purpose": "p"}, headers=team.auth("A1")
        )
    free = client.post("/v1/return", json={"task": "t", "purpose": "p"}, headers=team.auth("A1"))

    assert busy.status_code == 429
    assert busy.json()["code"] == "rate_limited"
    assert "Retry-After" in busy.headers
    assert free.status_code == 200


def test_a_departure_takes_a_return_slot(client: httpx.Client, team: Team) -> None:
    """Departures at once each passed the byte budget before any was charged for its
    checkpoint: 41 of 45 were kept, 4.1M rows, the workspace locked for 18 s (a probe)."""
    limited(team, concurrent_returns=1)

    with team.service.throttle.return_slot(("trip", "A1")):
        busy = client.post("/v1/depart", json={}, headers=team.auth("A1"))
        other = client.post("/v1/depart", json={}, headers=team.auth("A2"))  # its own slots
    free = client.post("/v1/depart", json={}, headers=team.auth("A1"))

    assert busy.status_code == 429
    assert busy.json()["message"] == "at most 1 returns and departures at a time per agent"
    assert busy.headers["Retry-After"] == "1"
    assert team.service.store.away("trip") == ["A1", "A2"]  # after the free one only
    assert (other.status_code, free.status_code) == (200, 200)


def test_an_unexpected_error_is_a_json_500_without_a_traceback(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*args: object) -> None:  # a bug (a verifier's failure is no answer instead)
        raise RuntimeError("secret internals")

    with TestClient(create_app(team.service)) as test_client:
        client = cast(httpx.Client, test_client)
        scenario = travel_scenario()
        returns = [i for i, e in enumerate(scenario["events"]) if e["op"] == "return"]
        play(client, team, {"events": scenario["events"][: returns[0]]})
        monkeypatch.setattr(team.service.store, "return_context", crash)
        team.clock.set(scenario["events"][returns[0]]["at"])
        event = scenario["events"][returns[0]]
        response = client.post(
            "/v1/return",
            json={"task": event["task"], "purpose": event["purpose"]},
            headers=team.auth(event["agent"]),
        )

    assert response.status_code == 500
    assert response.json() == {
        "code": "internal",
        "message": "internal error (the server's log has it)",
        "details": None,
    }
    assert "secret" not in response.text


def test_an_abandoned_return_stops_and_records_nothing(store: SqlStore) -> None:
    team = make_team(store)
    scenario = travel_scenario()
    first = next(i for i, e in enumerate(scenario["events"]) if e["op"] == "return")
    started = threading.Event()
    seen_cancel: list[bool] = []

    def slow(pair: Pair) -> Verdict:
        started.set()
        running = team.service.throttle.running_returns(("trip", "A1"))
        seen_cancel.append(all(flag.wait(60) for flag in running))
        return Verdict(invalidates=False, confidence=1.0)

    with serving(create_app(team.service)) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            play(client, team, {"events": scenario["events"][:first]})
        verifier = FunctionVerifier(slow)
        team.service.verifier = verifier
        event = scenario["events"][first]
        team.clock.set(event["at"])
        body = b'{"task": "%s", "purpose": "%s"}' % (
            event["task"].encode(),
            event["purpose"].encode(),
        )
        host, port = url.removeprefix("http://").split(":")
        sock = socket.create_connection((host, int(port)), timeout=30)
        sock.sendall(
            b"POST /v1/return HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + team.keys["A1"].encode() + b"\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body
        )
        assert started.wait(60)
        sock.close()
        with httpx.Client(base_url=url, timeout=60) as client:
            decisions = client.get("/v1/decisions", headers=team.auth("A2"))  # a later request
            assert decisions.status_code == 200
        calls = len(verifier.calls)

    assert seen_cancel[0] is True
    assert calls == 1
    assert store.decisions("trip", "A1") == []


@pytest.mark.loopback
def test_views_are_verified_off_the_event_loop_and_only_so_many_at_once(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("readmit.service.app.VERIFY_SLOTS", 1)
    entered, release = threading.Event(), threading.Event()

    def verify(view: Any, at: Any = None) -> dict[str, Any]:
        entered.set()
        release.wait(60)
        return {"valid": False, "problem": "held by the test"}

    monkeypatch.setattr(team.service, "verify", verify)
    first: list[httpx.Response] = []
    with serving(create_app(team.service)) as url, httpx.Client(base_url=url, timeout=60) as http:
        sender = threading.Thread(
            target=lambda: first.append(http.post("/v1/verify", json={"view": {}}))
        )
        sender.start()
        assert entered.wait(60)
        health = http.get("/health")  # answered while the first view is being checked
        second = http.post("/v1/verify", json={"view": {}})
        release.set()
        sender.join(60)
        third = http.post("/v1/verify", json={"view": {}})  # the slot is free again

    assert health.status_code == 200
    assert (second.status_code, second.json()["code"]) == (429, "rate_limited")
    assert second.headers["Retry-After"] == "1"
    assert [r.status_code for r in (*first, third)] == [200, 200]


@pytest.mark.loopback
def test_only_so_many_views_are_received_at_once_and_one_past_that_is_refused_unread(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/v1/verify needs no key: each body on its way was held whole, as many as the
    connections allowed (8 MiB each)."""
    monkeypatch.setattr("readmit.service.app.VERIFY_READING", 2)
    monkeypatch.setattr("readmit.service.app.VERIFY_READING_PER_CLIENT", 2)
    head = b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    with serving(create_app(team.service)) as url, httpx.Client(base_url=url, timeout=60) as http:
        host, port = url.removeprefix("http://").split(":")
        slow = [socket.create_connection((host, int(port)), timeout=60) for _ in range(2)]
        for sock in slow:
            sock.sendall(head + b"Content-Length: 100000\r\n\r\n" + b'{"view": {')
        deadline = time.monotonic() + 60
        while True:  # until the server has both on their way (it reads them in its time)
            third = http.post("/v1/verify", json={"view": {}})
            if third.status_code == 429 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        for sock in slow:
            sock.close()
        deadline = time.monotonic() + 60
        while (after := http.post("/v1/verify", json={"view": {}})).status_code == 429:
            assert time.monotonic() < deadline  # the closes are seen in the server's time
            time.sleep(0.05)

    assert (third.status_code, third.json()["code"]) == (429, "rate_limited")
    assert "being sent at once" in third.json()["message"]
    assert after.status_code == 200


@pytest.mark.loopback
def test_one_address_cannot_take_every_place_to_send_a_view(team: Team) -> None:
    """Sixteen idle connections from one address kept every caller from verifying."""
    head = b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")
    with (
        serving(create_app(team.service)) as url,
        httpx.Client(base_url=url, timeout=60) as here,
        httpx.Client(base_url=url, timeout=60, transport=elsewhere) as there,
    ):
        host, port = url.removeprefix("http://").split(":")
        slow = [socket.create_connection((host, int(port)), timeout=60) for _ in range(2)]
        for sock in slow:
            sock.sendall(head + b"Content-Length: 100000\r\n\r\n" + b'{"view": {')
        deadline = time.monotonic() + 60
        while (same := here.post("/v1/verify", json={"view": {}})).status_code != 429:
            assert time.monotonic() < deadline  # until the server has both on their way
            time.sleep(0.05)
        other = there.post("/v1/verify", json={"view": {}})
        for sock in slow:
            sock.close()

    assert "being sent at once" in same.json()["message"]
    assert other.status_code == 200, other.text


@pytest.mark.loopback
def test_a_body_cut_off_by_its_deadline_is_no_unexpected_error(
    team: Team, caplog: pytest.LogCaptureFixture
) -> None:
    """The route's read raised ClientDisconnect: logged with its traceback as a bug, and a
    500 sent to a closed connection."""
    port = free_port()
    http = guarded(10.0, 1024, 64, body_timeout=0.3)
    config = uvicorn.Config(create_app(team.service), host="127.0.0.1", port=port, http=http)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(
                b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            assert sock.recv(4096) == b""  # closed, unanswered
        time.sleep(0.2)  # the route's task sees the disconnect in its own time
    finally:
        server.should_exit = True
        thread.join(timeout=120)

    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text


def test_a_verify_time_outside_the_calendar_is_422(client: httpx.Client) -> None:
    sent = {"view": {}, "at": "0001-01-01T00:00:00+14:00"}

    response = client.post("/v1/verify", json=sent)

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request")
    assert "outside the years 1 to 9999 in UTC" in response.json()["message"]


def test_a_number_is_no_time_in_any_body(client: httpx.Client, team: Team) -> None:
    bodies = {
        "/v1/memories": {"id": "m", "text": "A note.", "source": "s", "at": 0},
        "/v1/depart": {"at": -1},
        "/v1/return": {"at": 1_800_000_000},
        "/v1/verify": {"view": {}, "at": 0},
    }

    for path, body in bodies.items():
        response = client.post(path, json=body, headers=team.auth("A1"))
        assert response.status_code == 422, path
        assert "must be an RFC 3339 time" in response.json()["message"], path


def _obligation(n: int, labels: int) -> dict[str, Any]:
    names = [f"d{i}" for i in range(labels)]
    return {
        "op": "obligation",
        "author": "A2",
        "obligation": {
            "id": f"o{n}",
            "text": "Keep it booked.",
            "role": "booking",
            "requires": names,
            "critical": names[:1],
            "frontier": {"id": f"f{n}", "text": "Nothing yet."},
        },
    }


def test_an_obligation_or_an_item_with_too_many_labels_is_413_and_stores_nothing(
    client: httpx.Client, team: Team
) -> None:
    limited(team, max_labels=3)
    before = len(team.service.store.events("trip"))
    item = {**NOTE, "item": {"id": "n1", "text": "A note.", "supports": ["a", "b", "c", "d"]}}

    many = client.post(
        "/v1/events", json={"events": [NOTE, _obligation(1, 4)]}, headers=team.auth("A2")
    )
    supports = client.post("/v1/events", json={"events": [item]}, headers=team.auth("A2"))

    assert (many.status_code, many.json()["code"]) == (413, "payload_too_large")
    assert many.json()["message"] == ("events[1]: obligation.requires names 4 labels; at most 3")
    assert supports.json()["message"] == "events[0]: item.supports names 4 labels; at most 3"
    assert len(team.service.store.events("trip")) == before
    assert _post_one(client, team, _obligation(1, 3)).status_code == 200


@pytest.mark.parametrize(
    ("field", "said"),
    [
        ("depends_on", "item.depends_on names 4 premises"),
        ("cites", "item.cites names 4 citations"),
        ("purposes", "item.purposes names 4 purposes"),
        ("readers.principals", "item.readers.principals names 4 principals"),
        ("readers.roles", "item.readers.roles names 4 roles"),
    ],
)
def test_every_set_of_an_item_is_bounded_and_refused_before_it_is_read(
    client: httpx.Client, team: Team, field: str, said: str
) -> None:
    """A helper's item of 800,000 readers took the server 1.8 s to parse and 80 MB to hold,
    and items of 1,000 premises each slowed every teammate's return: only labels and
    ``supports`` were bounded. The names need not exist: the size is refused first."""
    limited(team, max_labels=3)
    before = len(team.service.store.events("trip"))
    names = [f"x{n}" for n in range(4)]
    item: dict[str, Any] = {"id": "n1", "text": "A note."}
    if field.startswith("readers."):
        item["readers"] = {field.removeprefix("readers."): names}
    else:
        item[field] = names

    response = _post_one(client, team, {**NOTE, "id": "big", "item": item})

    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")
    assert response.json()["message"] == f"event 'A2/big' (events[0]): {said}; at most 3"
    assert response.json()["details"]["fields"] == [f"item.{field}"]
    assert len(team.service.store.events("trip")) == before


def _post_one(client: httpx.Client, team: Team, event: dict[str, Any]) -> httpx.Response:
    return client.post("/v1/events", json={"events": [event]}, headers=team.auth("A2"))


def test_a_principal_holds_only_so_many_open_obligations_and_others_are_not_crowded_out(
    client: httpx.Client, team: Team
) -> None:
    events = [r.event for r in team.service.store.events("trip")]  # the family's, all of them
    held = sum(isinstance(e, OpenObligation) for e in events) - sum(
        isinstance(e, Resolve) for e in events
    )
    limited(team, max_open_obligations=held + 2)
    opened = [_post_one(client, team, _obligation(n, 1)) for n in range(2)]

    over = _post_one(client, team, _obligation(2, 1))
    agency = {**_obligation(9, 1), "author": "X1"}
    agency["obligation"] = {**agency["obligation"], "role": "partner"}
    theirs = client.post("/v1/events", json={"events": [agency]}, headers=team.auth("X1"))
    resolve = {"op": "resolve", "author": "A2", "target": "o0"}
    assert _post_one(client, team, resolve).status_code == 200
    again = _post_one(client, team, _obligation(2, 1))

    assert [r.status_code for r in opened] == [200, 200]
    assert (over.status_code, over.json()["code"]) == (422, "invalid_input")
    assert "open obligations here, over" in over.json()["message"]
    assert theirs.status_code == 200  # another principal's count is its own
    assert again.status_code == 200


def test_a_bucket_refills_from_its_last_take_and_no_further_than_its_size() -> None:
    t = [0.0]
    throttle = Throttle(Limits(rate=1.0, burst=2), monotonic=lambda: t[0])
    agent = ("trip", "A1")

    def takes(n: int) -> list[bool]:
        made = []
        for _ in range(n):
            try:
                throttle.admit_request(agent)
            except RateLimited:
                made.append(False)
            else:
                made.append(True)
        return made

    emptied = takes(2)
    t[0] = 1.0
    one_back = takes(2)  # one second: one token, counted once
    t[0] = 100.0
    full = takes(3)  # a long wait fills the bucket to its size, no more

    assert (emptied, one_back, full) == ([True, True], [True, False], [True, True, False])


@pytest.mark.loopback
@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_a_chunked_body_is_charged_to_the_byte_budget(
    client: httpx.Client, team: Team, shared: bool
) -> None:
    """A body without a declared length is charged as it arrives, chunk by chunk."""
    limited(team, byte_rate=1.0, max_body_bytes=1000, refusal_pause=0.0, shared=shared)
    if shared:
        team.service.throttle = SharedThrottle(team.service.limits, team.service.store)

    def body(n: int) -> Iterator[bytes]:
        text = json.dumps({"events": [{**NOTE, "item": {"id": f"n{n}", "text": "x" * 500}}]})
        yield text[:100].encode()
        yield text[100:].encode()

    headers = {**team.auth("A2"), "Content-Type": "application/json"}
    first = client.post("/v1/events", content=body(0), headers=headers)
    recorded = len(team.service.store.events("trip"))
    second = client.post("/v1/events", content=body(1), headers=headers)  # 400 bytes left

    assert first.status_code == 200, first.text
    assert (second.status_code, second.json()["code"]) == (429, "rate_limited")
    assert "bytes of request body" in second.json()["message"]
    assert len(team.service.store.events("trip")) == recorded


def test_a_return_slot_is_given_back_when_the_request_is_cancelled() -> None:
    """`_slot` gives the slot back in a worker thread even as its request is cancelled."""
    throttle = Throttle(Limits(concurrent_returns=1))
    agent = ("trip", "A1")

    async def cancelled() -> None:
        with anyio.CancelScope() as scope:
            async with _slot(throttle, agent):
                scope.cancel()
                await anyio.sleep(0)

    anyio.run(cancelled)

    assert throttle.running_returns(agent) == []
