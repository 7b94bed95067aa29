"""The async wrappers kept across event loops, as the sessions and banks they wrap can be.

An application that runs each request with ``asyncio.run`` (or a test framework that
gives each test its own loop) keeps one session or memory object across loops; the
SDK's ``SQLiteSession`` and Mem0's ``AsyncMemory`` work in any loop. Calls that
overlap in one loop queue in it; the next loop's must not find that queue bound to
the first.
"""

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession, TResponseInputItem

from builders import KEY
from readmit.bench.backends import mem0_bank
from readmit.integrations.agents_sdk import ReadmitSession
from readmit.integrations.mem0 import AsyncReadmitMemory
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


@pytest.fixture
def member(tmp_path: Path) -> Iterator[Member]:
    store: WorkStateStore = open_store(f"sqlite:///{tmp_path}/readmit.db")
    store.create_workspace("trip", [Agent(id="a", principal="team", role="planner")])
    yield Member(store, "trip", "a", HmacSha256Signer(KEY))
    store.close()


def said(text: str) -> TResponseInputItem:
    return {"role": "assistant", "content": text}


def test_a_session_serves_overlapping_calls_in_one_loop_then_another(
    member: Member, tmp_path: Path
) -> None:
    session = ReadmitSession(SQLiteSession("a", tmp_path / "chat.db"), member)

    async def overlapping(turn: int) -> Any:
        return await asyncio.gather(
            session.add_items([said(f"fact {turn}a")]),
            session.add_items([said(f"fact {turn}b")]),
            session.get_items(),
        )

    asyncio.run(overlapping(1))
    session.depart()
    asyncio.run(overlapping(2))

    texts = [item.get("content") for item in asyncio.run(session.get_items())]
    assert {"fact 1a", "fact 1b", "fact 2a", "fact 2b"} <= set(texts)


def test_an_async_memory_serves_overlapping_calls_in_one_loop_then_another(
    member: Member, tmp_path: Path
) -> None:
    memory = AsyncReadmitMemory(mem0_bank.bank(tmp_path, "a", asynchronous=True), member)
    trip = {"user_id": "trip", "infer": False}

    async def overlapping(turn: int) -> Any:
        await memory.add(f"fact {turn}", **trip)  # (a local Qdrant takes one write at a time)
        return await asyncio.gather(*(memory.get_all(filters={"user_id": "trip"}) for _ in "ab"))

    asyncio.run(overlapping(1))
    memory.depart()
    answers = asyncio.run(overlapping(2))

    assert [{m["memory"] for m in a["results"]} for a in answers] == [{"fact 1", "fact 2"}] * 2
