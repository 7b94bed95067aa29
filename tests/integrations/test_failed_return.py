"""A return that fails is still owed at a memory layer's next read.

The Mem0 wrapper and the Agents SDK session decide a departed agent's return at its first
read. When deciding it raised (a store error; a view the signer rejected), the wrapper
had already noted it decided: the next read filtered by no decision at all and served
everything, another principal's memories and a teammate's revoked one too (a
differential fuzz). A LangGraph store whose agent had no decision yet read unfiltered
after `arrive` raised. The return is now owed until it is decided (`Member.away`).
"""

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from langgraph.store.memory import InMemoryStore

from integrations.conftest import team
from readmit.bench.backends import mem0_bank
from readmit.decide import Decided
from readmit.errors import StoreError
from readmit.integrations.agents_sdk import ReadmitSession, message_text
from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.mem0 import ReadmitMemory
from readmit.integrations.mem0.ids import item_id
from readmit.integrations.team import Member

TRIP = {"user_id": "trip"}
TRIP_PATH = ("trip",)


@pytest.fixture
def members(tmp_path: Path) -> Iterator[dict[str, Member]]:
    yield from team(tmp_path / "r.db", [("a", "team"), ("b", "team"), ("c", "other")])


@pytest.fixture
def fails_once(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`Member.return_` raises at its first call, as a store that went away would."""
    calls: list[str] = []
    real: Callable[..., Decided] = Member.return_

    def once(self: Member, *args: Any) -> Decided:
        calls.append(self.agent)
        if len(calls) == 1:
            raise StoreError("the store went away")
        return real(self, *args)

    monkeypatch.setattr(Member, "return_", once)
    return calls


def test_a_mem0_read_after_a_failed_return_decides_it_and_filters(
    members: dict[str, Member], tmp_path: Path, fails_once: list[str]
) -> None:
    shared = mem0_bank.bank(tmp_path)
    a = ReadmitMemory(shared, members["a"])
    hotel = a.add("The hotel is the Hilton", user_id="trip", infer=False)["results"][0]["id"]
    a.depart()
    members["b"].revoke([item_id(hotel, 1)], "The Hilton cancelled.")

    with pytest.raises(StoreError):
        a.get_all(filters=TRIP)
    result = a.get_all(filters=TRIP)

    assert result["results"] == []
    assert [r["reason"] for r in result["readmit"]["removed"]] == ["revoked"]
    assert fails_once == ["a", "a"]


def test_an_agents_sdk_read_after_a_failed_return_decides_it_and_filters(
    members: dict[str, Member], tmp_path: Path, fails_once: list[str]
) -> None:
    session = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), members["a"])

    async def scenario() -> list[str]:
        await session.add_items([{"role": "assistant", "content": "The hotel is the Hilton."}])
        session.depart()
        [hotel] = [i.id for i in members["b"].visible() if i.text == "The hotel is the Hilton."]
        members["b"].revoke([hotel], "The Hilton cancelled.")
        with pytest.raises(StoreError):
            await session.get_items()
        return [message_text(i) for i in await session.get_items()]

    texts = asyncio.run(scenario())

    assert "The hotel is the Hilton. (revoked: The Hilton cancelled.)" in texts[0]
    assert texts[1:] == []
    assert fails_once == ["a", "a"]


def test_a_langgraph_read_after_a_failed_arrival_decides_the_return_and_filters(
    members: dict[str, Member], fails_once: list[str]
) -> None:
    """The store was made before the departure, with no decision in the process: it read
    unfiltered after `arrive` raised, another principal's value too (a differential fuzz)."""
    inner = InMemoryStore()
    s_a, s_c = ReadmitStore(inner, members["a"]), ReadmitStore(inner, members["c"])
    members["a"].depart()
    s_c.put(TRIP_PATH, "fee", {"text": "The fee is 5%."})  # the other principal's

    with pytest.raises(StoreError):
        arrive(members["a"])
    got = s_a.get(TRIP_PATH, "fee")

    assert got is None
    assert fails_once == ["a", "a"]
