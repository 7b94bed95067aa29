"""The memory layers when readmit's own store fails in the middle of their work.

A commit whose answer is lost (a PostgreSQL connection cut as it committed) leaves a batch
recorded though `append` raised; a walk of the log that fails leaves a read beside it to
filter by a view of its own; a revocation that fails after Mem0 deleted is told, and a
delete of the memory again records it (a review's fault injection).
"""

import asyncio
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from langgraph.store.memory import InMemoryStore

from builders import KEY
from integrations.faults import active, admitted, failing, said, stated, undo_owed
from integrations.stores import FailingStore, cancelled_while
from readmit.bench.backends import mem0_bank
from readmit.errors import InvalidInput, StoreError
from readmit.integrations.agents_sdk import ReadmitSession, message_text
from readmit.integrations.corrections import owing
from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.langgraph.keys import render
from readmit.integrations.mem0 import ReadmitMemory, memory_of
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")

TRIP = {"user_id": "trip"}
LOST = StoreError("PostgreSQL: server closed the connection unexpectedly")


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Member, Member]]:
    store: WorkStateStore = open_store(f"sqlite:///{tmp_path}/readmit.db")
    agents = [Agent(id=a, principal="team", role="planner") for a in ("a", "b")]
    store.create_workspace("trip", agents)
    signer = HmacSha256Signer(KEY)
    yield Member(store, "trip", "a", signer), Member(store, "trip", "b", signer)
    store.close()


def answer_lost(monkeypatch: pytest.MonkeyPatch, store: WorkStateStore, name: str) -> None:
    """The next call of ``store.name`` runs (commits), then raises as if its answer was lost."""
    real: Callable[..., Any] = getattr(store, name)

    def once(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(store, name, real)
        real(*args, **kwargs)
        raise LOST

    monkeypatch.setattr(store, name, once)


def test_a_batch_committed_though_append_raised_is_recorded(
    team: tuple[Member, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = team
    events = [stated(a, "The hotel is the Hilton."), stated(a, "Dinner at 8.")]
    answer_lost(monkeypatch, a.store, "append")
    recorded = a.record(events)
    assert [r.event.id for r in recorded] == [e.id for e in events]
    assert recorded == a.store.events("trip")[-2:]


def test_a_batch_append_did_not_commit_raises_and_says_when_the_log_is_unread(
    team: tuple[Member, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = team
    failing(monkeypatch, a.store, "append")
    with pytest.raises(StoreError) as unread:
        a.record([stated(a, "The hotel is the Hilton.")])
    assert not getattr(unread.value, "__notes__", [])  # the log says: not recorded
    failing(monkeypatch, a.store, "logged")
    with pytest.raises(StoreError) as unknown:
        a.record([stated(a, "The hotel is the Hilton.")])
    assert "could not read back whether it recorded them" in unknown.value.__notes__[0]
    monkeypatch.undo()
    assert a.store.events("trip") == []


def test_a_refused_batch_is_not_looked_for_in_the_log(
    team: tuple[Member, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = team
    failing(monkeypatch, a.store, "logged")
    first = stated(a, "The hotel is the Hilton.")
    resting = stated(a, "Breakfast at the hotel.")
    resting = replace(resting, item=replace(resting.item, depends_on=frozenset({"nothing"})))
    with pytest.raises(InvalidInput) as refused:
        a.record([first, resting])
    assert not getattr(refused.value, "__notes__", [])  # refused at its second event
    with pytest.raises(InvalidInput) as again:
        a.record([resting])
    assert "could not be read" in again.value.__notes__[0]  # the store looked, Member not


def test_an_agents_sdk_add_whose_answer_was_lost_keeps_its_items(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = team
    session = ReadmitSession(SQLiteSession("a", tmp_path / "sessions.db"), a)

    async def run() -> list[str]:
        await session.add_items([said("The hotel is the Hilton.")])
        answer_lost(monkeypatch, a.store, "append")
        await session.add_items([said("The deposit is paid.")])
        return [message_text(i) for i in await session.inner.get_items()]

    held = asyncio.run(run())
    assert held == ["The hotel is the Hilton.", "The deposit is paid."]
    assert sorted(i.text for i in a.visible()) == [
        "The deposit is paid.",
        "The hotel is the Hilton.",
    ]


@pytest.fixture
def banks(team: tuple[Member, Member], tmp_path: Path) -> tuple[ReadmitMemory, ReadmitMemory]:
    """Agents ``a`` and ``b`` on one Mem0 bank, keyed by topic."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shared = mem0_bank.bank(tmp_path, "team")
    a, b = team
    return ReadmitMemory(shared, a, key=topic), ReadmitMemory(shared, b, key=topic)


def topic(memory: Any) -> str | None:
    found = (memory.get("metadata") or {}).get("topic")
    return None if found is None else str(found)


def add(memory: ReadmitMemory, text: str, subject: str) -> str:
    added = memory.add(text, user_id="trip", infer=False, metadata={"topic": subject})
    return str(added["results"][0]["id"])


def texts(result: dict[str, Any]) -> list[str]:
    return sorted(m["memory"] for m in result["results"])


def test_a_mem0_add_whose_answer_was_lost_keeps_the_memory(
    banks: tuple[ReadmitMemory, ReadmitMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = banks
    answer_lost(monkeypatch, a.readmit.member.store, "append")
    add(a, "The team hotel is the Hilton", "hotel")
    assert texts(a.inner.get_all(filters=TRIP)) == ["The team hotel is the Hilton"]
    assert active(a.readmit.member) == ["The team hotel is the Hilton"]


def test_a_mem0_read_filters_by_its_own_view_while_another_reads_walk_fails(
    banks: tuple[ReadmitMemory, ReadmitMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = banks
    monkeypatch.setattr("readmit.integrations.watch.FOLLOW_EVERY", 0.0)
    hotel = add(b, "The team hotel is the Hilton", "hotel")
    add(b, "Dinner at 8", "dinner")
    a.depart()
    assert texts(a.get_all(filters=TRIP)) == ["Dinner at 8", "The team hotel is the Hilton"]
    versions = [i.id for i in b.readmit.member.visible() if memory_of(i.id) == (hotel, 1)]
    b.readmit.member.revoke(versions, "cancelled over HTTP")
    inside, go = threading.Event(), threading.Event()
    served: dict[str, dict[str, Any]] = {}
    listed = a.inner.get_all

    def held_back(*args: Any, **kwargs: Any) -> Any:  # the read beside waits inside Mem0
        found = listed(*args, **kwargs)
        if threading.current_thread().name == "beside" and not inside.is_set():
            inside.set()
            go.wait(30)
        return found

    monkeypatch.setattr(a.inner, "get_all", held_back)
    beside = threading.Thread(
        target=lambda: served.update(r=a.get_all(filters=TRIP)), name="beside"
    )
    beside.start()
    assert inside.wait(30)
    a.depart()
    failing(monkeypatch, a.readmit.member.store, "events")  # the new return's walk of the log fails
    with pytest.raises(StoreError):
        a.get_all(filters=TRIP)
    go.set()
    beside.join(30)
    assert texts(served["r"]) == ["Dinner at 8"]  # not the revoked hotel the walk removes


def test_a_mem0_delete_readmit_failed_to_record_is_recorded_before_the_next_return(
    banks: tuple[ReadmitMemory, ReadmitMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The revocation was left for the user to record by deleting again: until then the
    next return admitted the memory Mem0 had deleted."""
    a, _ = banks
    member = a.readmit.member
    hotel = add(a, "The team hotel is the Hilton", "hotel")
    add(a, "Dinner at 8", "dinner")
    (item,) = [i.id for i in member.store.visible_state("trip", "a") if "Hilton" in i.text]
    failing(monkeypatch, member.store, "append")
    with pytest.raises(StoreError) as failed:
        a.delete(hotel)
    what = f"memory {hotel}, deleted from Mem0"
    assert failed.value.__notes__ == [
        f"{what}: readmit holds its items until this is recorded (owed)"
    ]
    assert item in [i.id for i in member.store.visible_state("trip", "a")]  # held still
    assert owing(member.store, "trip") == [what]
    with pytest.raises(StoreError) as refused:  # still failing: nothing is checkpointed
        member.depart()
    assert what in refused.value.__notes__[-1]
    assert owing(member.store, "trip") == [what]
    monkeypatch.undo()
    member.depart()
    assert [i.text for i in admitted(member.return_())] == ["Dinner at 8"]
    assert owing(member.store, "trip") == []
    with pytest.raises(ValueError, match="not found"):  # nothing of it left: Mem0's answer
        a.delete(hotel)


@pytest.mark.parametrize("call", ["delete_all", "reset"])
def test_a_mem0_bulk_removal_readmit_failed_to_record_is_recorded_next(
    banks: tuple[ReadmitMemory, ReadmitMemory], monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    a, _ = banks
    memories = [add(a, "The team hotel is the Hilton", "hotel"), add(a, "Dinner at 8", "dinner")]
    failing(monkeypatch, a.readmit.member.store, "append")
    with pytest.raises(StoreError) as failed:
        a.delete_all(user_id="trip") if call == "delete_all" else a.reset()
    (note,) = failed.value.__notes__
    assert note.startswith(f"memories {sorted(memories)}, removed from Mem0 by {call}")
    monkeypatch.undo()
    assert active(a.readmit.member) == []  # its live state: the correction recorded first


def test_a_batch_not_recorded_is_not_taken_for_another_agents_event_under_its_id(
    team: tuple[Member, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = team
    theirs = stated(b, "The hotel is booked.")
    b.record([theirs])
    mine = replace(stated(a, "Cancel the hotel."), id=theirs.id)
    failing(monkeypatch, a.store, "append")
    with pytest.raises(StoreError):
        a.record([mine, stated(a, "A second fact.")])


def test_a_mem0_delete_of_a_memory_its_bank_never_held_revokes_nothing(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ReadmitMemory(mem0_bank.bank(tmp_path, "a"), team[0], key=topic)
        b = ReadmitMemory(mem0_bank.bank(tmp_path, "b"), team[1], key=topic)
    theirs = add(b, "Pickup is at 8", "pickup")
    with pytest.raises(ValueError, match="not found"):
        a.delete(theirs)
    assert active(team[1]) == ["Pickup is at 8"]


class Unreachable:
    """A Mem0 whose backend goes down as a memory is deleted: that delete and every get
    after it raise, and nothing is deleted."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.down = inner, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(self, memory_id: str) -> Any:
        if self.down:
            raise ConnectionError("vector store unreachable")
        return self.inner.get(memory_id)

    def delete(self, memory_id: str) -> Any:
        self.down = True
        raise ConnectionError("vector store unreachable")


def test_a_mem0_delete_that_failed_in_mem0_is_not_taken_for_one_done_before(
    banks: tuple[ReadmitMemory, ReadmitMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = banks
    hotel = add(a, "The team hotel is the Hilton", "hotel")
    monkeypatch.setattr(a, "inner", Unreachable(a.inner))
    with pytest.raises(ConnectionError):
        a.delete(hotel)
    assert active(a.readmit.member) == ["The team hotel is the Hilton"]


def test_a_cancelled_langgraph_write_whose_undo_cannot_be_recorded_is_logged(
    team: tuple[Member, Member], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The caller's timeout carried the note only on its cause: readmit held a write the
    inner store never got, and nothing said so (a review)."""
    a, _ = team
    store = ReadmitStore(InMemoryStore(), a)
    store.put(("trip",), "hotel", {"text": "Sunrise"})
    a.depart()
    arrive(a)
    recording, go = threading.Event(), threading.Event()
    real = a.record

    def record(events: Any) -> Any:
        if not recording.is_set():  # the put's own: held while its caller is cancelled
            recording.set()
            assert go.wait(30)
            return real(events)
        raise StoreError("SQLite: database is locked")  # the undo

    monkeypatch.setattr(a, "record", record)

    writing = store.aput(("trip",), "hotel", {"text": "Riverside"})
    asyncio.run(asyncio.wait_for(cancelled_while(writing, recording, go), 60))

    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("readmit could not record that the LangGraph store failed" in m for m in said)
    assert any("trip" in m and "hotel" in m and "database is locked" in m for m in said)
    monkeypatch.undo()
    a.depart()  # the undo, owed, is recorded first: the write never reached the inner store
    assert [i.text for i in admitted(arrive(a))] == [shown_text("Sunrise")]


def shown_text(value: str) -> str:
    """The item text of ``{"text": value}`` at trip/hotel."""
    return render(("trip",), "hotel", {"text": value})


def test_a_langgraph_write_whose_undo_cannot_be_recorded_is_undone_before_the_next_return(
    team: tuple[Member, Member],
) -> None:
    """The inner store failed the write and readmit its undo: the next departure
    checkpointed the value the inner store never got, and the return admitted it."""
    a, b = team
    inner = FailingStore()
    store = ReadmitStore(inner, a)
    undo_owed(a, store, inner)  # reading readmit for the undo fails
    assert owing(a.store, "trip") == ["LangGraph writes that failed: put 'trip/hotel'"]
    b.depart()  # a teammate's departure on the same store records it first too
    assert owing(a.store, "trip") == []
    assert [i.text for i in admitted(arrive(b))] == [shown_text("Sunrise")]
    assert store.get(("trip",), "hotel").value == {"text": "Sunrise"}  # type: ignore[union-attr]


def test_a_write_after_an_owed_undo_is_recorded_after_it(team: tuple[Member, Member]) -> None:
    """A delete of the path, built before the undo was recorded, revoked the very item the
    undo revoked, and was refused."""
    a, _ = team
    inner = FailingStore()
    store = ReadmitStore(inner, a)
    undo_owed(a, store, inner)
    store.delete(("trip",), "hotel")
    assert active(a) == []
    assert store.get(("trip",), "hotel") is None


def test_an_agents_sdk_pop_readmit_failed_to_record_and_not_put_back_is_recorded_next(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session lost the item, readmit kept its fact, and the next return admitted it."""
    a, _ = team
    session = ReadmitSession(SQLiteSession("a", tmp_path / "sessions.db"), a)

    async def run() -> None:
        await session.add_items([said("The hotel is the Hilton."), said("Dinner at 8.")])
        failing(monkeypatch, a.store, "append")

        async def lost(items: Any) -> None:
            raise OSError("session store unreachable")

        monkeypatch.setattr(session.inner, "add_items", lost)
        with pytest.raises(StoreError) as failed:
            await session.pop_item()
        assert "could not be put back" in failed.value.__notes__[-1]
        assert [message_text(i) for i in await session.inner.get_items()] == [
            "The hotel is the Hilton."
        ]

    asyncio.run(run())
    monkeypatch.undo()
    a.depart()
    assert [i.text for i in admitted(a.return_())] == ["The hotel is the Hilton."]


def test_a_mem0_delete_again_revokes_the_keyed_copy_that_replaced_the_memorys_item(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory's own item was replaced by a teammate's copy under its key: deleting it
    again found no key to look for copies by (a review)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ReadmitMemory(mem0_bank.bank(tmp_path, "a"), team[0], key=topic)
        b = ReadmitMemory(mem0_bank.bank(tmp_path, "b"), team[1], key=topic)
    mine = add(a, "The team hotel is the Hilton", "hotel")
    add(b, "The team hotel is the Hilton", "hotel")  # b's copy, in b's bank, replaces a's item
    failing(monkeypatch, team[0].store, "append")
    with pytest.raises(StoreError):
        a.delete(mine)
    monkeypatch.undo()
    assert active(team[1]) == []  # the teammate's live state too: one store
