"""What a memory layer owes readmit is recorded before the next record, departure or return.

The mechanism first (`readmit.integrations.corrections`), then each layer's double
failures: its own store failing, then readmit failing (or refusing, or interrupted) as it
records the correction (a review's repros).
"""

import asyncio
import threading
import warnings
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from langgraph.store.base import PutOp

from integrations.faults import admitted, failing, once_then, said, stated, undo_owed
from integrations.stores import FailingStore
from readmit.bench.backends import mem0_bank
from readmit.errors import InvalidInput, StoreError
from readmit.integrations import corrections
from readmit.integrations.agents_sdk import ReadmitSession
from readmit.integrations.corrections import discard, owe, owing, settle
from readmit.integrations.langgraph import ReadmitStore
from readmit.integrations.langgraph.keys import render
from readmit.integrations.mem0 import AsyncReadmitMemory, ReadmitMemory
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.store import open_store

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


def state(member: Member, text: str) -> str:
    """Record ``text`` as ``member``'s; its item's id."""
    event = stated(member, text)
    member.record([event])
    return event.item.id


def texts(member: Member) -> list[str]:
    """What a return of ``member`` after a departure admits, by text."""
    member.depart()
    return [i.text for i in admitted(member.return_())]


def test_a_return_records_what_is_owed_before_it_decides(three: dict[str, Member]) -> None:
    a = three["a"]
    hotel = state(a, "The hotel is the Hilton.")
    state(a, "Dinner at 8.")
    a.depart()
    owe(a.store, "trip", "the hotel", partial(a.revoke, [hotel], "the layer never got it"))
    assert [i.text for i in admitted(a.return_())] == ["Dinner at 8."]
    assert owing(a.store, "trip") == []


def test_a_correction_that_fails_refuses_the_return_and_stays_owed_in_order(
    three: dict[str, Member],
) -> None:
    a, b = three["a"], three["b"]
    hotel, dinner = state(a, "The hotel is the Hilton."), state(a, "Dinner at 8.")
    a.depart()
    down = True

    def undo_hotel() -> None:
        if down:
            raise StoreError("SQLite: database is locked")
        a.revoke([hotel], "undone")

    owe(a.store, "trip", "the hotel", undo_hotel)
    owe(a.store, "trip", "dinner", partial(a.revoke, [dinner], "undone"))
    for refused in (a.return_, partial(b.record, []), b.depart, b.visible):
        with pytest.raises(StoreError) as failed:
            refused()
        assert (
            "readmit still holds what a memory layer's store does not (the hotel)"
            in (failed.value.__notes__[-1])
        )
    assert a.latest is None
    assert owing(a.store, "trip") == ["the hotel", "dinner"]
    down = False
    assert [i.text for i in admitted(a.return_())] == []
    assert owing(a.store, "trip") == []


def test_a_correction_readmit_refuses_is_dropped_and_logged(
    three: dict[str, Member], caplog: pytest.LogCaptureFixture
) -> None:
    """Kept, it would stop every record, departure and return on the store for good."""
    a = three["a"]
    owe(a.store, "trip", "a revocation of nothing", partial(a.revoke, ["no-such-item"], "undone"))
    state(a, "The hotel is the Hilton.")
    assert owing(a.store, "trip") == []
    (said,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert said.startswith(
        "readmit refused a correction a memory layer owed 3 times; it is dropped, and readmit "
        "still holds a revocation of nothing"
    )


def test_a_process_exiting_owing_names_each_correction_left(
    three: dict[str, Member], caplog: pytest.LogCaptureFixture
) -> None:
    """It records none: a locked store would hold the exit for a busy timeout each (a
    review: 61 s)."""
    a = three["a"]
    ran: list[str] = []
    owe(a.store, "trip", "the hotel", partial(ran.append, "hotel"))
    owe(a.store, "trip", "dinner", partial(ran.append, "dinner"))
    corrections._at_exit()
    said = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert [m.split(" (")[0] for m in said] == [
        "exiting with a correction unrecorded: readmit still holds the hotel",
        "exiting with a correction unrecorded: readmit still holds dinner",
    ]
    assert ran == []
    caplog.clear()
    assert discard(a.store, "trip") == ["the hotel", "dinner"]  # on purpose: logged too
    assert len([r for r in caplog.records if "was discarded" in r.getMessage()]) == 2
    assert owing(a.store, "trip") == []
    state(a, "Dinner at 8.")
    assert ran == []


def test_what_one_workspace_owes_does_not_hold_another_back(
    three: dict[str, Member], tmp_path: Path
) -> None:
    a = three["a"]
    a.store.create_workspace("other", [Agent(id="a", principal="team", role="planner")])
    elsewhere = Member(a.store, "other", "a", a.signer)

    def down() -> None:
        raise StoreError("SQLite: database is locked")

    owe(a.store, "trip", "the hotel", down)
    state(elsewhere, "The office is open.")
    with pytest.raises(StoreError):
        state(a, "Dinner at 8.")
    discard(a.store, "trip")


def test_a_record_on_another_thread_waits_for_the_correction(three: dict[str, Member]) -> None:
    """Recorded meanwhile, a teammate's event would come before the correction it follows."""
    a, b = three["a"], three["b"]
    hotel = state(a, "The hotel is the Hilton.")
    inside, go = threading.Event(), threading.Event()

    def undo() -> None:
        inside.set()
        assert go.wait(30)
        a.revoke([hotel], "undone")

    owe(a.store, "trip", "the hotel", undo)
    settling = threading.Thread(target=settle, args=(a.store, "trip"))
    settling.start()
    assert inside.wait(30)
    beside = threading.Thread(target=state, args=(b, "The hotel is the Ritz."))
    beside.start()
    owe(a.store, "trip", "owed meanwhile", lambda: None)  # never waits for the turn in progress
    beside.join(0.2)
    assert beside.is_alive()  # waiting for the correction
    go.set()
    settling.join(30)
    beside.join(30)
    ops = [(r.event.op, r.event.author) for r in a.store.events("trip")]
    assert ops == [("assert", "a"), ("revoke", "a"), ("assert", "b")]


def mem0_memory(path: Path, member: Member, asynchronous: bool = False) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inner = mem0_bank.bank(path, "team", asynchronous=asynchronous)
    wrapper = AsyncReadmitMemory if asynchronous else ReadmitMemory
    return wrapper(inner, member)


def add(memory: ReadmitMemory, text: str) -> str:
    return str(memory.add(text, user_id="trip", infer=False)["results"][0]["id"])


@pytest.mark.parametrize("call", ["delete_all", "reset"])
def test_a_mem0_removal_with_readmit_unreadable_is_owed(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """The items removed were read before the revocation's try: nothing was owed."""
    a, b = three["a"], three["b"]
    memory = mem0_memory(tmp_path, a)
    add(memory, "The team hotel is the Hilton")
    removal = getattr(memory.inner, "delete" if call == "delete_all" else call)

    def then_down(*args: Any) -> Any:  # readmit's store goes down as Mem0 removes
        done = removal(*args)
        failing(monkeypatch, a.store, "visible_state")
        return done

    monkeypatch.setattr(memory.inner, "delete" if call == "delete_all" else call, then_down)
    with pytest.raises(StoreError):
        memory.delete_all(user_id="trip") if call == "delete_all" else memory.reset()
    assert len(owing(a.store, "trip")) == 1
    monkeypatch.undo()
    assert texts(b) == []


def test_a_mem0_removal_refused_after_a_teammates_revocation_is_owed(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A teammate revoked one memory's item just before the batch: readmit refused it whole,
    and the other memory Mem0 removed stayed admitted."""
    a, b = three["a"], three["b"]
    memory = mem0_memory(tmp_path, a)
    add(memory, "The team hotel is the Hilton")
    add(memory, "Dinner at 8")
    real = a.store.append

    def teammate_first(workspace: str, events: Any, **kwargs: Any) -> Any:
        if any(e.op == "revoke" and e.author == "a" for e in events):
            monkeypatch.setattr(a.store, "append", real)
            b.revoke([next(i.id for i in b.visible() if i.text == "Dinner at 8")], "cancelled")
        return real(workspace, events, **kwargs)

    monkeypatch.setattr(a.store, "append", teammate_first)
    with pytest.raises(Exception, match="no longer active"):
        memory.delete_all(user_id="trip")
    assert texts(b) == []


def test_an_owed_langgraph_undo_restores_nothing_over_a_later_write(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """A teammate in another process wrote the path meanwhile: the owed undo, worked out
    from what the inner store held when it failed, restored the value before over it."""
    a = three["a"]
    elsewhere = open_store(f"sqlite:///{tmp_path}/three.db")  # b's process: a store of its own
    b = Member(elsewhere, "trip", "b", a.signer, clock=a.clock)
    inner = FailingStore()
    mine, theirs = ReadmitStore(inner, a), ReadmitStore(inner, b)
    undo_owed(a, mine, inner)
    theirs.put(("trip",), "hotel", {"text": "Ritz"})
    a.depart()  # settles the owed undo
    assert texts(b) == [render(("trip",), "hotel", {"text": "Ritz"})]
    elsewhere.close()


def test_an_interrupt_while_the_undo_is_recorded_leaves_it_owed(
    three: dict[str, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = three["a"], three["b"]
    inner = FailingStore()
    store = ReadmitStore(inner, a)
    store.put(("trip",), "hotel", {"text": "Sunrise"})
    inner.failing = True
    real = a.store.visible_state

    def interrupted(*args: Any) -> Any:
        monkeypatch.setattr(a.store, "visible_state", real)
        raise KeyboardInterrupt

    monkeypatch.setattr(a.store, "visible_state", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.put(("trip",), "hotel", {"text": "Riverside"})
    inner.failing = False
    assert owing(a.store, "trip") == ["LangGraph writes that failed: put 'trip/hotel'"]
    assert texts(b) == [render(("trip",), "hotel", {"text": "Sunrise"})]


def test_an_async_mem0_add_records_what_is_owed_off_the_event_loop(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its annotations were resolved on the loop: an owed correction, a store write, too."""
    a = three["a"]
    memory = mem0_memory(tmp_path, a, asynchronous=True)
    on_loop: list[bool] = []

    async def run() -> None:
        loop = threading.get_ident()
        added = await memory.add("Dinner at 8", user_id="trip", infer=False)
        dinner = added["results"][0]["id"]
        owe(a.store, "trip", "a correction", lambda: on_loop.append(threading.get_ident() == loop))
        real = a.store.append

        def append(*args: Any, **kwargs: Any) -> Any:
            on_loop.append(threading.get_ident() == loop)
            return real(*args, **kwargs)

        monkeypatch.setattr(a.store, "append", append)
        premise = {"_readmit": {"depends_on": [{"memory": dinner}]}}
        await memory.add("Breakfast at 7", user_id="trip", infer=False, metadata=premise)

    asyncio.run(run())
    assert on_loop == [False, False]  # the correction ran, then the add: neither on the loop


def test_an_owed_correction_does_not_block_the_event_loop_that_owes_another(
    three: dict[str, Member],
) -> None:
    """`owe` waited for the turn a settling thread holds while its corrections record."""
    a = three["a"]
    inside, go = threading.Event(), threading.Event()

    def slow() -> None:
        inside.set()
        assert go.wait(30)

    owe(a.store, "trip", "slow", slow)
    settling = threading.Thread(target=settle, args=(a.store, "trip"))
    settling.start()
    assert inside.wait(30)

    async def owe_on_the_loop() -> None:
        owe(a.store, "trip", "owed on the loop", lambda: None)

    asyncio.run(asyncio.wait_for(owe_on_the_loop(), 30))
    go.set()
    settling.join(30)
    assert owing(a.store, "trip") == []


def test_owed_corrections_are_per_store_object(three: dict[str, Member], tmp_path: Path) -> None:
    a = three["a"]
    elsewhere = open_store(f"sqlite:///{tmp_path}/three.db")
    owe(a.store, "trip", "here", lambda: None)
    assert owing(elsewhere, "trip") == []
    assert owing(a.store, "trip") == ["here"]
    settle(a.store, "trip")
    elsewhere.close()


def other_process(a: Member, tmp_path: Path) -> Member:
    """Agent ``b`` on a store object of its own over ``a``'s database (`three`'s)."""
    return Member(open_store(f"sqlite:///{tmp_path}/three.db"), "trip", "b", a.signer)


def test_a_mem0_delete_revokes_a_version_a_teammate_wrote_just_before(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The teammate's update came between the delete's read of its targets and Mem0's
    delete: nothing was revoked, and the delete said it succeeded (a review)."""
    a, b = three["a"], three["b"]
    memory = mem0_memory(tmp_path, a)
    theirs = ReadmitMemory(memory.inner, b)
    hotel = add(memory, "The team hotel is the Hilton")
    delete = memory.inner.delete

    def updated_first(memory_id: str) -> Any:
        monkeypatch.setattr(memory.inner, "delete", delete)
        theirs.update(memory_id, "The team hotel is the Ritz")
        return delete(memory_id)

    monkeypatch.setattr(memory.inner, "delete", updated_first)
    memory.delete(hotel)
    assert texts(b) == []


def test_an_owed_mem0_revocation_leaves_a_later_version_mem0_holds(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """a's update could not be recorded nor written back; b, in another process, then
    updated the memory in both stores: settling a's revocation revoked b's version too."""
    a = three["a"]
    b = other_process(a, tmp_path)
    memory = mem0_memory(tmp_path, a)
    theirs = ReadmitMemory(memory.inner, b)
    hotel = add(memory, "The team hotel is the Hilton")
    once_then(monkeypatch, memory.inner, "update", ConnectionError("Mem0 down"))
    failing(monkeypatch, a.store, "visible_state")
    with pytest.raises(StoreError):
        memory.update(hotel, "The team hotel is the Hyatt")
    monkeypatch.undo()
    assert len(owing(a.store, "trip")) == 1
    theirs.update(hotel, "The team hotel is the Ritz")
    a.depart()
    assert texts(b) == ["The team hotel is the Ritz"]
    b.store.close()


def test_an_owed_langgraph_undo_restores_nothing_once_the_path_was_deleted(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """The owed undo restored the value the inner store held when the put failed, over a
    teammate's delete of the path since, in another process (a review)."""
    a = three["a"]
    b = other_process(a, tmp_path)
    inner = FailingStore()
    mine, theirs = ReadmitStore(inner, a), ReadmitStore(inner, b)
    undo_owed(a, mine, inner)
    theirs.delete(("trip",), "hotel")
    a.depart()
    assert owing(a.store, "trip") == []
    assert texts(b) == []
    b.store.close()


def test_an_owed_revocation_refused_after_a_race_is_tried_again(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process revoked one of its items between the correction's read and its
    write: readmit refused the whole batch, which was dropped (a review)."""
    a = three["a"]
    b = other_process(a, tmp_path)
    memory = mem0_memory(tmp_path, a)
    add(memory, "The team hotel is the Hilton")
    add(memory, "Dinner at 8")
    failing(monkeypatch, a.store, "append")
    with pytest.raises(StoreError):
        memory.delete_all(user_id="trip")
    monkeypatch.undo()
    read = a.store.visible_state

    def raced(*args: Any) -> Any:  # the other process revokes as the correction reads
        monkeypatch.setattr(a.store, "visible_state", read)
        found = read(*args)
        b.revoke([next(i.id for i in b.visible() if "Hilton" in i.text)], "cancelled")
        return found

    monkeypatch.setattr(a.store, "visible_state", raced)
    a.depart()
    assert texts(b) == []
    b.store.close()


def test_an_async_mem0_add_without_annotations_does_not_wait_for_a_return(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its annotations were resolved in the wrapper's turn: Mem0's add waited for a return
    being decided (a model verifier can take minutes). The return is held until the add has
    finished: Mem0's local vector store is not safe to search while a thread writes it (the
    search then failed now and then, with an IndexError inside Qdrant)."""
    memory = mem0_memory(tmp_path, three["a"], asynchronous=True)
    deciding, added = threading.Event(), threading.Event()
    before_read, add_to_mem0 = memory.readmit.before_read, memory.inner.add

    def slow_return() -> Any:
        deciding.set()
        assert added.wait(30)  # held until Mem0's add has finished
        return before_read()

    async def adding(*args: Any, **kwargs: Any) -> Any:
        try:
            return await add_to_mem0(*args, **kwargs)
        finally:
            added.set()

    monkeypatch.setattr(memory.readmit, "before_read", slow_return)
    monkeypatch.setattr(memory.inner, "add", adding)

    async def run() -> None:
        search = asyncio.create_task(memory.search("hotel", filters={"user_id": "trip"}))
        await asyncio.to_thread(deciding.wait, 30)
        await memory.add("Dinner at 8", user_id="trip", infer=False)
        await search

    asyncio.run(asyncio.wait_for(run(), 60))


def test_a_restore_waits_for_no_teammates_delete_of_the_path_still_landing(
    three: dict[str, Member],
) -> None:
    """b's delete was recorded and on its way to the inner store when a's put failed there:
    a's reconcile restored the value before over it (a review; older than owed undos)."""
    a, b = three["a"], three["b"]
    landing, go = threading.Event(), threading.Event()
    deleting: list[threading.Thread] = []

    class Inner(FailingStore):
        def batch(self, ops: Any) -> Any:
            ops = list(ops)
            puts = [op for op in ops if isinstance(op, PutOp)]
            if puts and threading.current_thread().name == "b":
                landing.set()
                assert go.wait(30)  # b's delete: recorded, landing
            elif any(op.value == {"text": "Riverside"} for op in puts):
                deleting.append(threading.Thread(target=delete, name="b"))
                deleting[0].start()
                assert landing.wait(30)
                raise OSError("disk full")
            return super().batch(ops)

    inner = Inner()
    mine, theirs = ReadmitStore(inner, a), ReadmitStore(inner, b)

    def delete() -> None:
        theirs.delete(("trip",), "hotel")

    mine.put(("trip",), "hotel", {"text": "Sunrise"})
    with pytest.raises(OSError, match="disk full"):
        mine.put(("trip",), "hotel", {"text": "Riverside"})
    go.set()
    deleting[0].join(30)
    assert inner.get(("trip",), "hotel") is None
    assert texts(b) == []


def test_an_owed_langgraph_undo_restores_what_a_withdrawal_elsewhere_left_in_the_store(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """A withdrawal of the failed write's version through readmit (HTTP, another process)
    left the inner store as it was: the owed undo restored nothing, and readmit held no
    version of a path the inner store holds (a review)."""
    a = three["a"]
    b = other_process(a, tmp_path)
    inner = FailingStore()
    mine = ReadmitStore(inner, a)
    undo_owed(a, mine, inner)
    b.revoke([i.id for i in b.visible() if "Riverside" in i.text], "withdrawn over HTTP")
    a.depart()
    assert texts(b) == [render(("trip",), "hotel", {"text": "Sunrise"})]
    b.store.close()


def test_an_owed_agents_sdk_revocation_revokes_the_items_it_picked_first(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The revocation committed, its answer lost and the log unreadable, the item not put
    back: settled, it picked the newest item of the text again, the older copy the session
    still holds (a review)."""
    a = three["a"]
    session = ReadmitSession(SQLiteSession("a", tmp_path / "sessions.db"), a)
    append = a.store.append

    def lost(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(a.store, "append", append)
        append(*args, **kwargs)
        failing(monkeypatch, a.store, "logged")
        raise StoreError("PostgreSQL: server closed the connection unexpectedly")

    async def unreachable(items: Any) -> None:
        raise OSError("session store unreachable")

    async def run() -> None:
        await session.add_items([said("The hotel is the Hilton.")])
        await session.add_items([said("Dinner at 8."), said("The hotel is the Hilton.")])
        monkeypatch.setattr(a.store, "append", lost)
        monkeypatch.setattr(session.inner, "add_items", unreachable)
        with pytest.raises(StoreError):
            await session.pop_item()

    asyncio.run(run())
    monkeypatch.undo()
    assert len(owing(a.store, "trip")) == 1
    a.depart()
    assert sorted(i.text for i in a.store.visible_state("trip", "a")) == [
        "Dinner at 8.",
        "The hotel is the Hilton.",
    ]


def test_a_mem0_update_of_metadata_alone_not_written_back_keeps_the_memory(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its text is still what readmit holds: every version was revoked (a review)."""
    a, b = three["a"], three["b"]
    memory = mem0_memory(tmp_path, a)
    hotel = add(memory, "The team hotel is the Hilton")
    once_then(monkeypatch, memory.inner, "update", ConnectionError("Mem0 down"))
    with pytest.raises(InvalidInput):  # readmit refuses to narrow a stated item's task
        memory.update(hotel, metadata={"_readmit": {"task": "trip-planning"}})
    assert owing(a.store, "trip") == []
    assert texts(b) == ["The team hotel is the Hilton"]


def test_a_mem0_update_whose_read_back_fails_is_written_back(
    three: dict[str, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mem0's history read after the update ran outside the guarded part: nothing was
    recorded or taken back, and readmit admitted the old text Mem0 no longer held (a
    review)."""
    a, b = three["a"], three["b"]
    memory = mem0_memory(tmp_path, a)
    hotel = add(memory, "The team hotel is the Hilton")
    once_then(monkeypatch, memory.inner, "history", ConnectionError("Mem0's history is locked"))
    with pytest.raises(ConnectionError):
        memory.update(hotel, "The team hotel is the Ritz")
    monkeypatch.undo()
    assert memory.inner.get(hotel)["memory"] == "The team hotel is the Hilton"
    assert owing(a.store, "trip") == []
    assert texts(b) == ["The team hotel is the Hilton"]
