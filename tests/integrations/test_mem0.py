"""readmit over real Mem0 banks, offline: in-memory Qdrant, a local embedder, ``infer=False``.

Mem0 reads ``MEM0_TELEMETRY`` and ``MEM0_DIR`` when it is imported, so they are set
before the import: no telemetry, no notices fetched, nothing written under ``~``.
"""

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from builders import KEY, Ticking, member_states, member_supersedes
from integrations.watch import deciding_threads
from readmit.bench.backends import mem0_bank
from readmit.clock import format_time, now
from readmit.errors import Forbidden, InvalidInput
from readmit.events import Close, ItemDraft, ObligationDraft, OpenObligation
from readmit.integrations import team as shared
from readmit.integrations.mem0 import (
    AsyncReadmitMemory,
    ReadmitMemory,
    ViewExpired,
    ViewWithheld,
    abackfill,
    backfill,
    item_id,
)
from readmit.integrations.mem0.expiry import ending, expires
from readmit.integrations.team import Member, new_id
from readmit.model import Agent, Validity
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")

TRIP = {"user_id": "trip"}
EXAMPLES = Path(__file__).parents[2] / "examples"


def bank(path: Path, collection: str = "team") -> Any:
    return mem0_bank.bank(path, collection)


def async_bank(path: Path, collection: str = "team") -> Any:
    return mem0_bank.bank(path, collection, asynchronous=True)


def topic(memory: Mapping[str, Any]) -> str | None:
    topic = (memory.get("metadata") or {}).get("topic")
    return str(topic) if topic is not None else None


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Member, Member]]:
    store: WorkStateStore = open_store(f"sqlite:///{tmp_path}/readmit.db")
    agents = [
        Agent(id="a", principal="team", role="planner"),
        Agent(id="b", principal="team", role="booker"),
    ]
    store.create_workspace("trip", agents)
    signer = HmacSha256Signer(KEY)
    yield Member(store, "trip", "a", signer), Member(store, "trip", "b", signer)
    store.close()


def texts(result: Mapping[str, Any]) -> list[str]:
    return [m["memory"] for m in result["results"]]


def reasons(result: Mapping[str, Any]) -> dict[str, str]:
    return {r["memory"]: r["reason"] for r in result["readmit"]["removed"]}


def own_banks(team: tuple[Member, Member], tmp_path: Path) -> tuple[ReadmitMemory, ReadmitMemory]:
    """Each agent's memory over a bank of its own, memories keyed by topic."""
    a = ReadmitMemory(bank(tmp_path, "a"), team[0], key=topic)
    return a, ReadmitMemory(bank(tmp_path, "b"), team[1], key=topic)


def add(memory: Any, text: str, subject: str) -> str:
    result = memory.add(text, user_id="trip", infer=False, metadata={"topic": subject})
    return str(result["results"][0]["id"])


def test_a_copy_deleted_by_a_teammate_is_removed_from_the_returning_agents_search(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = own_banks(team, tmp_path)
    hilton = add(a, "The team hotel is the Hilton", "hotel")
    add(b, "The team hotel is the Hilton", "hotel")
    b.depart()

    a.delete(hilton)
    result = b.search("team hotel", filters=TRIP)

    assert texts(result) == []
    assert reasons(result) == {"The team hotel is the Hilton": "revoked"}
    assert result["readmit"]["outcome"] == "issued"
    assert "deleted from Mem0 by a" in result["readmit"]["removed"][0]["detail"]


def test_deleting_an_outdated_keyed_memory_leaves_a_teammates_newer_one_under_the_key(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = own_banks(team, tmp_path)
    old = add(b, "The team hotel is the Hilton", "hotel")
    add(a, "The team hotel is now the Marriott", "hotel")
    a.depart()

    b.delete(old)
    result = a.get_all(filters=TRIP)

    assert texts(result) == ["The team hotel is now the Marriott"]
    assert result["readmit"]["removed"] == []


def test_a_conflicting_add_while_away_replaces_the_stale_memory_in_a_shared_bank(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0], key=topic), ReadmitMemory(shared, team[1], key=topic)
    add(b, "The flight leaves on Monday", "flight")
    b.depart()

    add(a, "The flight leaves on Tuesday", "flight")
    plain = shared.search("flight leaves", filters=TRIP)
    result = b.get_all(filters=TRIP)

    assert sorted(texts(plain)) == ["The flight leaves on Monday", "The flight leaves on Tuesday"]
    assert texts(result) == ["The flight leaves on Tuesday"]
    assert reasons(result) == {"The flight leaves on Monday": "stale_or_superseded"}


def test_a_memory_a_teammate_withdraws_while_the_agent_is_present_is_removed_at_once(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """b has returned; a's newer flight and a's delete of its Hilton copy withdraw b's."""
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0], key=topic), ReadmitMemory(shared, team[1], key=topic)
    add(b, "The flight leaves on Monday", "flight")
    hilton = add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    assert len(texts(b.get_all(filters=TRIP))) == 2  # the return admits both

    add(a, "The flight leaves on Tuesday", "flight")
    [copy] = [i.id for i in team[1].visible() if i.text == "The team hotel is the Hilton"]
    team[0].revoke([copy], "The Hilton cancelled our booking.")
    result = b.get_all(filters=TRIP)

    assert shared.get(hilton) is not None  # Mem0 still holds it
    assert texts(result) == ["The flight leaves on Tuesday"]
    assert reasons(result) == {
        "The flight leaves on Monday": "stale_or_superseded",
        "The team hotel is the Hilton": "revoked",
    }
    assert b.get(hilton) is None


def test_a_memory_resting_on_one_a_teammate_withdraws_while_present_is_removed_with_it(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """The pickup rests on the hotel (a chain: the note on the pickup too); the return
    would exclude both as premise_invalidated, the wrapper served them on (a probe)."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    hotel = add(b, "The team hotel is the Hilton", "hotel")
    rests = {"_readmit": {"depends_on": [{"memory": hotel}]}}
    pickup = b.add("Pickup at 8:00 from the Hilton", user_id="trip", infer=False, metadata=rests)
    on_pickup = {"_readmit": {"depends_on": [{"memory": pickup["results"][0]["id"]}]}}
    b.add("Tip the driver", user_id="trip", infer=False, metadata=on_pickup)
    add(b, "The flight leaves on Monday", "flight")
    b.depart()
    assert len(texts(b.get_all(filters=TRIP))) == 4

    team[0].revoke([item_id(hotel, 1)], "The Hilton cancelled our booking.")
    result = b.get_all(filters=TRIP)

    assert texts(result) == ["The flight leaves on Monday"]
    assert reasons(result) == {
        "The team hotel is the Hilton": "revoked",
        "Pickup at 8:00 from the Hilton": "premise_invalidated",
        "Tip the driver": "premise_invalidated",
    }
    details = {r["memory"]: r["detail"] for r in result["readmit"]["removed"]}
    assert details["Pickup at 8:00 from the Hilton"] == (
        f"depends on {item_id(hotel, 1)}, which was withdrawn"
    )


def test_a_memory_resting_on_one_the_agent_itself_updates_is_removed_with_it(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """The agent's own update supersedes the hotel it rests on: the return would exclude
    the pickup as premise_invalidated, the wrapper served it on (a probe)."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    hotel = add(b, "The team hotel is the Hilton", "hotel")
    rests = {"_readmit": {"depends_on": [{"memory": hotel}]}}
    b.add("Pickup at 8:00 from the Hilton", user_id="trip", infer=False, metadata=rests)
    b.depart()
    assert len(texts(b.get_all(filters=TRIP))) == 2

    b.update(hotel, "The team hotel is the Ritz")
    result = b.get_all(filters=TRIP)

    assert texts(result) == ["The team hotel is the Ritz"]
    assert reasons(result) == {"Pickup at 8:00 from the Hilton": "premise_invalidated"}


def test_an_update_resting_on_the_memory_it_replaces_is_refused(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """It rested on the version it withdrew: served until the next return dropped the
    agent's own current memory as premise_invalidated (a probe)."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    hotel = add(b, "The team hotel is the Hilton", "hotel")
    on_itself = {"topic": "hotel", "_readmit": {"depends_on": [{"memory": hotel}]}}

    with pytest.raises(InvalidInput, match="depends_on names the memory this update replaces"):
        b.update(hotel, "The team hotel is the Ritz", metadata=on_itself)

    held = shared.get(hotel)
    assert held is not None
    assert held["memory"] == "The team hotel is the Hilton"
    assert [i.text for i in team[1].visible()] == ["The team hotel is the Hilton"]


def test_an_add_resting_on_the_key_it_replaces_is_refused_and_taken_back_out_of_mem0(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """It replaced the hotel it named as its premise, and fell at once (a probe)."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    add(b, "The team hotel is the Hilton", "hotel")
    on_itself = {"topic": "hotel", "_readmit": {"depends_on": [{"key": "hotel"}]}}

    with pytest.raises(InvalidInput, match="names the key this statement replaces"):
        b.add("The team hotel is the Ritz", user_id="trip", infer=False, metadata=on_itself)

    assert texts(shared.get_all(filters=TRIP)) == ["The team hotel is the Hilton"]
    assert [i.text for i in team[1].visible()] == ["The team hotel is the Hilton"]


def test_a_memory_whose_update_failed_inside_mem0_is_not_shown_with_a_text_never_judged(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mem0 wrote its vector store and failed its history: it holds the new text, readmit
    the old. Reads showed the new text under the view that admitted the old (a probe)."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    hotel = add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    assert texts(b.get_all(filters=TRIP)) == ["The team hotel is the Hilton"]

    def failing(*args: Any, **kwargs: Any) -> None:
        raise OSError("mem0 history db: disk I/O error")

    with monkeypatch.context() as patched:
        patched.setattr(shared.db, "add_history", failing)
        with pytest.raises(OSError, match="disk I/O error"):
            b.update(hotel, "The team hotel is the Ritz")
    result = b.get_all(filters=TRIP)

    assert shared.get(hotel)["memory"] == "The team hotel is the Ritz"
    assert texts(result) == []
    assert reasons(result) == {"The team hotel is the Ritz": "missing_receipt"}
    assert b.get(hotel) is None


def test_a_page_is_filled_past_memories_hidden_for_a_text_changed_around_readmit(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """The view's removals did not count them, and a page of one came back empty (a review)."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    ids = [add(b, f"Fact number {n} about the trip", f"fact-{n}") for n in range(3)]
    b.depart()
    assert len(texts(b.get_all(filters=TRIP))) == 3
    first = shared.get_all(filters=TRIP, top_k=10)["results"][0]["id"]
    assert first in ids
    shared.update(first, text="Changed around readmit")  # Mem0 holds a text never recorded

    for top_k in (1, 2):
        result = b.get_all(filters=TRIP, top_k=top_k)
        assert len(texts(result)) == top_k
        assert reasons(result) == {"Changed around readmit": "missing_receipt"}


def test_a_memory_the_agent_itself_withdraws_through_readmit_is_removed_at_once(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """b revokes its own memory's item through readmit (over HTTP, say), not Mem0: the
    wrapper served it until b's next return, where a teammate's revocation shows at once."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    hilton = add(b, "The team hotel is the Hilton", "hotel")
    add(b, "The flight leaves on Monday", "flight")
    b.depart()
    assert len(texts(b.get_all(filters=TRIP))) == 2  # the return admits both

    team[1].revoke([item_id(hilton, 1)], "We cancelled the Hilton.")
    result = b.get_all(filters=TRIP)

    assert texts(result) == ["The flight leaves on Monday"]
    assert reasons(result) == {"The team hotel is the Hilton": "revoked"}
    assert result["readmit"]["removed"][0]["detail"] == "We cancelled the Hilton."
    assert b.get(hilton) is None


@pytest.mark.parametrize("withdraw", ["revoke", "close", "replace"])
def test_a_memory_withdrawn_while_away_stays_removed_after_the_next_return(
    team: tuple[Member, Member], tmp_path: Path, withdraw: str
) -> None:
    """Withdrawn before b's second departure, it is in neither that checkpoint nor C: the
    wrapper served it again at the second return (a probe: a revoked hotel back)."""
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0], key=topic), ReadmitMemory(shared, team[1], key=topic)
    add(b, "The team hotel is the Hilton", "hotel")
    add(b, "The flight leaves on Monday", "flight")
    b.depart()
    [hilton] = [i.id for i in team[1].visible() if i.text == "The team hotel is the Hilton"]
    if withdraw == "replace":
        add(a, "The team hotel is the Ritz", "hotel")
    elif withdraw == "close":
        team[0].record([Close(id=new_id("close"), at=team[0].clock(), author="a", target=hilton)])
    else:
        team[0].revoke([hilton], "The Hilton cancelled our booking.")
    first = b.get_all(filters=TRIP)
    b.depart()
    second = b.get_all(filters=TRIP)

    kept = {"replace": ["The flight leaves on Monday", "The team hotel is the Ritz"]}
    assert sorted(texts(first)) == kept.get(withdraw, ["The flight leaves on Monday"])
    assert sorted(texts(second)) == sorted(texts(first))
    code = {"revoke": "revoked", "close": "expired", "replace": "stale_or_superseded"}[withdraw]
    assert reasons(second) == {"The team hotel is the Hilton": code}


def test_memories_removed_before_the_departure_grow_a_reads_fetch_only_as_it_needs(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each memory withdrawn before the departure is removed, and a search of 5 asked Mem0
    for 5 more for each (a review: 155); a page left short is asked for again."""
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1], key=topic)
    for n in range(20):
        b.delete(add(b, f"Draft {n}", f"draft {n}"))
    hotels = [add(b, f"Hotel {n} is booked", f"hotel {n}") for n in range(8)]
    add(b, "The flight leaves on Monday", "flight")
    b.depart()
    team[0].revoke([item_id(m, 1) for m in hotels], "Cancelled.")
    asked: list[int] = []
    get_all = shared.get_all

    def counted(*, top_k: int, **kwargs: Any) -> Any:
        asked.append(top_k)
        return get_all(top_k=top_k, **kwargs)

    monkeypatch.setattr(shared, "get_all", counted)

    found = b.get_all(filters=TRIP, top_k=2)

    assert texts(found) == ["The flight leaves on Monday"]
    assert len(found["readmit"]["removed"]) == 8
    assert asked == [4, 8, 16]  # twice top_k, then doubled while short: Mem0 holds 9


def test_a_copy_a_teammates_delete_revoked_before_the_departure_stays_removed(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Its revocation says "deleted from Mem0 by a", but b's bank still holds it: a read
    that took the words for the deed served it (a review)."""
    a, b = own_banks(team, tmp_path)
    hilton = add(a, "The team hotel is the Hilton", "hotel")
    add(b, "The team hotel is the Hilton", "hotel")
    a.delete(hilton)
    b.depart()

    result = b.search("team hotel", filters=TRIP)

    assert texts(result) == []
    assert reasons(result) == {"The team hotel is the Hilton": "revoked"}


def test_an_update_while_away_is_admitted_as_the_memorys_new_version(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    memory_id = add(b, "Dinner is booked at eight", "dinner")
    b.depart()

    a.update(memory_id, text="Dinner is booked at nine")
    result = b.search("dinner booked", filters=TRIP)

    assert texts(result) == ["Dinner is booked at nine"]
    assert result["readmit"]["removed"] == []
    assert b.readmit.member.admitted() is not None
    assert item_id(memory_id, 2) in {i.id for i in b.readmit.member.admitted() or []}


def test_a_process_started_after_a_departure_or_a_return_still_removes_what_went_stale(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """What a departure and a return decided is the store's, not the process's."""
    a, b = own_banks(team, tmp_path)
    hilton = add(a, "The team hotel is the Hilton", "hotel")
    add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    a.delete(hilton)

    def restarted() -> ReadmitMemory:  # a new process: a new member over the same store
        return ReadmitMemory(b.inner, replace(team[1], latest=None), key=topic)

    after_departure = restarted().get_all(filters=TRIP)
    after_return = restarted().get_all(filters=TRIP)

    for result in (after_departure, after_return):
        assert reasons(result) == {"The team hotel is the Hilton": "revoked"}
    assert after_return["readmit"]["decision"] == after_departure["readmit"]["decision"] + 1
    # A wrapper made again over a member that has decided in this process returns no more.
    again = ReadmitMemory(b.inner, team[1], key=topic).get_all(filters=TRIP)
    once_more = ReadmitMemory(b.inner, team[1], key=topic).get_all(filters=TRIP)
    assert again["readmit"]["decision"] == once_more["readmit"]["decision"]


def test_removals_do_not_starve_a_page(team: tuple[Member, Member], tmp_path: Path) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0], key=topic), ReadmitMemory(shared, team[1], key=topic)
    add(b, "The flight leaves on Monday", "flight")
    b.depart()

    add(a, "Flight moved: it leaves Tuesday", "flight")
    result = b.search("The flight leaves on Monday", top_k=1, filters=TRIP)

    assert texts(result) == ["Flight moved: it leaves Tuesday"]
    assert reasons(result) == {"The flight leaves on Monday": "stale_or_superseded"}


def test_before_the_first_return_nothing_is_filtered(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = own_banks(team, tmp_path)
    hilton = add(a, "The team hotel is the Hilton", "hotel")
    add(b, "The team hotel is the Hilton", "hotel")

    a.delete(hilton)
    result = b.search("team hotel", filters=TRIP)

    assert texts(result) == ["The team hotel is the Hilton"]
    assert result["readmit"] == {
        "decision": None,
        "outcome": None,
        "expired_at": None,
        "removed": [],
    }


def test_a_withheld_return_removes_every_memory_it_judged_and_keeps_later_ones(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    b = ReadmitMemory(shared, team[1])
    add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    team[0].record([unmet_obligation(team[0], role="booker")])

    judged = b.search("team hotel", filters=TRIP)
    add(b, "The team hotel needs a late check-in", "hotel")
    later = b.search("team hotel", filters=TRIP)

    assert judged["readmit"]["outcome"] == "blocked"
    assert texts(judged) == []
    assert list(reasons(judged)) == ["The team hotel is the Hilton"]
    assert texts(later) == ["The team hotel needs a late check-in"]
    assert b.get(judged["readmit"]["removed"][0]["id"]) is None


def unmet_obligation(author: Member, role: str) -> OpenObligation:
    """An obligation for ``role`` that requires a dependency no item supports."""
    draft = ObligationDraft(
        id=new_id("o"),
        text="Confirm the budget before booking",
        role=role,
        requires=frozenset({"budget"}),
        critical=frozenset({"budget"}),
        frontier_id=new_id("f"),
        frontier_text="Budget not yet confirmed",
    )
    return OpenObligation(id=new_id("e"), at=author.clock(), author=author.agent, obligation=draft)


def test_backfill_replays_an_existing_banks_history_in_order(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    plain = bank(tmp_path)
    kept = add(plain, "The museum opens at ten", "museum")
    plain.update(kept, text="The museum opens at eleven")
    gone = add(plain, "The ferry runs hourly", "ferry")
    plain.delete(gone)
    b = ReadmitMemory(plain, team[1], key=topic)
    b.depart()

    recorded = backfill(plain, team[0], [kept, gone], key=topic)
    result = b.get_all(filters=TRIP)

    assert [r.event.op for r in recorded] == ["assert", "supersede", "assert", "revoke"]
    assert texts(result) == ["The museum opens at eleven"]
    assert {i.id for i in team[1].admitted() or []} == {item_id(kept, 2)}


def test_async_memory_filters_like_the_sync_one(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
        shared = async_bank(tmp_path)
        a = AsyncReadmitMemory(shared, team[0], key=topic)
        b = AsyncReadmitMemory(shared, team[1], key=topic)
        await b.add("The flight leaves on Monday", **FLIGHT)
        b.depart()
        await a.add("The flight leaves on Tuesday", **FLIGHT)
        dinner = (await a.add("Dinner is booked at eight", user_id="trip", infer=False))["results"]
        await a.update(dinner[0]["id"], text="Dinner is booked at nine")
        history = await b.history(dinner[0]["id"])
        searched = await b.search("flight leaves", filters=TRIP, threshold=0.5)
        return searched, await b.get_all(filters=TRIP), history

    searched, listed, history = asyncio.run(scenario())

    assert texts(searched) == ["The flight leaves on Tuesday"]
    assert reasons(searched) == {"The flight leaves on Monday": "stale_or_superseded"}
    assert sorted(texts(listed)) == ["Dinner is booked at nine", "The flight leaves on Tuesday"]
    assert [row["event"] for row in history] == ["ADD", "UPDATE"]


def test_async_memory_decides_a_return_off_the_event_loop(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decided_on = deciding_threads(team[1], monkeypatch)

    async def scenario() -> tuple[threading.Thread, dict[str, Any]]:
        b = AsyncReadmitMemory(async_bank(tmp_path), team[1], key=topic)
        await b.add("The flight leaves on Monday", **FLIGHT)
        await b.adepart("trip", "booking")
        return threading.current_thread(), await b.get_all(filters=TRIP)

    loop_thread, listed = asyncio.run(scenario())

    assert texts(listed) == ["The flight leaves on Monday"]
    assert len(decided_on) == 1
    assert decided_on[0] is not loop_thread
    assert team[1].store.departed_for("trip", "b") == ("trip", "booking")


def test_a_read_beside_a_return_being_decided_waits_for_its_decision(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second thread was served Mem0's results unfiltered, a revoked memory too (a
    probe: a model verifier makes a return take seconds)."""
    b = ReadmitMemory(bank(tmp_path), team[1], key=topic)
    add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    team[0].revoke([i.id for i in team[0].visible()], "The Hilton cancelled our booking.")
    deciding, release = threading.Event(), threading.Event()
    return_ = team[1].return_

    def held(*args: Any, **kwargs: Any) -> Any:
        deciding.set()
        release.wait(60)
        return return_(*args, **kwargs)

    monkeypatch.setattr(team[1], "return_", held)
    read: dict[str, Any] = {}
    first = threading.Thread(target=lambda: read.update(first=b.get_all(filters=TRIP)))
    second = threading.Thread(target=lambda: read.update(second=b.get_all(filters=TRIP)))
    first.start()
    assert deciding.wait(60)
    second.start()
    second.join(1)  # it waits on the return: only a read that does not wait ends here
    release.set()
    first.join(60)
    second.join(60)

    assert [texts(read["first"]), texts(read["second"])] == [[], []]
    assert read["second"]["readmit"]["decision"] == 1


def test_a_cancelled_read_leaves_its_return_to_finish_before_the_next_runs(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running, most, entered = [0], [0], threading.Event()
    return_ = team[1].return_

    def slow(*args: Any, **kwargs: Any) -> Any:
        running[0] += 1
        most[0] = max(most[0], running[0])
        entered.set()
        time.sleep(0.3)
        try:
            return return_(*args, **kwargs)
        finally:
            running[0] -= 1

    monkeypatch.setattr(team[1], "return_", slow)

    async def scenario() -> dict[str, Any]:
        b = AsyncReadmitMemory(async_bank(tmp_path), team[1], key=topic)
        await b.add("The flight leaves on Monday", **FLIGHT)
        await b.adepart()
        first = asyncio.create_task(b.get_all(filters=TRIP))
        await asyncio.to_thread(entered.wait, 60)
        first.cancel()  # its return goes on in its thread
        b.readmit.returning = True  # as if it had departed again meanwhile
        return await b.get_all(filters=TRIP)

    listed = asyncio.run(scenario())

    assert texts(listed) == ["The flight leaves on Monday"]
    assert most[0] == 1  # never two returns of the agent at once


FLIGHT: dict[str, Any] = {"user_id": "trip", "infer": False, "metadata": {"topic": "flight"}}


def test_async_backfill_records_an_async_banks_history(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    async def scenario() -> list[str]:
        plain = async_bank(tmp_path)
        added = await plain.add("The museum opens at ten", **FLIGHT)
        recorded = await abackfill(plain, team[0], [added["results"][0]["id"]], key=topic)
        return [r.event.op for r in recorded]

    assert asyncio.run(scenario()) == ["assert"]


def test_the_example_runs_offline_explains_the_removal_and_prints_nothing_else() -> None:
    """Run as a user runs it: Mem0's notices of optional parts it does without (spaCy,
    fastembed) and the local Qdrant's warning went to stderr (a newcomer's finding)."""
    ran = subprocess.run(
        [sys.executable, str(EXAMPLES / "mem0_team.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )

    assert "revoked" in ran.stdout
    assert "Hilton" in ran.stdout
    assert ran.stderr == ""


@pytest.fixture
def timed(team: tuple[Member, Member]) -> tuple[Member, Member, Ticking]:
    """The team's two agents on one `Ticking` clock (views last ``Policy.view_ttl``, 1 h)."""
    clock = Ticking()
    a, b = (Member(m.store, m.workspace, m.agent, m.signer, clock=clock) for m in team)
    return a, b, clock


def test_an_expired_view_removes_every_memory_it_judged_until_the_next_return(
    timed: tuple[Member, Member, Ticking], tmp_path: Path
) -> None:
    a_member, b_member, clock = timed
    shared_bank = bank(tmp_path)
    a, b = ReadmitMemory(shared_bank, a_member), ReadmitMemory(shared_bank, b_member)
    hotel = add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    add(a, "The team dinner is at eight", "dinner")
    served = b.get_all(filters=TRIP)

    clock.at += timedelta(hours=1)
    expired, got = b.get_all(filters=TRIP), b.get(hotel)
    add(b, "The team hotel needs a late check-in", "hotel")
    later = b.search("team hotel", filters=TRIP)
    b.depart()
    renewed = b.get_all(filters=TRIP)

    assert sorted(texts(served)) == ["The team dinner is at eight", "The team hotel is the Hilton"]
    assert served["readmit"]["expired_at"] is None
    assert texts(expired) == []
    assert reasons(expired) == {
        "The team hotel is the Hilton": "view_expired",
        "The team dinner is at eight": "view_expired",
    }
    assert expired["readmit"]["outcome"] == "issued"
    assert expired["readmit"]["expired_at"].startswith("2026-05-01T09:00:")
    assert expired["readmit"]["removed"][0]["detail"].startswith("the return view expired at")
    assert got is None
    assert texts(later) == ["The team hotel needs a late check-in"]  # never judged: kept
    assert (renewed["readmit"]["decision"], renewed["readmit"]["expired_at"]) == (2, None)
    assert len(texts(renewed)) == 3


def test_in_raise_mode_reads_raise_view_expired_until_the_next_return(
    timed: tuple[Member, Member, Ticking], tmp_path: Path
) -> None:
    _, member, clock = timed
    b = ReadmitMemory(bank(tmp_path), member, on_withheld="raise")
    hotel = add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    assert texts(b.search("team hotel", filters=TRIP)) == ["The team hotel is the Hilton"]

    clock.at += timedelta(hours=1)

    with pytest.raises(ViewExpired) as raised:
        b.search("team hotel", filters=TRIP)
    assert isinstance(raised.value, ViewWithheld)
    assert raised.value.code == "view_expired"
    assert "expired at 2026-05-01T09:00:" in str(raised.value)
    assert raised.value.notice["decision"] == 1
    with pytest.raises(ViewExpired):
        b.get_all(filters=TRIP)
    with pytest.raises(ViewExpired):
        b.get(hotel)
    add(b, "The team hotel needs a late check-in", "hotel")  # writes go through
    b.depart()
    assert len(texts(b.get_all(filters=TRIP))) == 2


def test_in_raise_mode_a_withheld_return_raises_view_withheld(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    b = ReadmitMemory(bank(tmp_path), team[1], on_withheld="raise")
    add(b, "The team hotel is the Hilton", "hotel")
    b.depart()
    team[0].record([unmet_obligation(team[0], role="booker")])

    with pytest.raises(ViewWithheld) as raised:
        b.search("team hotel", filters=TRIP)

    assert type(raised.value) is ViewWithheld
    assert (raised.value.code, raised.value.outcome) == ("view_withheld", "blocked")


def test_the_wall_clock_expiry_check_reads_time_not_a_datetime(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """A member on the wall clock (the default) whose views last a microsecond."""
    member = team[1]
    member.policy = Policy(view_ttl=timedelta(microseconds=1))
    b = ReadmitMemory(bank(tmp_path), member)
    add(b, "The team hotel is the Hilton", "hotel")
    b.depart()

    result = b.search("team hotel", filters=TRIP)  # the return takes longer than its view lasts

    assert member.clock is now
    assert reasons(result) == {"The team hotel is the Hilton": "view_expired"}


def test_async_memory_treats_an_expired_view_like_the_sync_one(
    timed: tuple[Member, Member, Ticking], tmp_path: Path
) -> None:
    _, member, clock = timed

    async def scenario() -> tuple[dict[str, Any], dict[str, Any] | None, list[str]]:
        b = AsyncReadmitMemory(async_bank(tmp_path), member)
        strict = AsyncReadmitMemory(b.inner, member, on_withheld="raise")
        added = await b.add("The flight leaves on Monday", **FLIGHT)
        b.depart()
        await b.get_all(filters=TRIP)
        clock.at += timedelta(hours=1)
        flight = added["results"][0]["id"]
        refused = []
        for read in (strict.search("flight", filters=TRIP), strict.get(flight)):
            try:
                await read
            except ViewExpired as exc:
                refused.append(exc.code)
        return await b.search("flight", filters=TRIP), await b.get(flight), refused

    searched, got, refused = asyncio.run(scenario())

    assert reasons(searched) == {"The flight leaves on Monday": "view_expired"}
    assert got is None
    assert refused == ["view_expired", "view_expired"]


def test_the_errors_are_the_ones_every_integration_raises() -> None:
    assert (ViewExpired, ViewWithheld) == (shared.ViewExpired, shared.ViewWithheld)
    assert issubclass(ViewExpired, ViewWithheld)


@pytest.mark.parametrize("word", ["empty", "rasie"])
def test_an_on_withheld_it_does_not_take_is_refused_when_the_memory_is_made(
    team: tuple[Member, Member], tmp_path: Path, word: str
) -> None:
    with pytest.raises(
        InvalidInput, match=f"on_withheld must be 'remove' or 'raise', not '{word}'"
    ):
        ReadmitMemory(bank(tmp_path), team[0], on_withheld=word)  # type: ignore[arg-type]


def test_an_update_of_only_the_annotations_is_refused_and_undone(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Its item would keep the old annotations (a memory marked unconfirmed still admitted)."""
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])
    memory_id = add(a, "The museum opens at ten", "museum")

    with pytest.raises(
        InvalidInput, match="annotations and the expiration date change with the memory's text"
    ):
        a.update(memory_id, metadata={"_readmit": {"unconfirmed": True}})

    assert (shared.get(memory_id)["metadata"] or {}).get("_readmit") is None
    assert [i.text for i in team[0].visible()] == ["The museum opens at ten"]
    a.update(
        memory_id, text="The museum opens at eleven", metadata={"_readmit": {"unconfirmed": True}}
    )
    assert [i.receipt is None for i in team[0].visible()] == [True]  # unconfirmed: no receipt


def test_an_update_of_only_the_key_is_refused_and_undone(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Its item kept the old key: a later dinner did not replace it, a later hotel would."""
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0], key=topic)
    memory_id = add(a, "Dinner at Luigi's at 7pm", "hotel")

    with pytest.raises(InvalidInput, match=r"its key in readmit \('hotel', now 'dinner'\)"):
        a.update(memory_id, metadata={"topic": "dinner"})

    assert shared.get(memory_id)["metadata"]["topic"] == "hotel"
    assert [i.key for i in team[0].visible()] == ["hotel"]
    a.update(memory_id, text="Dinner at Luigi's at 8pm", metadata={"topic": "dinner"})
    assert [(i.text, i.key) for i in team[0].visible()] == [("Dinner at Luigi's at 8pm", "dinner")]


# What a teammate does after the agent's return (a review of following the log)


def in_one_bank(three: dict[str, Member], tmp_path: Path, *agents: str) -> list[ReadmitMemory]:
    """A memory of each of ``agents`` over one bank they share, memories keyed by topic."""
    shared = mem0_bank.bank(tmp_path, "team")
    return [ReadmitMemory(shared, three[a], key=topic) for a in agents]


def test_a_teammates_keyed_supersede_removes_the_memory_it_replaced(
    three: dict[str, Member], tmp_path: Path
) -> None:
    mb = ReadmitMemory(mem0_bank.bank(tmp_path, "team"), three["b"], key=topic)
    member_states(three["a"], "x1", "draft: flights")
    add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    assert texts(mb.get_all(filters=TRIP)) == ["The flight leaves on Monday"]

    member_supersedes(
        three["a"], "x1", ItemDraft(id="x2", text="The flight leaves on Tuesday", key="flight")
    )

    assert texts(mb.get_all(filters=TRIP)) == []


def test_another_principals_keyed_memory_removes_nothing_it_could_not_replace(
    three: dict[str, Member], tmp_path: Path
) -> None:
    mb = ReadmitMemory(mem0_bank.bank(tmp_path, "b"), three["b"], key=topic)
    mc = ReadmitMemory(mem0_bank.bank(tmp_path, "c"), three["c"], key=topic)
    add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    mb.get_all(filters=TRIP)

    add(mc, "c's private flight note", "flight")
    result = mb.get_all(filters=TRIP)

    assert texts(result) == ["The flight leaves on Monday"]
    assert result["readmit"]["removed"] == []


def test_a_shared_bank_never_serves_another_principals_memory_written_after_the_return(
    three: dict[str, Member], tmp_path: Path
) -> None:
    mb, mc = in_one_bank(three, tmp_path, "b", "c")
    add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    mb.get_all(filters=TRIP)

    add(mc, "C-PRIVATE: card 4111", "card")  # readers: the author's principal only
    result = mb.get_all(filters=TRIP)

    assert texts(result) == ["The flight leaves on Monday"]
    [removed] = result["readmit"]["removed"]
    assert removed == {"id": removed["id"], "reason": "unauthorized"}  # not even its text


def test_an_own_keyed_memory_replaces_a_teammates_admitted_one_as_the_store_does(
    three: dict[str, Member], tmp_path: Path
) -> None:
    ma, mb = in_one_bank(three, tmp_path, "a", "b")
    add(ma, "The flight leaves on Monday", "flight")
    mb.depart()
    assert texts(mb.get_all(filters=TRIP)) == ["The flight leaves on Monday"]

    add(mb, "The flight leaves on Tuesday", "flight")

    assert texts(mb.get_all(filters=TRIP)) == ["The flight leaves on Tuesday"]


@pytest.mark.parametrize("after_return", [True, False], ids=["after the return", "while away"])
def test_no_removal_carries_the_text_of_a_memory_the_agent_may_not_read(
    three: dict[str, Member], tmp_path: Path, after_return: bool
) -> None:
    """c's second card replaces its first under their key: a removal for another reason."""
    mb, mc = in_one_bank(three, tmp_path, "b", "c")
    add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    if after_return:
        mb.get_all(filters=TRIP)

    add(mc, "C-PRIVATE-1: card 4111", "card")
    add(mc, "C-PRIVATE-2: card 5500", "card")
    result = mb.get_all(filters=TRIP)

    assert texts(result) == ["The flight leaves on Monday"]
    assert "C-PRIVATE" not in json.dumps(result["readmit"])


@pytest.mark.parametrize("written", ["before the departure", "between two returns"])
def test_a_shared_bank_never_serves_another_principals_memory_no_return_judged(
    three: dict[str, Member], tmp_path: Path, written: str
) -> None:
    """Neither in b's checkpoint (b may not read it) nor after it: the return never judged it."""
    mb, mc = in_one_bank(three, tmp_path, "b", "c")
    add(mb, "The flight leaves on Monday", "flight")
    if written == "between two returns":
        mb.depart()
        mb.get_all(filters=TRIP)
    add(mc, "C-PRIVATE: card 4111", "card")
    mb.depart()

    result = mb.get_all(filters=TRIP)

    assert texts(result) == ["The flight leaves on Monday"]
    assert "C-PRIVATE" not in json.dumps(result)


def test_another_principals_memory_withdrawn_before_the_departure_is_removed_without_text(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """Withdrawn before b's departure, no return judges it, and b may not read it."""
    mb, mc = in_one_bank(three, tmp_path, "b", "c")
    add(mb, "The flight leaves on Monday", "flight")
    add(mc, "C-PRIVATE: card 4111", "card")
    three["c"].revoke([i.id for i in three["c"].visible() if "C-PRIVATE" in i.text], "C-WHY")
    mb.depart()

    result = mb.get_all(filters=TRIP)

    assert texts(result) == ["The flight leaves on Monday"]
    assert [r["reason"] for r in result["readmit"]["removed"]] == ["unauthorized"]
    assert "C-PRIVATE" not in json.dumps(result)
    assert "C-WHY" not in json.dumps(result)


def test_the_history_of_a_memory_the_view_removed_is_not_shown(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """A history holds every text a memory had: c's private card, deleted or not."""
    mb, mc = in_one_bank(three, tmp_path, "b", "c")
    flight = add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    card = add(mc, "C-PRIVATE: card 4111", "card")
    gone = add(mc, "C-PRIVATE: card 5500", "other card")
    mc.delete(gone)

    assert mb.history(card) == []
    assert mb.history(gone) == []
    assert [h["new_memory"] for h in mb.history(flight)] == ["The flight leaves on Monday"]
    assert "C-PRIVATE" in json.dumps(mc.history(card))  # c's own


@pytest.mark.parametrize("call", ["update", "delete"])
def test_another_principals_memory_is_neither_updated_nor_deleted_by_id(
    three: dict[str, Member], tmp_path: Path, call: str
) -> None:
    """b may not read c's card in readmit: changing it in the bank they share is refused
    before Mem0 is called (a review's finding: Mem0 changed it, and readmit, refusing to
    record it, kept c's item, so c's view then removed its own card). b's own memory, and
    one never recorded in readmit, are changed as before."""
    mb, mc = in_one_bank(three, tmp_path, "b", "c")
    card = add(mc, "C-PRIVATE: card 4111", "card")
    flight = add(mb, "The flight leaves on Monday", "flight")
    before = mc.inner.history(card)

    with pytest.raises(Forbidden, match=f"{call} of memory '{card}'.*Mem0 was not changed"):
        getattr(mb, call)(card, *(["The card is 5500"] if call == "update" else []))

    assert mc.inner.history(card) == before
    assert [i.text for i in three["c"].visible()] == ["C-PRIVATE: card 4111"]
    getattr(mb, call)(flight, *(["The flight leaves on Tuesday"] if call == "update" else []))
    outside = mc.inner.add("Lunch at noon", user_id="trip", infer=False)["results"][0]["id"]
    getattr(mb, call)(outside, *(["Lunch at one"] if call == "update" else []))


def test_the_async_memory_refuses_another_principals_memory_as_the_sync_one(
    three: dict[str, Member], tmp_path: Path
) -> None:
    async def scenario() -> list[str]:
        shared = async_bank(tmp_path)
        mb = AsyncReadmitMemory(shared, three["b"], key=topic)
        mc = AsyncReadmitMemory(shared, three["c"], key=topic)
        card = (await mc.add("C-PRIVATE: card 4111", user_id="trip", infer=False))["results"]
        said = []
        for call, args in (("update", ["The card is 5500"]), ("delete", [])):
            with pytest.raises(Forbidden) as refused:
                await getattr(mb, call)(card[0]["id"], *args)
            said.append(str(refused.value))
        return said

    said = asyncio.run(scenario())

    assert [s.split(" of memory")[0] for s in said] == ["update", "delete"]
    assert [i.text for i in three["c"].visible()] == ["C-PRIVATE: card 4111"]


@pytest.mark.parametrize("days", [["Tuesday"], ["Tuesday", "Wednesday"]], ids=["once", "twice"])
def test_an_own_keyed_memory_updated_after_the_return_is_served(
    three: dict[str, Member], tmp_path: Path, days: list[str]
) -> None:
    """v1 (judged) → v2 → v3, all b's: v1, superseded already, is replaced by nothing."""
    mb = ReadmitMemory(mem0_bank.bank(tmp_path, "team"), three["b"], key=topic)
    memory = add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    mb.get_all(filters=TRIP)
    for day in days:
        mb.update(memory, text=f"The flight leaves on {day}")

    assert texts(mb.get_all(filters=TRIP)) == [f"The flight leaves on {days[-1]}"]


def test_a_memory_admitted_in_a_version_the_agent_may_read_is_served(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """c states M privately (v1), then for everyone (v2): a's return admits v2. (b may
    not update c's private M itself: that is refused.)"""
    shared = mem0_bank.bank(tmp_path, "team")
    ma, mc = (ReadmitMemory(shared, three[m]) for m in ("a", "c"))
    ma.get_all(filters=TRIP)
    memory = add(mc, "C draft", "hotel")
    mc.update(memory, text="The hotel is the Ritz", metadata={"_readmit": {"readers": "*"}})
    ma.depart()

    assert texts(ma.get_all(filters=TRIP)) == ["The hotel is the Ritz"]


@pytest.mark.parametrize("teammate", ["after the return", "while away"])
def test_the_agents_own_update_shows_over_a_teammates_earlier_version(
    three: dict[str, Member], tmp_path: Path, teammate: str
) -> None:
    """a updates b's memory (after b's return: removed, unjudged; while away: the version
    b's return admits); then b updates it itself: its own fresh state shows."""
    ma, mb = in_one_bank(three, tmp_path, "a", "b")
    memory = add(mb, "The flight leaves on Monday", "flight")
    mb.depart()
    if teammate == "after the return":
        mb.get_all(filters=TRIP)
    ma.update(memory, text="The flight leaves on Tuesday")
    mb.get_all(filters=TRIP)

    mb.update(memory, text="The flight leaves on Friday")

    assert texts(mb.get_all(filters=TRIP)) == ["The flight leaves on Friday"]


# Mem0's expiration dates (a memory it hides from the day after its expiration_date on)


def _ends(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)


@pytest.mark.parametrize("given", ["argument", "metadata"])
def test_a_memory_mem0_let_expire_is_withheld_as_expired(
    team: tuple[Member, Member], tmp_path: Path, given: str
) -> None:
    """It was admitted for good: ``get`` and ``show_expired`` served what Mem0 had let go.

    Mem0 keeps a date given in the metadata as the argument's: a plain add is read back.
    """
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    past = now().date() - timedelta(days=2)
    dated: dict[str, Any] = (
        {"expiration_date": past}
        if given == "argument"
        else {"metadata": {"expiration_date": past.isoformat()}}
    )
    added = a.add("The pool is open until noon", **TRIP, infer=False, **dated)
    pool = str(added["results"][0]["id"])
    add(a, "The gym opens at six", "gym")
    b.depart()

    result = b.get_all(filters=TRIP, show_expired=True)

    assert texts(result) == ["The gym opens at six"]
    assert reasons(result) == {"The pool is open until noon": "expired"}
    assert b.get(pool) is None
    [item] = [i for i in team[1].visible() if i.text.startswith("The pool")]
    assert item.validity.valid_to == _ends(past)


def test_an_updated_text_keeps_the_memorys_expiration_date(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a = ReadmitMemory(bank(tmp_path), team[0])
    later = now().date() + timedelta(days=5)
    added = a.add("The pool is open until noon", **TRIP, infer=False, expiration_date=later)
    pool = str(added["results"][0]["id"])

    a.update(pool, text="The pool is open until one")

    [item] = team[0].visible()
    assert (item.text, item.validity.valid_to) == ("The pool is open until one", _ends(later))


def test_an_update_of_only_the_expiration_date_is_refused_and_undone(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Its item would keep the old end, admitted after Mem0 hid the memory."""
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])
    memory_id = add(a, "The museum opens at ten", "museum")

    with pytest.raises(InvalidInput, match="the expiration date change with the memory's text"):
        a.update(memory_id, expiration_date=now().date() - timedelta(days=1))

    assert shared.get(memory_id).get("expiration_date") is None
    assert [i.validity.valid_to for i in team[0].visible()] == [None]


def test_an_expiration_before_the_memorys_valid_from_is_refused_and_undone(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])
    past = now().date() - timedelta(days=2)
    starts = {"_readmit": {"valid_from": format_time(_ends(past))}}

    with pytest.raises(InvalidInput, match="before its readmit valid_from"):
        a.add("The pool opens", **TRIP, infer=False, expiration_date=past, metadata=starts)

    assert shared.get_all(filters=TRIP, show_expired=True)["results"] == []
    assert team[0].visible() == []


def test_the_async_memory_withholds_an_expired_memory_too(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = async_bank(tmp_path)
    a, b = AsyncReadmitMemory(shared, team[0]), AsyncReadmitMemory(shared, team[1])
    past = now().date() - timedelta(days=2)

    async def story() -> dict[str, Any]:
        await a.add("The pool is open until noon", **TRIP, infer=False, expiration_date=past)
        b.depart()
        result: dict[str, Any] = await b.get_all(filters=TRIP, show_expired=True)
        return result

    result = asyncio.run(story())

    assert texts(result) == []
    assert reasons(result) == {"The pool is open until noon": "expired"}


def test_a_backfilled_memory_mem0_let_expire_is_withheld_as_expired(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """An adopted bank is filtered like one written through the wrappers: its memory's
    item ends when Mem0 stops showing it, or ``get`` serves what Mem0 had let go."""
    plain = bank(tmp_path)
    past = now().date() - timedelta(days=2)
    added = plain.add("The pool is open until noon", **TRIP, infer=False, expiration_date=past)
    pool = str(added["results"][0]["id"])
    b = ReadmitMemory(plain, team[1])
    b.depart()

    backfill(plain, team[0], [pool])

    assert b.get(pool) is None
    [item] = team[1].visible()
    assert item.validity.valid_to == _ends(past)


def test_the_async_memory_refuses_and_undoes_an_update_of_only_the_expiration_date(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """As the sync one: the item would keep no end, and the memory gets its own back."""
    shared = async_bank(tmp_path)
    a = AsyncReadmitMemory(shared, team[0])

    async def story() -> str:
        added = await a.add("The museum opens at ten", **TRIP, infer=False)
        memory_id = str(added["results"][0]["id"])
        with pytest.raises(InvalidInput, match="the expiration date change with the memory's"):
            await a.update(memory_id, expiration_date=now().date() - timedelta(days=1))
        return memory_id

    memory_id = asyncio.run(story())

    assert asyncio.run(shared.get(memory_id)).get("expiration_date") is None
    assert [i.validity.valid_to for i in team[0].visible()] == [None]


MUSEUM = ItemDraft(id="m", text="The museum opens at ten")
DAY = date(2026, 5, 3)


def test_a_day_mem0_would_not_store_ends_nothing() -> None:
    """Mem0 shows a memory with no date it can read for good: so is its item valid."""
    assert expires({"expiration_date": "someday"}) is None
    assert expires({"expiration_date": ""}) is None
    assert ending(MUSEUM, {"expiration_date": "someday"}) == MUSEUM


def test_an_item_already_ending_before_the_memory_expires_keeps_its_end() -> None:
    earlier = _ends(DAY) - timedelta(hours=5)
    draft = replace(MUSEUM, validity=Validity(valid_to=earlier))

    assert ending(draft, {"expiration_date": DAY.isoformat()}) == draft
    at_once = replace(MUSEUM, validity=Validity(valid_to=_ends(DAY)))
    assert ending(at_once, {"expiration_date": DAY.isoformat()}) == at_once


def test_an_item_ending_after_the_memory_expires_ends_with_it_from_where_it_began() -> None:
    began = _ends(DAY) - timedelta(days=3)
    draft = replace(MUSEUM, validity=Validity(valid_from=began, valid_to=_ends(DAY) + timedelta(1)))

    ended = ending(draft, {"expiration_date": DAY.isoformat()})

    assert ended.validity == Validity(valid_from=began, valid_to=_ends(DAY))
    started = replace(MUSEUM, validity=Validity(valid_from=began))
    assert ending(started, {"expiration_date": DAY.isoformat()}).validity == ended.validity


# What a differential probe of reads against fresh returns found (stop 68)


def test_the_agents_own_supersede_over_http_removes_the_text_mem0_still_holds(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """Mem0 holds the old text; the layer served it, now and after the next return."""
    (mb,) = in_one_bank(three, tmp_path, "b")
    hilton = add(mb, "The team hotel is the Hilton", "hotel")
    mb.depart()
    assert texts(mb.get_all(filters=TRIP)) == ["The team hotel is the Hilton"]

    ritz = ItemDraft(id="http-ritz", text="The team hotel is the Ritz", key="hotel")
    member_supersedes(three["b"], item_id(hilton, 1), ritz)  # as an HTTP client of b's would
    now_ = mb.get_all(filters=TRIP)
    mb.depart()
    later = mb.get_all(filters=TRIP)

    assert texts(now_) == texts(later) == []
    assert reasons(now_) == {"The team hotel is the Hilton": "stale_or_superseded"}


def test_a_copy_of_an_admitted_text_another_principal_keeps_is_never_served(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """The keyed-copy rule served c's private memory, its metadata too, to a (a probe)."""
    ma, mc = in_one_bank(three, tmp_path, "a", "c")
    add(ma, "Dinner is at eight", "dinner")
    private = {"topic": "dinner", "card": "4111-1111-1111-1111"}
    theirs = mc.add("Dinner is at eight", user_id="trip", infer=False, metadata=private)
    memory_id = str(theirs["results"][0]["id"])
    ma.depart()

    result = ma.get_all(filters=TRIP)

    assert memory_id not in {m["id"] for m in result["results"]}
    assert ma.get(memory_id) is None


def test_the_agents_own_update_takes_the_old_text_off_its_keyed_copies(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """b restated a's hotel, replacing it under the key; a, back, updated b's memory. a's
    old memory, a copy of the text the view admitted, was served on (a probe)."""
    ma, mb = in_one_bank(three, tmp_path, "a", "b")
    add(ma, "The team hotel is the Hilton", "hotel")
    copy = add(mb, "The team hotel is the Hilton", "hotel")
    ma.depart()
    assert texts(ma.get_all(filters=TRIP)) == ["The team hotel is the Hilton"] * 2

    ma.update(copy, "The team hotel is the Ritz", metadata={"topic": "hotel"})

    assert texts(ma.get_all(filters=TRIP)) == ["The team hotel is the Ritz"]


def test_what_rests_on_a_premise_stated_before_the_return_that_it_may_not_read_falls(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """a's hotel is for its team only; c returns, then a states a pickup on it for everyone
    and replaces the hotel under its key. c was served the pickup (a probe)."""
    ma, mc = in_one_bank(three, tmp_path, "a", "c")
    hotel = add(ma, "The team hotel is the Hilton", "hotel")
    mc.depart()
    mc.get_all(filters=TRIP)

    on_hotel = {"topic": "pickup", "_readmit": {"depends_on": [{"memory": hotel}], "readers": "*"}}
    ma.add("Pickup at eight", user_id="trip", infer=False, metadata=on_hotel)
    assert texts(mc.get_all(filters=TRIP)) == ["Pickup at eight"]
    add(ma, "The team hotel is the Ritz", "hotel")

    assert texts(mc.get_all(filters=TRIP)) == []


def test_a_memory_a_teammates_return_finds_stale_while_present_is_removed_at_once(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """b has returned; a revokes the hotel and a's return finds b's dinner stale: a
    verdict binds every later return, any agent's, and b's reads served the dinner until
    b returned again."""
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0], key=topic), ReadmitMemory(shared, team[1], key=topic)
    hotel = add(a, "Sunrise Hotel is booked", "hotel")
    dinner = add(b, "Dinner at Sunrise Hotel at eight", "dinner")
    a.depart()
    b.depart()
    assert len(texts(b.get_all(filters=TRIP))) == 2  # the return admits both

    a.delete(hotel)
    assert texts(b.get_all(filters=TRIP)) == ["Dinner at Sunrise Hotel at eight"]
    team[0].return_()
    result = b.get_all(filters=TRIP)

    assert texts(result) == []
    assert reasons(result) == {"Dinner at Sunrise Hotel at eight": "implicitly_invalidated"}
    assert b.get(dinner) is None
    assert shared.get(dinner) is not None  # Mem0 still holds it
