"""LangGraph: a write the inner store fails or has not landed never shows what the path
held for another principal, and never hides what the agent may still read (a review)."""

import asyncio
import gc
import sqlite3
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from integrations.stores import FailingSqliteStore, FailingStore, cancelled_while
from readmit.admission import Issued
from readmit.errors import InvalidInput, StoreError
from readmit.integrations.corrections import discard
from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.team import Member

PRIVATE = {"text": "C-PRIVATE", "_readmit": {"readers": {"principals": ["other"]}}}


class Gated(InMemoryStore):
    """An inner store whose puts wait, while ``gated``, until the test lets them go on;
    with ``fails``, they then fail."""

    gated = False
    fails = False

    def __init__(self) -> None:
        super().__init__()
        self.arrived, self.release = threading.Event(), threading.Event()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        if self.gated and any(isinstance(op, PutOp) for op in listed):
            self.arrived.set()
            assert self.release.wait(120)
            if self.fails:
                raise OSError("disk full")
        return super().batch(listed)


def _held_reads(
    member: Member, reader: list[threading.Thread]
) -> tuple[threading.Event, threading.Event]:
    """Make the log read of the thread ``reader`` will hold wait, once read, for a go.

    Returns (read: set once it has read the log, go: set to let it apply what it read).
    """
    store, events = member.store, member.store.events
    read, go = threading.Event(), threading.Event()

    def held(*args: Any, **kwargs: Any) -> Any:
        found = events(*args, **kwargs)
        if reader and threading.current_thread() is reader[0]:
            read.set()
            assert go.wait(120)
        return found

    store.events = held  # type: ignore[method-assign]
    return read, go


@pytest.mark.usefixtures("checks_raced")
def test_a_reader_that_read_the_log_before_a_write_failed_shows_nothing_of_the_path(
    three: dict[str, Member],
) -> None:
    inner = Gated()
    inner.fails = True
    a = three["a"]
    s1, sc = ReadmitStore(inner, a), ReadmitStore(inner, three["c"])
    a.depart()
    arrive(a)
    sc.put(("trip",), "hotel", PRIVATE)
    assert s1.get(("trip",), "hotel") is None

    reader_thread: list[threading.Thread] = []
    reader_read, reader_go = _held_reads(a, reader_thread)  # the reader's: slow to apply
    inner.gated = True
    errors: list[BaseException] = []

    def write() -> None:
        try:
            s1.put(("trip",), "hotel", {"text": "Riverside"})
        except OSError as exc:
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    assert inner.arrived.wait(120)  # a's event is recorded (pending), the inner put waits
    seen: list[object] = []
    reader = threading.Thread(target=lambda: seen.append(s1.get(("trip",), "hotel")))
    reader_thread.append(reader)
    reader.start()
    assert reader_read.wait(120)  # the reader has read the log: a's put, nothing after
    inner.gated = False
    inner.release.set()
    writer.join(120)  # the put failed: undone in readmit, no longer pending
    assert errors
    reader_go.set()
    reader.join(120)

    assert seen == [None]  # c's private value must never be shown to a
    assert s1.get(("trip",), "hotel") is None


def _admitted_sunrise(three: dict[str, Member]) -> tuple[FailingStore, ReadmitStore, ReadmitStore]:
    """b books Sunrise, a returns with it admitted: a's and b's stores over one inner store."""
    inner = FailingStore()
    s1, s2 = ReadmitStore(inner, three["a"]), ReadmitStore(inner, three["b"])
    s2.put(("trip",), "hotel", {"text": "Sunrise"})
    three["a"].depart()
    arrive(three["a"])
    assert s1.get(("trip",), "hotel") is not None
    return inner, s1, s2


def test_a_failed_delete_keeps_showing_the_admitted_value_the_path_still_holds(
    three: dict[str, Member],
) -> None:
    inner, s1, _ = _admitted_sunrise(three)

    inner.failing = True
    with pytest.raises(OSError, match="disk full"):
        s1.delete(("trip",), "hotel")
    inner.failing = False

    assert inner.get(("trip",), "hotel") is not None  # the value is still there
    hotel = s1.get(("trip",), "hotel")
    assert hotel is not None
    assert hotel.value == {"text": "Sunrise"}


@pytest.mark.usefixtures("checks_raced")
def test_a_view_that_expires_while_an_own_write_is_in_flight_keeps_it_pending(
    three: dict[str, Member],
) -> None:
    at = [datetime(2026, 5, 1, 8, tzinfo=UTC)]

    def clock() -> datetime:
        at[0] += timedelta(seconds=1)
        return at[0]

    base = three["a"]
    a = Member(base.store, base.workspace, "a", base.signer, clock=clock)
    c = Member(base.store, base.workspace, "c", base.signer, clock=clock)
    inner = Gated()
    s1, sc = ReadmitStore(inner, a, on_withheld="empty"), ReadmitStore(inner, c)
    a.depart()
    arrive(a)
    sc.put(("trip",), "hotel", PRIVATE)
    assert s1.get(("trip",), "hotel") is None
    inner.gated = True
    writer = threading.Thread(target=s1.put, args=(("trip",), "hotel", {"text": "Riverside"}))
    writer.start()
    assert inner.arrived.wait(120)
    at[0] += timedelta(hours=2)  # the view expires while a's write is pending

    seen = s1.get(("trip",), "hotel")
    inner.release.set()
    writer.join(120)
    assert seen is None


@pytest.mark.usefixtures("checks_raced")
def test_a_failed_write_never_shows_what_a_teammate_wrote_at_the_path(
    three: dict[str, Member],
) -> None:
    """readmit writes back the value found at the path in the agent's name: not its own."""
    inner = FailingStore()
    s1, s2, sc = (ReadmitStore(inner, three[a]) for a in ("a", "b", "c"))
    s2.put(("trip",), "hotel", {"text": "Sunrise"})
    three["a"].depart()
    arrive(three["a"])
    private = {"text": "C-PRIVATE", "_readmit": {"readers": {"principals": ["other"]}}}
    sc.put(("trip",), "hotel", private)
    assert s1.get(("trip",), "hotel") is None

    inner.failing = True
    with pytest.raises(OSError, match="disk full"):
        s1.put(("trip",), "hotel", {"text": "Riverside"})
    inner.failing = False

    assert s1.get(("trip",), "hotel") is None


@pytest.mark.parametrize("admitted", [True, False], ids=["admitted", "its own since"])
def test_a_failed_write_keeps_showing_the_value_the_path_still_holds(
    three: dict[str, Member], admitted: bool
) -> None:
    inner = FailingStore()
    s1 = ReadmitStore(inner, three["a"])
    if admitted:
        s1.put(("trip",), "hotel", {"text": "Sunrise"})
    three["a"].depart()
    arrive(three["a"])
    if not admitted:
        s1.put(("trip",), "hotel", {"text": "Sunrise"})
    assert s1.get(("trip",), "hotel") is not None

    inner.failing = True
    with pytest.raises(OSError, match="disk full"):
        s1.put(("trip",), "hotel", {"text": "Riverside"})
    inner.failing = False

    hotel = s1.get(("trip",), "hotel")
    assert hotel is not None
    assert hotel.value == {"text": "Sunrise"}


@pytest.mark.usefixtures("checks_raced")
def test_an_own_write_not_yet_landed_shows_nothing_of_what_the_path_held(
    three: dict[str, Member],
) -> None:
    """Recorded in readmit, not yet in the inner store: the path holds c's private value."""
    inner = Gated()
    s1, sc = ReadmitStore(inner, three["a"]), ReadmitStore(inner, three["c"])
    three["a"].depart()
    arrive(three["a"])
    private = {"text": "C-PRIVATE", "_readmit": {"readers": {"principals": ["other"]}}}
    sc.put(("trip",), "hotel", private)
    inner.gated = True
    writer = threading.Thread(target=s1.put, args=(("trip",), "hotel", {"text": "Riverside"}))
    writer.start()
    assert inner.arrived.wait(120)

    seen = s1.get(("trip",), "hotel")
    inner.release.set()
    writer.join(120)

    assert seen is None
    hotel = s1.get(("trip",), "hotel")
    assert hotel is not None
    assert hotel.value == {"text": "Riverside"}


def test_failed_writes_stop_being_pending_once_a_return_holds_them(
    three: dict[str, Member],
) -> None:
    """A failed write's events were kept pending for the life of the store: one id a
    failure, never dropped. A return whose context holds them drops them."""
    inner = FailingStore()
    s1 = ReadmitStore(inner, three["a"])
    three["a"].depart()
    arrive(three["a"])
    inner.failing = True
    for n in range(3):
        with pytest.raises(OSError, match="disk full"):
            s1.put(("trip",), f"hotel{n}", {"text": "Riverside"})
    inner.failing = False
    assert s1.get(("trip",), "hotel0") is None
    assert len(s1._pending.ids) == 3

    three["a"].depart()
    arrive(three["a"])
    assert s1.get(("trip",), "hotel0") is None
    assert s1._pending.ids == set()
    s1.put(("trip",), "hotel0", {"text": "Sunrise"})
    hotel = s1.get(("trip",), "hotel0")
    assert hotel is not None
    assert hotel.value == {"text": "Sunrise"}


@pytest.mark.usefixtures("checks_raced")
def test_a_read_whose_lens_a_new_return_replaced_still_hides_a_teammates_overwrite(
    three: dict[str, Member],
) -> None:
    """A first fix left a replaced lens unfollowed, and its reader showed what a teammate
    of another principal wrote at an admitted path since (a review)."""
    inner = InMemoryStore()
    a = three["a"]
    s1, sc = ReadmitStore(inner, a), ReadmitStore(inner, three["c"])
    s1.put(("trip",), "hotel", {"text": "Riverside"})
    a.depart()
    arrive(a)
    assert s1.get(("trip",), "hotel") is not None
    sc.put(("trip",), "hotel", PRIVATE)
    reader: list[threading.Thread] = []
    read, go = _held_reads(a, reader)
    seen: list[object] = []
    reader.append(threading.Thread(target=lambda: seen.append(s1.get(("trip",), "hotel"))))
    reader[0].start()
    assert read.wait(120)
    a.depart()
    arrive(a)
    assert s1.get(("trip",), "elsewhere") is None  # the new return's lens replaces it
    go.set()
    reader[0].join(120)

    assert seen == [None]


def test_a_write_whose_recording_failed_is_pending_only_if_the_log_holds_it(
    three: dict[str, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store error while recording (not a refusal) kept the ids pending for the store's
    life, one a failure (a review)."""
    a = three["a"]
    s1 = ReadmitStore(InMemoryStore(), a)
    a.depart()
    arrive(a)

    def locked(events: Any) -> Any:
        raise StoreError("database is locked")

    monkeypatch.setattr(a, "record", locked)
    for n in range(3):
        with pytest.raises(StoreError):
            s1.put(("trip",), f"hotel{n}", {"text": "Riverside"})

    assert s1._pending.ids == set()  # the log holds none of them: nothing to meet


def test_a_write_readmit_refuses_leaves_nothing_pending(three: dict[str, Member]) -> None:
    s1 = ReadmitStore(InMemoryStore(), three["a"])
    three["a"].depart()
    arrive(three["a"])
    bad = {"text": "x", "_readmit": {"cites": ["no-such-evidence"]}}

    for n in range(3):
        with pytest.raises(InvalidInput):
            s1.put(("trip",), f"hotel{n}", bad)

    assert s1._pending.ids == set()


def test_a_new_lens_has_the_stores_pending_writes_before_another_thread_can_read_through_it(
    three: dict[str, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Published first, a new lens briefly held an empty pending set of its own: an own
    write recorded then, its value not yet landed, showed what the path held (a review)."""
    s1 = ReadmitStore(InMemoryStore(), three["a"])
    settled = s1._pending.settled
    published: list[bool] = []

    def watched(lens: Any) -> set[str]:
        published.append(s1._lens is lens)
        return settled(lens)

    monkeypatch.setattr(s1._pending, "settled", watched)
    three["a"].depart()
    arrive(three["a"])
    s1.get(("trip",), "hotel")

    assert published[0] is False


class _SlowPuts(InMemoryStore):
    """An inner store whose async puts wait, once begun, until the test lets them go on
    (a node's timeout cancels them meanwhile)."""

    def __init__(self, started: threading.Event, go: threading.Event) -> None:
        super().__init__()
        self.started, self.go = started, go

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        if any(isinstance(op, PutOp) for op in listed):
            self.started.set()
            while not self.go.is_set():
                await asyncio.sleep(0.01)
        return await super().abatch(listed)


@pytest.mark.usefixtures("checks_raced")
@pytest.mark.parametrize("twice", [False, True], ids=["once", "twice"])
@pytest.mark.parametrize("while_", ["recording", "writing"])
def test_a_cancelled_async_write_leaves_readmit_matching_the_inner_store(
    three: dict[str, Member], while_: str, twice: bool
) -> None:
    """Cancelled, the write stayed in readmit but never reached the inner store, whose
    path held another principal's value: the next return admitted the write, and the read
    showed that value (a review; a second cancellation, another review)."""
    a = three["a"]
    started, go = threading.Event(), threading.Event()
    inner = _SlowPuts(started, go) if while_ == "writing" else InMemoryStore()
    s1, sc = ReadmitStore(inner, a), ReadmitStore(inner, three["c"])
    a.depart()
    arrive(a)
    sc.put(("trip",), "hotel", PRIVATE)  # a sync put: the inner store's batch, not held
    record = a.record

    def held(
        events: Any, own: bool = False
    ) -> Any:  # recording waits while the caller is cancelled
        started.set()
        assert go.wait(120)
        return record(events, own)

    if while_ == "recording":
        a.record = held  # type: ignore[method-assign]

    async def cancelled_put() -> None:
        put = asyncio.ensure_future(s1.aput(("trip",), "hotel", {"text": "Riverside"}))
        while not started.is_set():  # recording, or in the inner store's put: held there
            await asyncio.sleep(0.01)
        put.cancel()
        if twice:
            await asyncio.sleep(0.05)  # while the first is handled
            put.cancel()
        go.set()
        with pytest.raises(asyncio.CancelledError):
            await put

    asyncio.run(cancelled_put())
    a.record = record  # type: ignore[method-assign]
    gc.collect()  # the cancelled task's traceback held the lens it wrote through
    a.depart()
    arrive(a)

    got, there = s1.get(("trip",), "hotel"), inner.get(("trip",), "hotel")
    assert there is not None
    if while_ == "recording":  # never sent: the path holds c's value, not the agent's
        assert got is None
    else:  # let land, then matched: the agent's own value, as the inner store holds it
        assert got is not None
        assert got.value == there.value == {"text": "Riverside"}
    a.depart()
    arrive(a)
    s1.get(("trip",), "hotel")  # every lens left has followed past the write: not pending

    assert s1._pending.ids == set()


class _Interrupted(InMemoryStore):
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        if any(isinstance(op, PutOp) for op in listed):
            raise KeyboardInterrupt
        return super().batch(listed)


def test_an_interrupt_goes_on_as_one_when_readmit_cannot_record_the_correction(
    three: dict[str, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The correction's own failure replaced the interrupt (a review): an `except
    Exception` in the caller then swallowed it."""
    a = three["a"]
    s1 = ReadmitStore(_Interrupted(), a)
    record, calls = a.record, [0]

    def first_only(events: Any) -> Any:
        calls[0] += 1
        if calls[0] > 1:
            raise StoreError("database is locked")
        return record(events)

    monkeypatch.setattr(a, "record", first_only)

    with pytest.raises(KeyboardInterrupt) as raised:
        s1.put(("trip",), "hotel", {"text": "Riverside"})
    assert "could not record that the LangGraph store failed" in str(raised.value.__notes__)
    monkeypatch.undo()
    a.depart()  # the undo, owed, is recorded first
    assert a.store.visible_state("trip", "a") == []


def test_readmit_unreadable_while_the_inner_write_fails_gives_the_note_and_the_cause(
    three: dict[str, Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading readmit for the correction ran outside the note's reach: the caller got a
    bare ``database is locked``, no path named, the inner store's error lost (a probe)."""
    a, inner = three["a"], FailingStore()
    s1 = ReadmitStore(inner, a)
    s1.put(("trip",), "hotel", {"text": "Sunrise"})
    inner.failing = True

    def locked() -> Any:
        raise StoreError("database is locked")

    monkeypatch.setattr(a, "visible", locked)

    with pytest.raises(StoreError, match="database is locked") as raised:
        s1.put(("trip",), "hotel", {"text": "Riverside"})
    assert raised.value.__notes__ == [
        "readmit could not record that the LangGraph store failed: put 'trip/hotel' "
        "(recorded before the next write, departure or return on this store)"
    ]
    assert isinstance(raised.value.__cause__, OSError)
    assert discard(a.store, "trip") == ["LangGraph writes that failed: put 'trip/hotel'"]


def test_a_failed_batch_is_undone_where_another_path_holds_a_value_no_text_says(
    three: dict[str, Member],
) -> None:
    """A value written around readmit (keys of mixed types) at one path of the batch
    made the correction raise: nothing was recorded, not even the undo of the other
    put, and the next return admitted a hotel the inner store never got (a review)."""
    a, inner = three["a"], FailingStore()
    s1 = ReadmitStore(inner, a)
    mixed: dict[Any, Any] = {1: "written around readmit", "b": 2}
    inner.put(("trip",), "legacy", mixed)
    inner.failing = True

    with pytest.raises(OSError, match="disk full"):
        s1.batch(
            [
                PutOp(("trip",), "hotel", {"text": "Sunrise Hotel is booked."}),
                PutOp(("trip",), "legacy", {"text": "replaced"}),
            ]
        )

    assert [i.text for i in a.visible()] == []


def test_a_put_holding_nan_that_landed_is_kept_though_its_answer_was_lost(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """SqliteStore hands NaN back as None: compared as values, the landed put was taken
    for a failed one and revoked while the store held it (a review)."""
    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
    inner = FailingSqliteStore(conn)
    inner.setup()
    a = three["a"]
    s1 = ReadmitStore(inner, a)
    inner.landing = True

    with pytest.raises(OSError, match="connection lost"):
        s1.put(("trip",), "hotel", {"text": "Sunrise", "rate": float("nan")})

    assert [i.text for i in a.visible()] == ['"trip/hotel" = {"rate": null, "text": "Sunrise"}']
    conn.close()


@pytest.mark.parametrize("before", [False, True], ids=["a new path", "over its own write"])
def test_an_own_put_that_landed_though_its_answer_was_lost_is_read(
    three: dict[str, Member], tmp_path: Path, before: bool
) -> None:
    """The inner store wrote it, then raised: readmit holds it as it is, and the read hid it
    until the next return (a review; over the agent's own write since the last stop's)."""
    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
    inner = FailingSqliteStore(conn)
    inner.setup()
    a = three["a"]
    s1 = ReadmitStore(inner, a)
    a.depart()
    arrive(a)
    if before:
        s1.put(("trip",), "hotel", {"text": "Sunrise"})
    inner.landing = True

    with pytest.raises(OSError, match="connection lost"):
        s1.put(("trip",), "hotel", {"text": "Riverside"})
    inner.landing = False

    hotel = s1.get(("trip",), "hotel")
    conn.close()
    assert hotel is not None
    assert hotel.value == {"text": "Riverside"}


@pytest.mark.parametrize("before", [False, True], ids=["a new path", "over its own write"])
def test_an_own_async_put_cancelled_while_it_landed_is_read(
    three: dict[str, Member], before: bool
) -> None:
    """A node's timeout cancels the put while the inner store lands it: readmit lets it
    finish and holds it as it is; the read hid it until the next return (a review)."""
    started, go = threading.Event(), threading.Event()
    inner = _SlowPuts(started, go)
    a = three["a"]
    s1 = ReadmitStore(inner, a)
    a.depart()
    arrive(a)

    async def scenario() -> object:
        if before:
            go.set()
            await s1.aput(("trip",), "hotel", {"text": "Sunrise"})
            started.clear()
            go.clear()
        await cancelled_while(s1.aput(("trip",), "hotel", {"text": "Riverside"}), started, go)
        return await s1.aget(("trip",), "hotel")

    hotel = asyncio.run(asyncio.wait_for(scenario(), 60))

    assert hotel is not None
    assert getattr(hotel, "value", None) == {"text": "Riverside"}


@pytest.mark.usefixtures("checks_raced")
@pytest.mark.parametrize("withdrawn", [False, True], ids=["standing", "withdrawn since"])
def test_a_failed_write_over_a_path_a_teammate_wrote_since_does_not_show_its_value(
    three: dict[str, Member], withdrawn: bool
) -> None:
    """a's write is recorded, b's later write of the path lands, a's fails. Where b's
    version was withdrawn meanwhile (through readmit, the inner store still holds its
    value), readmit writes that value back in a's name, and the lens showed it as the value
    a saw before its write (a review); where it stands, nothing is written back (a fuzz:
    the value was stated again in the failed writer's name)."""
    inner, s1, s2 = _admitted_sunrise(three)
    put = inner.batch

    def meanwhile(ops: Iterable[Op]) -> list[Result]:
        inner.batch = put  # type: ignore[method-assign]
        s2.put(("trip",), "hotel", {"text": "b's, written after a's"})
        if withdrawn:
            [bs] = [i.id for i in three["b"].visible() if "b's" in i.text]
            three["b"].revoke([bs], "withdrawn over HTTP")
        assert s1.get(("trip",), "hotel") is None  # the lens met both writes
        inner.failing = True
        return put(ops)

    inner.batch = meanwhile  # type: ignore[method-assign]
    with pytest.raises(OSError, match="disk full"):
        s1.put(("trip",), "hotel", {"text": "Riverside"})
    inner.failing = False

    last = three["a"].store.events("trip")[-1].event
    assert (last.id.split("-")[0], last.author) == (("restore", "a") if withdrawn else ("put", "b"))
    assert s1.get(("trip",), "hotel") is None


def test_a_failed_hearsay_write_keeps_showing_the_admitted_value(three: dict[str, Member]) -> None:
    """Hearsay replaces nothing, so the admitted version stands after the undo; a restore
    that skipped every standing version hid the path, which still holds it (a fuzz)."""
    inner, s1, _ = _admitted_sunrise(three)
    inner.failing = True

    with pytest.raises(OSError, match="disk full"):
        s1.put(("trip",), "hotel", {"text": "Riverside?", "_readmit": {"unconfirmed": True}})
    inner.failing = False

    hotel = s1.get(("trip",), "hotel")
    assert hotel is not None
    assert hotel.value == {"text": "Sunrise"}


class _LandedThenRaised(InMemoryStore):
    """Its next put lands, runs ``meanwhile`` (another write of the path), then raises."""

    meanwhile: Callable[[], object] | None = None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed, meanwhile = list(ops), self.meanwhile
        if meanwhile is None or not any(isinstance(op, PutOp) for op in listed):
            return super().batch(listed)
        self.meanwhile = None
        super().batch(listed)
        meanwhile()
        raise OSError("connection lost")


def test_the_agents_write_over_a_teammates_failed_write_is_read(three: dict[str, Member]) -> None:
    """b's write lands, a's lands over it, then b's inner store raises: readmit wrote a's
    value back in b's name, and a's lens hid it as b's write (a fuzz)."""
    inner = _LandedThenRaised()
    s1, s2 = ReadmitStore(inner, three["a"]), ReadmitStore(inner, three["b"])
    three["a"].depart()
    arrive(three["a"])
    mine = {"text": "Dinner at the Sunrise (a)"}
    inner.meanwhile = lambda: s1.put(("notes",), "dinner", mine)

    with pytest.raises(OSError, match="connection lost"):
        s2.put(("notes",), "dinner", {"text": "Dinner at the Harbor Inn (b)"})

    assert [r.event.author for r in three["a"].store.events("trip")][-1] == "a"
    dinner = s1.get(("notes",), "dinner")
    assert dinner is not None
    assert dinner.value == mine


def test_a_value_nested_too_deep_to_render_is_refused_before_anything_is_written(
    three: dict[str, Member],
) -> None:
    """With NaN inside, it raised a bare RecursionError (a review)."""
    a, inner = three["a"], FailingStore()
    s1 = ReadmitStore(inner, a)
    value: dict[str, Any] = {"rate": float("nan")}
    for _ in range(2000):
        value = {"v": value}

    with pytest.raises(InvalidInput, match="nested too deeply"):
        s1.put(("trip",), "deep", value)

    assert a.visible() == []
    assert inner.get(("trip",), "deep") is None


def test_a_failed_put_that_widens_its_readers_is_undone_though_its_text_is_the_same(
    three: dict[str, Member],
) -> None:
    """Compared by rendered text alone (which leaves the annotations out), the failed put
    counted as landed: readmit kept it, and another principal read the budget (a review)."""
    a, c, inner = three["a"], three["c"], FailingStore()
    s1 = ReadmitStore(inner, a)
    s1.put(("trip",), "budget", {"text": "Budget is 9000 EUR"})
    inner.failing = True
    wider = {"readers": {"principals": ["team", "other"]}}

    with pytest.raises(OSError, match="disk full"):
        s1.put(("trip",), "budget", {"text": "Budget is 9000 EUR", "_readmit": wider})

    assert [sorted(i.scope.principals) for i in a.visible()] == [["team"]]
    assert c.visible() == []


@pytest.mark.parametrize("down", [False, True], ids=["read back", "inner store down"])
def test_a_failed_put_for_other_readers_only_is_undone(
    three: dict[str, Member], down: bool
) -> None:
    """The undo revoked only what the writer may read: a put for another principal alone
    that the inner store failed stayed in readmit, and that principal's return admitted a
    value the inner store never held."""
    a, c, inner = three["a"], three["c"], FailingStore()
    s1, sc = ReadmitStore(inner, a), ReadmitStore(inner, c)
    c.depart()
    inner.failing, inner.down = True, down

    with pytest.raises(OSError, match="disk full"):
        s1.put(("trip",), "hotel", PRIVATE)
    inner.failing = inner.down = False

    assert c.visible() == []
    decided = arrive(c)
    assert decided is not None
    assert isinstance(decided.decision, Issued)
    assert decided.decision.items == ()
    assert sc.get(("trip",), "hotel") is None
