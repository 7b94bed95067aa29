"""An item's validity that ends after a return, as the memory layers serve between returns.

A return excludes an item whose ``valid_to`` passed (``expired``) and what rests on it
(``premise_invalidated``). Nothing in the log says when that happens: the layers served
what a teammate stated since on another principal's item until the next return, after
that item's end (a review), and what rests on an item of C that ended. They now follow the
ends by the member's clock (`readmit.integrations.ends`).
"""

import asyncio
import random
import sqlite3
import tempfile
import threading
from collections.abc import Collection
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession, TResponseInputItem
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from builders import KEY
from readmit.admission.decision import Issued
from readmit.bench.backends import mem0_bank
from readmit.clock import format_time
from readmit.decide import Decided
from readmit.errors import ReadmitError
from readmit.events import Assert, ItemDraft, Revoke
from readmit.integrations import watch
from readmit.integrations.agents_sdk import (
    Learned,
    ReadmitSession,
    assistant_messages,
    message_text,
)
from readmit.integrations.fallen import admitted_ids
from readmit.integrations.following import Following
from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.langgraph.admitted import Lens
from readmit.integrations.langgraph.keys import identity, item_key
from readmit.integrations.mem0 import ReadmitMemory
from readmit.integrations.team import Member, Removal, removals
from readmit.model import Agent, Validity
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store

START = datetime(2026, 5, 1, 8, tzinfo=UTC)
EVERYONE = frozenset({"*"})
TRIP = {"user_id": "trip"}
TRIP_PATH = ("trip",)
ADD: dict[str, object] = {"user_id": "trip", "infer": False}


class Clock:
    """The members' clock: it moves only when a test moves it."""

    def __init__(self) -> None:
        self.at = START

    def __call__(self) -> datetime:
        return self.at

    def after(self, minutes: int) -> datetime:
        return START + timedelta(minutes=minutes)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def members(store: WorkStateStore, clock: Clock) -> dict[str, Member]:
    """a1 and a2 of the family, x1 of the agency, on both stores."""
    agents = [("a1", "family"), ("a2", "family"), ("x1", "agency")]
    store.create_workspace("trip", [Agent(id=a, principal=p, role="planner") for a, p in agents])
    signer = HmacSha256Signer(KEY)
    return {a: Member(store, "trip", a, signer, clock=clock) for a, _ in agents}


def _state(member: Member, item_id: str, text: str, **fields: object) -> None:
    item = ItemDraft(id=item_id, text=text, **fields)  # type: ignore[arg-type]
    member.record([Assert(id=f"e-{item_id}", at=member.clock(), author=member.agent, item=item)])


def _ends(clock: Clock, minutes: int) -> dict[str, object]:
    return {"validity": Validity(valid_to=clock.after(minutes))}


def _returned(member: Member) -> Decided:
    member.depart()
    return member.return_()


def _excluded(decided: Decided) -> dict[str, str]:
    """Why each item the return's view does not hold is out (its departure's too)."""
    return {item: r.reason for item, r in removals(decided).items()}


def test_what_rests_on_another_principals_item_falls_at_its_end(
    members: dict[str, Member], clock: Clock
) -> None:
    """The venue is the agency's, outside C: the store traced it as a chain, and said
    nothing of its end; the layer served the meeting point past it (a review)."""
    a1, x1 = members["a1"], members["x1"]
    _state(x1, "venue", "The venue is Hall A.", **_ends(clock, 30))
    following = Following(_returned(a1))
    on_venue = {"depends_on": frozenset({"venue"}), "principals": EVERYONE}
    _state(x1, "meet", "Meet at Hall A at 9:00.", **on_venue)

    assert following.withdrawn(a1) == []
    clock.at = clock.after(29)
    assert following.withdrawn(a1) == []
    clock.at = clock.after(30)
    gone = following.withdrawn(a1)

    assert gone == [Removal("meet", "premise_invalidated", "")]  # the venue is not a1's to name
    assert _excluded(_returned(a1))["meet"] == "premise_invalidated"  # as the next return says


def test_an_item_stated_since_the_return_is_withdrawn_at_its_end_with_what_rests_on_it(
    members: dict[str, Member], clock: Clock
) -> None:
    a1, a2 = members["a1"], members["a2"]
    following = Following(_returned(a1))
    _state(a2, "gate", "Boarding is at gate 4.", **_ends(clock, 10))
    _state(a2, "walk", "Gate 4 is a ten-minute walk.", depends_on=frozenset({"gate"}))
    following.withdrawn(a1)

    clock.at = clock.after(10)
    gone = following.withdrawn(a1)

    assert gone == [
        Removal("gate", "expired", "valid until 2026-05-01T08:10:00Z"),
        Removal("walk", "premise_invalidated", "depends on gate, which ended"),
    ]
    excluded = _excluded(_returned(a1))
    assert (excluded["gate"], excluded["walk"]) == ("expired", "premise_invalidated")


def _followed_from(a1: Member, admitted: str, expires: str) -> Following:
    """The walk after a1's return, whose view admits ``admitted`` and ends at ``expires``."""
    decided = _returned(a1)
    assert isinstance(decided.decision, Issued)
    assert admitted in {i.id for i in decided.decision.items}
    assert decided.decision.signed["expires_at"] == expires
    return Following(decided)


def test_what_rests_on_an_item_of_c_falls_at_its_end_and_the_item_is_the_views(
    members: dict[str, Member], clock: Clock
) -> None:
    """The view expires at the room's end; what a teammate stated on it since is not the
    view's, and was served on."""
    a1, a2 = members["a1"], members["a2"]
    _state(a2, "room", "The standup room is Room Delta.", **_ends(clock, 20))
    following = _followed_from(a1, "room", "2026-05-01T08:20:00Z")
    _state(a2, "projector", "Room Delta has a projector.", depends_on=frozenset({"room"}))
    following.withdrawn(a1)

    clock.at = clock.after(25)

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("projector", "premise_invalidated")
    ]


def test_what_is_stated_since_on_an_item_of_c_falls_at_the_end_of_that_items_premise(
    members: dict[str, Member], clock: Clock
) -> None:
    """The meeting point rests on the agency's venue, which only the agency reads; a2's
    note since rests on the meeting point. The view ends at the venue's end; the note is
    not the view's."""
    a1, a2, x1 = members["a1"], members["a2"], members["x1"]
    _state(x1, "venue", "The venue is Hall A.", **_ends(clock, 30))
    on_venue = {"depends_on": frozenset({"venue"}), "principals": EVERYONE}
    _state(x1, "meet", "Meet at Hall A at 9:00.", **on_venue)
    following = _followed_from(a1, "meet", "2026-05-01T08:30:00Z")
    _state(a2, "coffee", "Coffee before the meeting.", depends_on=frozenset({"meet"}))
    following.withdrawn(a1)

    clock.at = clock.after(30)

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("meet", "premise_invalidated"),
        ("coffee", "premise_invalidated"),
    ]
    assert _excluded(_returned(a1))["coffee"] == "premise_invalidated"


def test_a_lens_hides_at_its_end_the_agents_own_write_on_an_item_that_ended(
    members: dict[str, Member], clock: Clock
) -> None:
    """The LangGraph lens shows the agent's own writes, and follows the same ends, on the
    copy an expired view makes too (`Lens.lapsed`)."""
    a1, a2 = members["a1"], members["a2"]
    _state(a2, "venue", "The venue is Hall A.", **_ends(clock, 30))
    lens = Lens.of(_returned(a1))
    path = identity(("trip",), "meet")
    _state(a1, "meet", "Meet at Hall A.", key=item_key(path), depends_on=frozenset({"venue"}))
    lens.catch_up(a1)
    lapsed = lens.lapsed()
    assert path in lens.visible
    assert path in lapsed.visible

    clock.at = clock.after(30)
    for shown in (lens, lapsed):
        shown.catch_up(a1)
        assert path not in shown.visible


def _mem0_returned(
    members: dict[str, Member], tmp_path: Path
) -> tuple[ReadmitMemory, ReadmitMemory]:
    """a1's and a2's wrappers of one Mem0 bank, a1 returned."""
    shared = mem0_bank.bank(tmp_path)
    a1 = ReadmitMemory(shared, members["a1"])
    a2 = ReadmitMemory(shared, members["a2"])
    a1.depart()
    a1.get_all(filters=TRIP)  # the return
    return a1, a2


def test_a_mem0_bank_stops_serving_a_teammates_memory_and_what_rests_on_it_at_its_end(
    members: dict[str, Member], clock: Clock, tmp_path: Path
) -> None:
    """Through the wrapper: both were served as fresh until the next return."""
    a1, a2 = _mem0_returned(members, tmp_path)
    until = format_time(clock.after(10))
    gate = a2.add("Boarding is at gate 4", metadata={"_readmit": {"valid_to": until}}, **ADD)
    on_gate = {"_readmit": {"depends_on": [{"memory": gate["results"][0]["id"]}]}}
    a2.add("Gate 4 is a ten-minute walk", metadata=on_gate, **ADD)
    served = a1.get_all(filters=TRIP)

    clock.at = clock.after(10)
    ended = a1.get_all(filters=TRIP)

    assert sorted(m["memory"] for m in served["results"]) == [
        "Boarding is at gate 4",
        "Gate 4 is a ten-minute walk",
    ]
    assert ended["results"] == []
    assert {r["memory"]: r["reason"] for r in ended["readmit"]["removed"]} == {
        "Boarding is at gate 4": "expired",
        "Gate 4 is a ten-minute walk": "premise_invalidated",
    }


@pytest.mark.parametrize("premise", ["of C", "stated since"])
def test_a_langgraph_get_stops_showing_the_agents_own_value_on_one_that_ended(
    members: dict[str, Member], clock: Clock, premise: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hottest read compares one time (`Lens.wake`): the view's expiry, or an end the
    walk follows sooner (a premise stated since is not the view's, and ends before it). A
    view that expires shows only the agent's own writes (``empty``), on the same walk."""
    monkeypatch.setattr(watch, "FOLLOW_EVERY", 3600)  # no read is due for the log's sake
    a1, a2 = members["a1"], members["a2"]
    inner = InMemoryStore()
    s1, s2 = ReadmitStore(inner, a1, on_withheld="empty"), ReadmitStore(inner, a2)
    museum = {"text": "The museum is open.", "_readmit": {"valid_to": format_time(clock.after(30))}}
    if premise == "of C":
        s2.put(TRIP_PATH, "museum", museum)
    a1.depart()
    arrive(a1)
    s1.get(TRIP_PATH, "nothing")  # the lens, made
    if premise == "stated since":
        s2.put(TRIP_PATH, "museum", museum)
    [item] = [i.id for i in a2.visible() if i.key == item_key(identity(TRIP_PATH, "museum"))]
    s1.put(TRIP_PATH, "visit", {"text": "Visit at ten.", "_readmit": {"depends_on": [item]}})
    assert s1.get(TRIP_PATH, "visit") is not None

    clock.at = clock.after(29)
    assert s1.get(TRIP_PATH, "visit") is not None
    clock.at = clock.after(30)
    assert s1.get(TRIP_PATH, "visit") is None
    assert [i.key for i in s1.search(TRIP_PATH)] == []


def test_an_agents_sdk_session_leaves_out_its_own_fact_on_a_teammates_that_ended(
    members: dict[str, Member], clock: Clock, tmp_path: Path
) -> None:
    """The gate, stated since the return, is not the view's: the view does not end with it."""
    a1, a2 = members["a1"], members["a2"]

    def on_gate(item: TResponseInputItem) -> Learned | None:
        fact = assistant_messages(item)
        return (
            None if fact is None else replace(fact, annotations={"depends_on": [{"key": "gate"}]})
        )

    session = ReadmitSession(SQLiteSession("a1", tmp_path / "s.db"), a1, learned=on_gate)

    async def scenario() -> tuple[list[str], list[str]]:
        session.depart()
        await session.get_items()  # the return
        _state(a2, "gate", "Boarding is at gate 4.", key="gate", **_ends(clock, 10))
        await session.add_items([{"role": "assistant", "content": "Walk to gate 4 at 8:30."}])
        served = [message_text(i) for i in await session.get_items()]
        clock.at = clock.after(10)
        return served, [message_text(i) for i in await session.get_items()]

    served, ended = asyncio.run(scenario())

    assert served[1:] == ["Walk to gate 4 at 8:30."]
    assert ended[1:] == []
    assert "(decision 1, issued)" in ended[0]  # not decided afresh: the view stands
    assert "- Walk to gate 4 at 8:30. (premise_invalidated: depends on gate" in ended[0]


@pytest.mark.parametrize("reads", ["sync", "async"])
def test_a_langgraph_read_hides_the_agents_value_on_a_teammates_resting_on_a_chain_that_ended(
    members: dict[str, Member], clock: Clock, reads: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hall is the agency's, outside C; the meeting point, stated since, rests on it:
    the store traces the hall as a chain and reports its end (`News.ends`), which the lens
    must know before it meets the meeting point (a review: a mutant that loaded it after
    served the agent's note past the hall's end, sync and async)."""
    monkeypatch.setattr(watch, "FOLLOW_EVERY", 3600)  # no read is due for the log's sake
    a1, x1 = members["a1"], members["x1"]
    _state(x1, "hall", "The agency holds Hall A.", **_ends(clock, 30))
    s1 = ReadmitStore(InMemoryStore(), a1, on_withheld="empty")
    a1.depart()
    arrive(a1)

    def get() -> object:
        if reads == "sync":
            return s1.get(TRIP_PATH, "note")
        return asyncio.run(s1.aget(TRIP_PATH, "note"))

    get()  # the lens
    _state(x1, "meet", "Meet at Hall A.", principals=EVERYONE, depends_on=frozenset({"hall"}))
    s1.put(TRIP_PATH, "note", {"text": "At Hall A at 9.", "_readmit": {"depends_on": ["meet"]}})
    assert get() is not None

    clock.at = clock.after(30)

    assert get() is None
    [note] = [i.id for i in a1.visible() if i.key == item_key(identity(TRIP_PATH, "note"))]
    assert _excluded(_returned(a1))[note] == "premise_invalidated"


def test_a_read_beside_a_lens_taking_down_what_ended_waits_for_it(
    members: dict[str, Member], clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One reader takes the ended item off the walk's ends, then hides its path, under the
    lens's lock; another that looked at the ends in between saw none due, took no lock,
    and served the path (a review). It now looks at `Lens.wake`, moved after the hiding."""
    monkeypatch.setattr(watch, "FOLLOW_EVERY", 3600)  # both reads within one poll of the log
    a1, a2 = members["a1"], members["a2"]
    inner = InMemoryStore()
    s1, s2 = ReadmitStore(inner, a1, on_withheld="empty"), ReadmitStore(inner, a2)
    a1.depart()
    arrive(a1)
    s1.get(TRIP_PATH, "nothing")  # the lens
    s2.put(
        TRIP_PATH,
        "museum",
        {"text": "Open.", "_readmit": {"valid_to": format_time(clock.after(30))}},
    )
    [museum] = [i.id for i in a2.visible() if i.key == item_key(identity(TRIP_PATH, "museum"))]
    s1.put(TRIP_PATH, "visit", {"text": "Visit at ten.", "_readmit": {"depends_on": [museum]}})
    assert s1.get(TRIP_PATH, "visit") is not None

    taking, go_on = threading.Event(), threading.Event()
    fallen = Following._fallen

    def held(self: Following, premise: str, went: str = "was withdrawn") -> list[Removal]:
        if threading.current_thread().name == "first":
            taking.set()
            go_on.wait(60)
        return fallen(self, premise, went)

    monkeypatch.setattr(Following, "_fallen", held)
    clock.at = clock.after(30)
    got: dict[str, object] = {}
    first = threading.Thread(
        target=lambda: got.update(first=s1.get(TRIP_PATH, "visit")), name="first"
    )
    second = threading.Thread(target=lambda: got.update(second=s1.get(TRIP_PATH, "visit")))
    first.start()
    assert taking.wait(60)
    second.start()
    second.join(0.5)  # it would have served by now; it waits on the lock instead
    go_on.set()
    first.join(60)
    second.join(60)

    assert got == {"first": None, "second": None}


def test_an_item_stated_since_that_the_agent_may_not_read_is_not_named_again_at_its_end(
    members: dict[str, Member], clock: Clock
) -> None:
    """It went as ``unauthorized`` when stated; naming it at its end told when it ended."""
    a1, x1 = members["a1"], members["x1"]
    following = Following(_returned(a1))
    _state(x1, "fee", "The agency's fee is 5%.", **_ends(clock, 10))
    assert following.withdrawn(a1) == [Removal("fee", "unauthorized", "")]

    clock.at = clock.after(10)

    assert following.withdrawn(a1) == []


def test_an_item_stated_since_that_the_agent_may_not_read_is_not_named_for_its_start(
    members: dict[str, Member], clock: Clock
) -> None:
    a1, x1 = members["a1"], members["x1"]
    following = Following(_returned(a1))
    _state(x1, "fee", "The agency's fee is 5%.", validity=Validity(valid_from=clock.after(10)))

    assert following.withdrawn(a1) == [Removal("fee", "unauthorized", "")]


def test_an_item_stated_since_that_is_not_valid_yet_is_withheld_alone(
    members: dict[str, Member], clock: Clock
) -> None:
    """A return excludes it (``not_yet_valid``) and admits what rests on it; the layers
    served it at once (a probe). It is not shown at its start: the next return shows it."""
    a1, a2 = members["a1"], members["a2"]
    following = Following(_returned(a1))
    start = {"validity": Validity(valid_from=clock.after(10))}
    _state(a2, "closed", "The office is closed.", **start)
    _state(a2, "remote", "Work from home.", depends_on=frozenset({"closed"}))
    _state(a2, "open", "The café is open.", validity=Validity(valid_from=START))

    assert following.withdrawn(a1) == [
        Removal("closed", "not_yet_valid", "valid from 2026-05-01T08:10:00Z")
    ]
    assert _excluded(_returned(a1)).get("closed") == "not_yet_valid"  # the rest admitted
    assert {"remote", "open"} <= admitted_ids(_returned(a1))
    clock.at = clock.after(10)
    assert following.withdrawn(a1) == []
    a2.record([Revoke(id="e-r", at=clock.at, author="a2", target="closed", why="reopened")])
    assert following.withdrawn(a1) == [
        Removal("closed", "revoked", "reopened"),
        Removal("remote", "premise_invalidated", "depends on closed, which was withdrawn"),
    ]


def test_a_withheld_item_is_named_once_served_from_its_start_and_named_at_its_end(
    members: dict[str, Member], clock: Clock
) -> None:
    """Not again at the next read; served again at its start, when the walk wakes for it
    once, as a return then admits it; named ``expired`` at its end, and what rests on it
    falls then. A walk that held it against the clock at every read kept LangGraph's hot
    read catching up for good (a review's mutants)."""
    a1, a2 = members["a1"], members["a2"]
    following = Following(_returned(a1))
    _state(
        a2,
        "shut",
        "The office is shut.",
        validity=Validity(valid_from=clock.after(10), valid_to=clock.after(20)),
    )
    _state(a2, "home", "Work from home.", depends_on=frozenset({"shut"}))
    [early] = following.withdrawn(a1)

    assert early.reason == "not_yet_valid"
    assert following.withdrawn(a1) == []
    assert following.ends.next == clock.after(10).timestamp()
    clock.at = clock.after(10)
    assert following.withdrawn(a1) == []
    assert following.back == ["shut"]
    assert following.gone == []
    assert following.ends.next == clock.after(20).timestamp()
    clock.at = clock.after(20)
    assert following.withdrawn(a1) == [
        Removal("shut", "expired", "valid until 2026-05-01T08:20:00Z"),
        Removal("home", "premise_invalidated", "depends on shut, which ended"),
    ]


def test_an_item_stated_on_a_withdrawn_premise_is_not_named_for_its_start(
    members: dict[str, Member], clock: Clock
) -> None:
    a1, a2 = members["a1"], members["a2"]
    _state(a2, "booked", "Room A is booked.")
    following = Following(_returned(a1))
    a2.record([Revoke(id="e-r", at=clock.at, author="a2", target="booked", why="cancelled")])
    later = Validity(valid_from=clock.after(10))
    _state(a2, "talk", "The talk is in Room A.", validity=later, depends_on=frozenset({"booked"}))

    assert [r.reason for r in following.withdrawn(a1)] == ["revoked", "premise_invalidated"]


def test_a_copy_of_the_walk_holds_its_starts_apart_and_a_walk_before_the_return_none(
    members: dict[str, Member], clock: Clock
) -> None:
    a1, a2 = members["a1"], members["a2"]
    decided = _returned(a1)
    following, before = Following(decided), Following(decided, from_start=True)
    copied = following.copy()
    _state(a2, "shut", "The office is shut.", validity=Validity(valid_from=clock.after(10)))
    following.take(a1.store.events("trip", decided.context.epoch), "a1")
    before.take(a1.store.events("trip", 0), "a1")

    assert [r.reason for r in following.lapse(clock)] == ["not_yet_valid"]
    assert copied.ends.starting == []  # it has not met the statement
    assert before.lapse(clock) == []
    assert before.ends.starting == []


def test_an_item_that_starts_before_the_read_that_meets_it_is_served(
    members: dict[str, Member], clock: Clock
) -> None:
    a1, a2 = members["a1"], members["a2"]
    following = Following(_returned(a1))
    _state(a2, "closed", "The office is closed.", validity=Validity(valid_from=clock.after(10)))
    clock.at = clock.after(10)

    assert following.withdrawn(a1) == []
    assert "closed" in admitted_ids(_returned(a1))


def test_a_mem0_bank_withholds_a_teammates_memory_until_its_start(
    members: dict[str, Member], clock: Clock, tmp_path: Path
) -> None:
    a1, a2 = _mem0_returned(members, tmp_path)
    later = {"_readmit": {"valid_from": format_time(clock.after(10))}}
    a2.add("The office is closed", metadata=later, **ADD)
    a2.add("Lunch is at noon", **ADD)

    early = a1.get_all(filters=TRIP)
    clock.at = clock.after(10)
    started = a1.get_all(filters=TRIP)  # no return: it was withheld until then

    assert [m["memory"] for m in early["results"]] == ["Lunch is at noon"]
    assert [(r["memory"], r["reason"]) for r in early["readmit"]["removed"]] == [
        ("The office is closed", "not_yet_valid")
    ]
    assert sorted(m["memory"] for m in started["results"]) == [
        "Lunch is at noon",
        "The office is closed",
    ]
    assert started["readmit"]["removed"] == []


def test_a_langgraph_get_hides_the_agents_own_value_until_its_start(
    members: dict[str, Member], clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A return hides it too: the layer showed the agent's own write at once. From its
    start it is shown, as a return then shows it (the layer hid it until the next one)."""
    monkeypatch.setattr(watch, "FOLLOW_EVERY", 3600)  # no read is due for the log's sake
    a1 = members["a1"]
    s1 = ReadmitStore(InMemoryStore(), a1, on_withheld="empty")
    a1.depart()
    arrive(a1)
    s1.get(TRIP_PATH, "nothing")  # the lens, made
    start = format_time(clock.after(10))
    s1.put(TRIP_PATH, "plan", {"text": "Ship on Monday.", "_readmit": {"valid_from": start}})
    s1.put(TRIP_PATH, "note", {"text": "Pack today."})

    assert s1.get(TRIP_PATH, "plan") is None
    assert [i.key for i in s1.search(TRIP_PATH)] == ["note"]
    clock.at = clock.after(10)
    started = s1.get(TRIP_PATH, "plan")
    assert started is not None
    assert started.value["text"] == "Ship on Monday."
    assert sorted(i.key for i in s1.search(TRIP_PATH)) == ["note", "plan"]
    clock.at = clock.after(9)
    [plan] = [i.id for i in a1.visible() if i.key == item_key(identity(TRIP_PATH, "plan"))]
    assert _excluded(_returned(a1))[plan] == "not_yet_valid"


def test_an_item_a_gate_excludes_is_named_once_not_again_at_its_start_or_end(
    members: dict[str, Member], clock: Clock
) -> None:
    a1, a2 = members["a1"], members["a2"]
    following = Following(_returned(a1))
    later = Validity(valid_from=clock.after(10), valid_to=clock.after(20))
    _state(a2, "audit", "The audit starts.", task="audit", validity=later)
    _state(a2, "lift", "The lift is out.", unconfirmed=True, **_ends(clock, 20))

    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("audit", "not_applicable"),
        ("lift", "missing_receipt"),
    ]
    for minutes in (10, 20):
        clock.at = clock.after(minutes)
        assert following.withdrawn(a1) == []
    assert following.back == []


def test_a_mem0_bank_does_not_serve_a_memory_stated_since_that_a_returns_gates_exclude(
    members: dict[str, Member], clock: Clock, tmp_path: Path
) -> None:
    """For another task or purpose (``not_applicable``), or hearsay (``missing_receipt``):
    served until the next return (a review). What rests on one is served, as a return
    admits it: a gate is no invalidation."""
    a1, a2 = _mem0_returned(members, tmp_path)
    for text, held in [
        ("The office is closed", {"task": "audit"}),
        ("The bar is open late", {"purposes": ["leisure"]}),
        ("Someone said the lift is out", {"unconfirmed": True}),
    ]:
        a2.add(text, metadata={"_readmit": held}, **ADD)
    [lift] = [i.id for i in members["a2"].visible() if "lift" in i.text]
    a2.add("Take the stairs", metadata={"_readmit": {"depends_on": [lift]}}, **ADD)

    got = a1.get_all(filters=TRIP)

    assert [m["memory"] for m in got["results"]] == ["Take the stairs"]
    assert sorted((r["memory"], r["reason"], r["detail"]) for r in got["readmit"]["removed"]) == [
        ("Someone said the lift is out", "missing_receipt", "no receipt: recorded as unconfirmed"),
        (
            "The bar is open late",
            "not_applicable",
            "for purposes 'leisure'; this return is for '*'",
        ),
        ("The office is closed", "not_applicable", "for task 'audit'; this return is to '*'"),
    ]
    a1.depart()
    again = a1.get_all(filters=TRIP)  # a return: the same
    assert [m["memory"] for m in again["results"]] == ["Take the stairs"]


def test_a_mem0_memory_withheld_until_its_start_and_deleted_meanwhile_is_not_served(
    members: dict[str, Member], clock: Clock, tmp_path: Path
) -> None:
    a1, a2 = _mem0_returned(members, tmp_path)
    later = {"_readmit": {"valid_from": format_time(clock.after(10))}}
    closed = a2.add("The office is closed", metadata=later, **ADD)["results"][0]["id"]
    assert a1.get_all(filters=TRIP)["results"] == []

    a2.delete(closed)
    clock.at = clock.after(10)

    assert a1.get_all(filters=TRIP)["results"] == []


def test_a_langgraph_path_a_teammate_wrote_after_the_agents_early_write_stays_hidden(
    members: dict[str, Member], clock: Clock
) -> None:
    """The agent's write waits for its start; a teammate's later write of the path is
    hidden until the next return, the agent's start notwithstanding."""
    a1, a2 = members["a1"], members["a2"]
    inner = InMemoryStore()
    s1, s2 = ReadmitStore(inner, a1, on_withheld="empty"), ReadmitStore(inner, a2)
    a1.depart()
    arrive(a1)
    start = format_time(clock.after(10))
    s1.put(TRIP_PATH, "plan", {"text": "Ship on Monday.", "_readmit": {"valid_from": start}})
    assert s1.get(TRIP_PATH, "plan") is None
    s2.put(TRIP_PATH, "plan", {"text": "Ship on Tuesday."})

    clock.at = clock.after(10)

    assert s1.get(TRIP_PATH, "plan") is None
    assert s1.search(TRIP_PATH) == []


def test_a_langgraph_write_withheld_until_its_start_is_shown_then_after_the_view_expired(
    members: dict[str, Member], clock: Clock
) -> None:
    """The view expires before the write starts: the lens of the agent's own writes that
    replaces the expired one shows it from its start."""
    a1 = members["a1"]
    a1.policy = Policy(view_ttl=timedelta(minutes=5))
    s1 = ReadmitStore(InMemoryStore(), a1, on_withheld="empty")
    a1.depart()
    arrive(a1)
    start = format_time(clock.after(10))
    s1.put(TRIP_PATH, "plan", {"text": "Ship on Monday.", "_readmit": {"valid_from": start}})
    assert s1.get(TRIP_PATH, "plan") is None
    clock.at = clock.after(6)
    assert s1.get(TRIP_PATH, "plan") is None  # the view expired

    clock.at = clock.after(10)

    started = s1.get(TRIP_PATH, "plan")
    assert started is not None
    assert started.value["text"] == "Ship on Monday."


class _Landing(InMemoryStore):
    """An inner store whose puts land only once ``go`` is set (on the event loop)."""

    go: asyncio.Event

    async def abatch(self, ops: Any) -> list[Any]:
        ops = list(ops)
        if any(isinstance(op, PutOp) for op in ops):
            await self.go.wait()
        return self.batch(ops)


@pytest.mark.parametrize("why", ["not valid yet", "on a withdrawn premise", "a teammate's later"])
def test_a_langgraph_write_met_in_the_log_before_it_landed_stays_hidden_once_it_lands(
    members: dict[str, Member], clock: Clock, why: str
) -> None:
    """A read while the agent's write was landing met its event and hid the path; the
    landing showed the path again (a review). A teammate's write of the path, later in the
    log, hides it as it does once the agent's has landed (whichever lands last)."""
    a1, a2 = members["a1"], members["a2"]
    inner = _Landing()
    s1 = ReadmitStore(inner, a1, on_withheld="empty")
    a1.depart()
    arrive(a1)
    _state(a1, "booked", "Room A is booked.")
    a1.record([Revoke(id="e-r", at=clock.at, author="a1", target="booked", why="cancelled")])
    s1.get(TRIP_PATH, "nothing")  # the lens, past the revocation
    held: dict[str, object] = {"text": "Meet in Room A on Monday."}
    if why == "not valid yet":
        held["_readmit"] = {"valid_from": format_time(clock.after(10))}
    elif why == "on a withdrawn premise":
        held["_readmit"] = {"depends_on": ["booked"]}

    async def scenario() -> tuple[object, object]:
        inner.go = asyncio.Event()

        async def read() -> object:
            while not s1._pending.ids:  # the write is recorded, not landed
                await asyncio.sleep(0.01)
            if why == "a teammate's later":
                ReadmitStore(inner, a2).put(TRIP_PATH, "plan", {"text": "Meet in Room B."})
            got = await s1.aget(TRIP_PATH, "plan")
            inner.go.set()
            return got

        _, during = await asyncio.gather(s1.aput(TRIP_PATH, "plan", held), read())
        return during, await s1.aget(TRIP_PATH, "plan")

    during, after = asyncio.run(asyncio.wait_for(scenario(), 60))  # no hang if it fails

    assert (during, after) == (None, None)
    assert s1.get(TRIP_PATH, "plan") is None


def test_the_agents_write_landing_while_its_newer_write_of_the_path_is_in_flight_is_shown(
    members: dict[str, Member],
) -> None:
    """The newer write replaced the older's item at the path; the older's landing took that
    for a path the lens had hidden (a review)."""
    a1 = members["a1"]
    gates = {"older": threading.Event(), "newer": threading.Event()}
    arrived = {"older": threading.Event(), "newer": threading.Event()}

    class Gated(InMemoryStore):
        def batch(self, ops: Any) -> list[Any]:
            ops = list(ops)
            name = threading.current_thread().name
            if name in gates and any(isinstance(op, PutOp) for op in ops):
                arrived[name].set()
                gates[name].wait(60)
            return super().batch(ops)

    s1 = ReadmitStore(Gated(), a1, on_withheld="empty")
    a1.depart()
    arrive(a1)
    writers = {
        name: threading.Thread(target=s1.put, args=(TRIP_PATH, "plan", {"text": name}), name=name)
        for name in gates
    }
    for name, writer in writers.items():
        writer.start()
        assert arrived[name].wait(60)
    assert s1.get(TRIP_PATH, "plan") is None  # both met in the log, neither landed
    gates["older"].set()
    writers["older"].join(60)
    shown = s1.get(TRIP_PATH, "plan")
    gates["newer"].set()
    writers["newer"].join(60)

    found = s1.get(TRIP_PATH, "plan")
    values = [None if i is None else i.value for i in (shown, found)]
    assert values == [{"text": "older"}, {"text": "newer"}]


def test_a_read_beside_a_lens_meeting_a_write_not_valid_yet_waits_for_it_to_be_hidden(
    members: dict[str, Member], clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lens showed the agent's write as it met it, and hid it only after the watch had
    moved on: a reader at the inner store meanwhile saw no new write and served it (a
    review). The watch now moves after the hiding, so the reader catches up and waits."""
    monkeypatch.setattr(watch, "FOLLOW_EVERY", 3600)  # no read is due for the log's sake
    a1 = members["a1"]
    at_inner, resume = threading.Event(), threading.Event()

    class Inner(InMemoryStore):
        def get(self, *args: Any, **kwargs: Any) -> Any:
            if threading.current_thread().name == "first":
                at_inner.set()
                resume.wait(60)
            return super().get(*args, **kwargs)

    inner = Inner()
    s1, s2 = ReadmitStore(inner, a1, on_withheld="empty"), ReadmitStore(inner, a1)
    a1.depart()
    arrive(a1)
    s1.get(TRIP_PATH, "nothing")  # the lens
    lapse = Following.lapse

    def late(self: Following, clock: Any) -> list[Removal]:
        if threading.current_thread().name == "second":
            resume.set()
            first.join(0.5)  # it would have served by now; it waits on the lock instead
        return lapse(self, clock)

    monkeypatch.setattr(Following, "lapse", late)
    got: dict[str, object] = {}
    first = threading.Thread(
        target=lambda: got.update(first=s1.get(TRIP_PATH, "plan")), name="first"
    )
    first.start()
    assert at_inner.wait(60)
    start = format_time(clock.after(10))
    s2.put(TRIP_PATH, "plan", {"text": "Ship on Monday.", "_readmit": {"valid_from": start}})
    second = threading.Thread(target=lambda: s1.get(TRIP_PATH, "other"), name="second")
    second.start()
    second.join(60)
    first.join(60)

    assert got == {"first": None}


def test_an_agents_sdk_session_leaves_out_its_own_fact_until_its_start(
    members: dict[str, Member], clock: Clock, tmp_path: Path
) -> None:
    a1 = members["a1"]
    start = format_time(clock.after(10))

    def later(item: TResponseInputItem) -> Learned | None:
        fact = assistant_messages(item)
        return None if fact is None else replace(fact, annotations={"valid_from": start})

    session = ReadmitSession(SQLiteSession("a1", tmp_path / "s.db"), a1, learned=later)

    async def scenario() -> tuple[list[str], list[str]]:
        session.depart()
        await session.get_items()  # the return
        await session.add_items([{"role": "assistant", "content": "The office reopens."}])
        early = [message_text(i) for i in await session.get_items()]
        clock.at = clock.after(10)
        return early, [message_text(i) for i in await session.get_items()]

    served, started = asyncio.run(scenario())

    assert served[1:] == []
    assert "- The office reopens. (not_yet_valid: valid from 2026-05-01T08:10:00Z)" in served[0]
    assert started[1:] == ["The office reopens."]
    assert "not_yet_valid" not in started[0]


def test_a_view_expires_at_the_end_of_a_premise_in_c_it_did_not_select(
    members: dict[str, Member], clock: Clock
) -> None:
    a1, a2 = members["a1"], members["a2"]
    a1.policy = Policy(max_items=1)
    _state(a2, "room", "Room Delta is booked.", **_ends(clock, 20))
    _state(a2, "projector", "Room Delta has a projector.", depends_on=frozenset({"room"}))

    decided = _returned(a1)

    assert isinstance(decided.decision, Issued)
    assert [i.id for i in decided.decision.items] == ["projector"]
    assert decided.decision.signed["expires_at"] == "2026-05-01T08:20:00Z"


def _statement(rnd: random.Random, who: Member, n: int, stated: list[str], clock: Clock) -> Assert:
    """A random statement: starting later or not, ending or not, shared or the agency's, on
    an earlier one or not, for another task or hearsay now and then."""
    fields: dict[str, Any] = {}
    start = clock.at + timedelta(minutes=rnd.randint(-5, 20)) if rnd.random() < 0.3 else None
    if rnd.random() < 0.5:
        end = (start or clock.at) + timedelta(minutes=rnd.randint(1, 20))
        fields["validity"] = Validity(valid_from=start, valid_to=end)
    elif start is not None:
        fields["validity"] = Validity(valid_from=start)
    if rnd.random() < 0.5:
        fields["principals"] = frozenset({rnd.choice(["agency", "*"])})
    if stated and rnd.random() < 0.6:
        fields["depends_on"] = frozenset(rnd.sample(stated, min(len(stated), rnd.randint(1, 2))))
    gate = rnd.random()  # one a return's gates U or P exclude
    if gate < 0.1:
        fields["task"] = "another task"
    elif gate < 0.2:
        fields["unconfirmed"] = True
    draft = ItemDraft(id=f"i{n}", text=f"Fact {n}.", **fields)
    return Assert(id=f"e{n}", at=clock.at, author=who.agent, item=draft)


def _admitted_afresh(store: WorkStateStore, clock: Clock, directory: Path) -> set[str]:
    """What a1 would be admitted if it departed and returned now (on a copy of the store)."""
    copy = directory / f"fresh-{clock.at.timestamp():.0f}.db"
    with sqlite3.connect(directory / "r.db") as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    fresh = open_store(f"sqlite:///{copy}")
    try:
        a1 = Member(fresh, "trip", "a1", HmacSha256Signer(KEY), clock=clock, policy=WIDE)
        a1.depart()
        decided = a1.return_()
        decision = decided.decision
        admitted = {i.id for i in decision.items} if isinstance(decision, Issued) else set()
        assert not _ended_under(decided, admitted)
        return admitted
    finally:
        fresh.close()


def _ended_under(decided: Decided, admitted: Collection[str]) -> set[str]:
    """The items ``admitted`` rests on, to the end of each chain, whose validity ended."""
    ctx, at = decided.context, decided.context.returner.at
    chain, ended = list(admitted), set()
    while chain:
        if (item := ctx.item_or_premise(premise := chain.pop())) is not None:
            if item.validity.ended(at):
                ended.add(premise)
            chain += item.depends_on
    return ended


WIDE = Policy(max_items=1000, max_chars=10_000_000, implicit=False)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_of_what_is_stated_since_the_walk_serves_what_a_fresh_return_admits(seed: int) -> None:
    """Random statements before and after a1's return, starting later or not, ending or
    not, resting on each other (another principal's too), the clock moving on: at every
    read, the statements since that the walk has not taken away are exactly those a fresh
    return then admits (one withheld as not valid yet is served from its start), and
    nothing that return admits rests on an item that ended (a differential fuzz)."""
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        store = open_store(f"sqlite:///{directory}/r.db")
        agents = [("a1", "family"), ("a2", "family"), ("x1", "agency")]
        store.create_workspace(
            "trip", [Agent(id=a, principal=p, role="planner") for a, p in agents]
        )
        clock = Clock()
        signer = HmacSha256Signer(KEY)
        team = [Member(store, "trip", a, signer, clock=clock, policy=WIDE) for a, _ in agents]
        stated: list[str] = []
        since: list[str] = []
        following: Following | None = None
        try:
            for n in range(24):
                if n == 2:
                    team[0].depart()  # what is stated from here to the return is Δ
                if n == 10:
                    returned = team[0].return_()
                    assert not _ended_under(returned, admitted_ids(returned))
                    following = Following(returned)
                if n % 3 == 0:
                    clock.at += timedelta(minutes=rnd.randint(0, 15))
                who = rnd.choice(team)
                event = _statement(rnd, who, n, stated, clock)
                try:
                    who.record([event])
                except ReadmitError:
                    continue  # a premise its author may not read
                stated.append(event.item.id)
                if following is None:
                    continue
                since.append(event.item.id)
                if n % 3 == 0:
                    following.withdrawn(team[0])
                    out = {r.item for r in following.gone}
                    served = {i for i in since if i not in out}
                    fresh = _admitted_afresh(store, clock, directory) & set(since)
                    waiting = {r.item for r in following.gone if r.reason == "not_yet_valid"}
                    assert not fresh & waiting  # withheld until its start, as a return does
                    assert served == fresh
        finally:
            store.close()
