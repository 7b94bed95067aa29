"""``--shared-limits`` at the gate: a chunked body's charges are writes to the store, made off
the event loop, so a store busy with another process's write holds back that request alone;
a return's slot, a lease in the store, is claimed off the event loop too.

The other process is a second SQLite connection holding the file's write lock while the
body arrives; it lets go only when the event loop runs something else.
"""

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from readmit.service.app import _slot, create_app
from readmit.service.limits import Limits
from readmit.service.shared_limits import SharedThrottle
from readmit.store import open_store, sqlite
from servicekit import make_team

NOTE = {"op": "assert", "author": "A2", "item": {"id": "n0", "text": "A note."}}


def test_a_chunk_charged_while_another_process_writes_does_not_stop_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite, "BUSY_TIMEOUT_S", 5)  # how long the loop would stand still
    path = tmp_path / "readmit.db"
    store = open_store(f"sqlite:///{path}")
    team = make_team(store)
    team.service.limits = Limits(shared=True, refusal_pause=0.0)
    team.service.throttle = SharedThrottle(team.service.limits, store)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    locked, ran = asyncio.Event(), []

    async def body() -> AsyncIterator[bytes]:
        other.execute("BEGIN IMMEDIATE")  # another process writes as the body arrives
        locked.set()
        yield json.dumps({"events": [NOTE]}).encode()

    async def another_request() -> None:  # what the loop serves while the chunk is charged
        await locked.wait()
        ran.append(True)
        other.execute("COMMIT")

    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(team.service))
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            sent = client.post(
                "/v1/events",
                content=body(),
                headers={**team.auth("A2"), "Content-Type": "application/json"},
            )
            answer, _ = await asyncio.gather(sent, another_request())
        return answer

    try:
        answer = asyncio.run(main())
    finally:
        other.close()
        team.service.close()

    assert ran
    assert answer.status_code == 200, answer.text


def test_a_return_slot_is_claimed_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared return slot is a lease written to the store: claimed in a worker thread
    (`readmit.service.app._slot`), a store busy with another process's write holds back
    that return alone."""
    monkeypatch.setattr(sqlite, "BUSY_TIMEOUT_S", 5)  # how long the loop would stand still
    path = tmp_path / "readmit.db"
    store = open_store(f"sqlite:///{path}")
    team = make_team(store)
    throttle = SharedThrottle(Limits(shared=True), store)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    ran = []

    async def another_request() -> None:  # what the loop serves while the slot is claimed
        ran.append(True)
        other.execute("COMMIT")

    async def main() -> bool:
        other.execute("BEGIN IMMEDIATE")  # another process writes as the return starts
        async with anyio.create_task_group() as group:
            group.start_soon(another_request)
            async with _slot(throttle, ("trip", "A1")) as cancel:
                held = not cancel.is_set()
        return held

    try:
        held = anyio.run(main)
    finally:
        other.close()
        throttle.close()
        team.service.close()

    assert ran
    assert held
