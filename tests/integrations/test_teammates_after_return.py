"""What a teammate does after an agent's return, as each integration serves it (a review).

Agents ``a`` and ``b`` of one principal, ``c`` of another. Reads follow the workspace's
log (`readmit.integrations.following`): a withdrawal by the store's rules shows at once,
and nothing another principal holds is named or hidden on its account.
"""

import asyncio
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from agents.items import TResponseInputItem
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from builders import KEY
from readmit.bench.backends import mem0_bank
from readmit.events import Assert, ItemDraft, Supersede
from readmit.integrations.agents_sdk import (
    Learned,
    ReadmitSession,
    assistant_messages,
    message_text,
)
from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.mem0 import ReadmitMemory
from readmit.integrations.team import Member, new_id
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
TRIP = {"user_id": "trip"}
T0 = datetime(2026, 5, 1, 8, tzinfo=UTC)


def ticking() -> Any:
    at = [T0]

    def tick() -> datetime:
        at[0] += timedelta(seconds=1)
        return at[0]

    return tick


@pytest.fixture
def team(tmp_path: Path) -> Iterator[dict[str, Member]]:
    store = open_store(f"sqlite:///{tmp_path}/readmit.db")
    agents = [("a", "team"), ("b", "team"), ("c", "other")]
    store.create_workspace("trip", [Agent(id=a, principal=p, role="planner") for a, p in agents])
    signer, clock = HmacSha256Signer(KEY), ticking()
    yield {a: Member(store, "trip", a, signer, clock=clock) for a, _ in agents}
    store.close()


def _supersede(member: Member, target: str, item: ItemDraft) -> None:
    event = Supersede(
        id=new_id("e"), at=member.clock(), author=member.agent, target=target, item=item
    )
    member.record([event])


def _note(member: Member, item_id: str, text: str) -> None:
    item = ItemDraft(id=item_id, text=text)
    member.record([Assert(id=new_id("e"), at=member.clock(), author=member.agent, item=item)])


# The Agents SDK


def topical(item: TResponseInputItem) -> Learned | None:
    fact = assistant_messages(item)
    if fact is None:
        return None
    topic, sep, _ = fact.text.partition(":")
    return Learned(fact.text, key=topic.strip() if sep else None)


def said(text: str) -> TResponseInputItem:
    return {"role": "assistant", "content": text}


def texts(items: list[TResponseInputItem]) -> list[str]:
    return [message_text(i) for i in items]


def session(member: Member, tmp_path: Path, learned: Any = topical) -> ReadmitSession:
    return ReadmitSession(SQLiteSession(member.agent, tmp_path / "s.db"), member, learned=learned)


def test_the_developer_message_never_names_another_principals_withdrawn_fact(
    team: dict[str, Member], tmp_path: Path
) -> None:
    sb, sc = session(team["b"], tmp_path), session(team["c"], tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await sb.add_items([said("hotel: the Hilton")])
        sb.depart()
        await sc.add_items([said("PRIVATE-BEFORE: card 4111-1111")])  # in C; b may not read it
        await sb.get_items()
        await sc.add_items([said("PRIVATE-AFTER: passport X123")])
        await sc.pop_item()
        await sc.pop_item()
        return await sb.get_items()

    note = texts(asyncio.run(scenario()))[0]

    assert "PRIVATE" not in note


def test_a_teammates_withdrawn_copy_of_a_text_leaves_the_agents_own(
    team: dict[str, Member], tmp_path: Path
) -> None:
    sa = session(team["a"], tmp_path, assistant_messages)
    sb = session(team["b"], tmp_path, assistant_messages)

    async def scenario() -> list[TResponseInputItem]:
        await sb.add_items([said("Booked.")])
        await sa.add_items([said("Booked.")])
        sb.depart()
        await sb.get_items()
        await sa.pop_item()  # a withdraws its own "Booked."; b's stands
        return await sb.get_items()

    assert texts(asyncio.run(scenario()))[1:] == ["Booked."]


def test_a_teammates_keyed_supersede_withdraws_the_fact_as_the_store_does(
    team: dict[str, Member], tmp_path: Path
) -> None:
    sb = session(team["b"], tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        _note(team["a"], "x1", "note: draft itinerary")
        await sb.add_items([said("hotel: the Hilton")])
        sb.depart()
        await sb.get_items()
        _supersede(team["a"], "x1", ItemDraft(id="x2", text="hotel: the Marriott", key="hotel"))
        return await sb.get_items()

    later = asyncio.run(scenario())

    assert not any(i.text == "hotel: the Hilton" for i in team["b"].visible())
    assert texts(later)[1:] == []


def test_another_principals_keyed_fact_takes_nothing_from_the_agent(
    team: dict[str, Member], tmp_path: Path
) -> None:
    sb, sc = session(team["b"], tmp_path), session(team["c"], tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await sb.add_items([said("hotel: the Hilton")])
        sb.depart()
        await sb.get_items()
        await sc.add_items([said("hotel: c's private hotel")])  # c may not read b's fact
        return await sb.get_items()

    later = asyncio.run(scenario())

    assert texts(later)[1:] == ["hotel: the Hilton"]
    assert "c's private" not in texts(later)[0]


# Mem0


def topic(memory: Mapping[str, Any]) -> str | None:
    found = (memory.get("metadata") or {}).get("topic")
    return None if found is None else str(found)


def add(memory: ReadmitMemory, text: str, subject: str) -> str:
    result = memory.add(text, user_id="trip", infer=False, metadata={"topic": subject})
    return str(result["results"][0]["id"])


def memories(result: Mapping[str, Any]) -> list[str]:
    return [m["memory"] for m in result["results"]]


def test_a_teammates_keyed_supersede_removes_the_memory_it_replaced(
    team: dict[str, Member], tmp_path: Path
) -> None:
    mb = ReadmitMemory(mem0_bank.bank(tmp_path, "team"), team["b"], key=topic)
    _note(team["a"], "x1", "draft: flights")
    add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    assert memories(mb.get_all(filters=TRIP)) == ["The flight leaves on Monday"]

    _supersede(
        team["a"], "x1", ItemDraft(id="x2", text="The flight leaves on Tuesday", key="flight")
    )

    assert memories(mb.get_all(filters=TRIP)) == []


def test_another_principals_keyed_memory_removes_nothing_it_could_not_replace(
    team: dict[str, Member], tmp_path: Path
) -> None:
    mb = ReadmitMemory(mem0_bank.bank(tmp_path, "b"), team["b"], key=topic)
    mc = ReadmitMemory(mem0_bank.bank(tmp_path, "c"), team["c"], key=topic)
    add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    mb.get_all(filters=TRIP)

    add(mc, "c's private flight note", "flight")
    result = mb.get_all(filters=TRIP)

    assert memories(result) == ["The flight leaves on Monday"]
    assert result["readmit"]["removed"] == []


def test_a_shared_bank_never_serves_another_principals_memory_written_after_the_return(
    team: dict[str, Member], tmp_path: Path
) -> None:
    shared = mem0_bank.bank(tmp_path, "team")
    mb, mc = (
        ReadmitMemory(shared, team["b"], key=topic),
        ReadmitMemory(shared, team["c"], key=topic),
    )
    add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    mb.get_all(filters=TRIP)

    add(mc, "C-PRIVATE: card 4111", "card")  # readers: the author's principal only
    result = mb.get_all(filters=TRIP)

    assert memories(result) == ["The flight leaves on Monday"]
    [removed] = result["readmit"]["removed"]
    assert removed == {"id": removed["id"], "reason": "unauthorized"}  # not even its text


# LangGraph


class FailingStore(InMemoryStore):
    """An inner store whose puts fail while ``failing`` is set."""

    failing = False

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        if self.failing and any(isinstance(op, PutOp) for op in listed):
            raise OSError("disk full")
        return super().batch(listed)


def test_a_failed_write_never_shows_what_a_teammate_wrote_at_the_path(
    team: dict[str, Member],
) -> None:
    """readmit writes back the value found at the path in the agent's name: not its own."""
    inner = FailingStore()
    s1, s2, sc = (ReadmitStore(inner, team[a]) for a in ("a", "b", "c"))
    s2.put(("trip",), "hotel", {"text": "Sunrise"})
    team["a"].depart()
    arrive(team["a"])
    private = {"text": "C-PRIVATE", "_readmit": {"readers": {"principals": ["other"]}}}
    sc.put(("trip",), "hotel", private)
    assert s1.get(("trip",), "hotel") is None

    inner.failing = True
    with pytest.raises(OSError, match="disk full"):
        s1.put(("trip",), "hotel", {"text": "Riverside"})
    inner.failing = False

    assert s1.get(("trip",), "hotel") is None
