"""readmit.integrations.langgraph against the real installed LangGraph and LangChain, offline."""

import asyncio
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    Op,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from builders import KEY
from conftest import fresh_postgres_schema
from integrations.stores import FailingStore
from readmit.admission.decision import Issued
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import ObligationDraft, OpenObligation
from readmit.integrations.langgraph import (
    ReadmitMiddleware,
    ReadmitStore,
    ViewWithheld,
    arrive,
    depart_node,
    notice,
    return_node,
)
from readmit.integrations.langgraph.keys import LONG_KEY, identity, item_key, parse
from readmit.integrations.team import Member
from readmit.integrations.watch import FOLLOW_EVERY
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store
from readmit.wire.domain import KEY_BYTES

T0 = datetime(2026, 5, 1, 8, tzinfo=UTC)
TRIP = ("trip",)
NOTES = ("notes", "a1")
SUNRISE = {"text": "Sunrise Hotel is booked, refundable."}
RIVERSIDE = {"text": "Sunrise cancelled the booking; Riverside Hotel is booked."}
PICKUP = {"text": "Pickup at 8:00 from Sunrise Hotel."}


@dataclass
class Team:
    """Two agents of one workspace on one readmit store, sharing one inner LangGraph store."""

    readmit: SqlStore
    inner: BaseStore
    a1: Member
    a2: Member

    def store(self, member: Member, **options: Any) -> ReadmitStore:
        return ReadmitStore(self.inner, member, **options)


def ticking() -> Callable[[], datetime]:
    """A clock one second later at every call: time moves, no test waits for it."""
    at = [T0]

    def tick() -> datetime:
        at[0] += timedelta(seconds=1)
        return at[0]

    return tick


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def inner(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    """Each inner store LangGraph ships, empty."""
    if request.param == "memory":
        yield InMemoryStore()
    elif request.param == "sqlite":
        conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
        store = SqliteStore(conn)
        store.setup()
        yield store
        conn.close()
    else:
        from langgraph.store.postgres import PostgresStore

        with fresh_postgres_schema() as url, PostgresStore.from_conn_string(url) as pg:
            pg.setup()
            yield pg


def make_team(inner: BaseStore, tmp_path: Path) -> Team:
    readmit = open_store(f"sqlite:///{tmp_path}/readmit.db")
    readmit.create_workspace(
        "trip",
        [
            Agent(id="a1", principal="family", role="planner"),
            Agent(id="a2", principal="family", role="booking"),
        ],
    )
    clock, signer = ticking(), HmacSha256Signer(KEY)
    members = (Member(readmit, "trip", a, signer, clock=clock) for a in ("a1", "a2"))
    return Team(readmit, inner, *members)


@pytest.fixture
def team(inner: BaseStore, tmp_path: Path) -> Iterator[Team]:
    made = make_team(inner, tmp_path)
    yield made
    made.readmit.close()


def away_while_hotel_changes(team: Team) -> ReadmitStore:
    """a1 notes the pickup from Sunrise and departs; a2 moves the booking to Riverside."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", SUNRISE)
    s1.put(NOTES, "pickup", PICKUP)
    team.a1.depart()
    s2.put(TRIP, "hotel", RIVERSIDE)
    return s1


def reasons(decided_notice: dict[str, Any]) -> dict[tuple[str, ...], str]:
    return {(*e["namespace"], e["key"]): e["reason"] for e in decided_notice["excluded"]}


def test_before_the_first_return_nothing_is_filtered(team: Team) -> None:
    team.inner.put(TRIP, "legacy", {"text": "written before readmit"})
    s1 = team.store(team.a1)

    s1.put(TRIP, "hotel", SUNRISE)

    assert s1.get(TRIP, "legacy") is not None
    assert {i.key for i in s1.search(TRIP)} == {"legacy", "hotel"}


def test_every_write_reaches_the_inner_store_and_becomes_an_event(team: Team) -> None:
    s2 = team.store(team.a2)

    s2.put(TRIP, "hotel", SUNRISE)
    s2.put(TRIP, "hotel", RIVERSIDE)
    s2.delete(TRIP, "hotel")

    assert team.inner.get(TRIP, "hotel") is None
    ops = [r.event.op for r in team.readmit.events("trip")]
    assert ops == ["assert", "assert", "revoke"]
    assert team.a2.visible() == []


def test_a_returning_agent_no_longer_reads_what_a_teammate_made_stale(team: Team) -> None:
    s1 = away_while_hotel_changes(team)

    decided = arrive(team.a1)

    assert decided is not None
    assert team.inner.get(NOTES, "pickup") is not None  # the application's data is kept
    assert s1.get(NOTES, "pickup") is None
    hotel = s1.get(TRIP, "hotel")
    assert hotel is not None
    assert hotel.value == RIVERSIDE
    assert [i.key for i in s1.search(("notes",))] == []
    assert reasons(notice(decided)) == {
        ("trip", "hotel"): "stale_or_superseded",
        ("notes", "a1", "pickup"): "implicitly_invalidated",
    }


def test_a_store_made_after_the_agents_return_decides_one_before_it_reads(
    team: Team,
) -> None:
    """Another process (a restart, a worker) builds a1's store over the same stores: its
    first read decides the return it owes, so it never serves what that return left out."""
    away_while_hotel_changes(team)
    arrive(team.a1)
    restarted = Member(team.readmit, "trip", "a1", team.a1.signer, clock=team.a1.clock)
    s1 = team.store(restarted)

    assert s1.get(NOTES, "pickup") is None
    assert [i.key for i in s1.search(("notes",))] == []
    assert restarted.latest is not None
    assert len(team.readmit.decisions("trip", "a1")) == 2  # decided once, for both reads


def _family_and_agency(inner: BaseStore) -> tuple[Member, ReadmitStore, ReadmitStore]:
    """a1 (family) and x1 (agency) over ``inner``: x1, a1's store and x1's store."""
    readmit = open_store("sqlite://:memory:")
    agents = [("a1", "family"), ("x1", "agency")]
    readmit.create_workspace("trip", [Agent(id=a, principal=p, role="r") for a, p in agents])
    clock = ticking()
    a1, x1 = (Member(readmit, "trip", a, HmacSha256Signer(KEY), clock=clock) for a, _ in agents)
    return x1, ReadmitStore(inner, a1), ReadmitStore(inner, x1)


@pytest.mark.usefixtures("checks_raced")
def test_a_path_another_principal_overwrote_shows_its_agent_nothing_no_view_judged() -> None:
    """The inner store keeps one value a path: a1 (family) writing x1's agency-only path
    past the check that refuses it (a race, `checks_raced`) replaces x1's value there,
    while readmit keeps x1's item (a1 may not read it, so a1's item replaces nothing).
    x1's next view admits its own item; its path now holds a1's family-only value, which
    x1 must not read."""
    inner = InMemoryStore()
    x1, s1, sx = _family_and_agency(inner)
    sx.put(("agency",), "margin", {"text": "Riverside margin is 12%."})
    sx.put(("agency",), "kept", {"text": "Lakeside margin is 15%."})
    s1.put(("agency",), "margin", {"text": "Riverside margin is 0% for us."})
    x1.depart()

    decided = arrive(x1)

    assert decided is not None
    assert decided.view is not None  # issued, with x1's own item at the path
    assert '"agency/margin"' in {i["text"].split(" = ")[0] for i in decided.view["items"]}
    assert sx.get(("agency",), "margin") is None  # a1's value, which no view of x1 judged
    assert [i.key for i in sx.search(("agency",))] == ["kept"]


@pytest.mark.usefixtures("checks_raced")
def test_a_teammates_failed_overwrite_leaves_the_admitted_path_shown() -> None:
    """a1's write of x1's path failed: readmit undid it and stated again, in a1's name,
    the value the path still holds (x1's). x1's view admits that value: shown."""
    inner = FailingStore()
    x1, s1, sx = _family_and_agency(inner)
    sx.put(("agency",), "margin", {"text": "Twelve."})
    x1.depart()
    inner.failing = True
    with pytest.raises(OSError, match="disk full"):
        s1.put(("agency",), "margin", {"text": "n/a"})
    inner.failing = False

    arrive(x1)
    shown = sx.get(("agency",), "margin")

    assert shown is not None
    assert shown.value == {"text": "Twelve."}


def test_an_async_read_decides_the_owed_return_off_the_event_loop(team: Team) -> None:
    """A return may take a model minutes: never on the loop (nor the store reads after)."""
    if not isinstance(team.inner, InMemoryStore):
        pytest.skip("LangGraph's SqliteStore and PostgresStore have no async batch")
    away_while_hotel_changes(team)
    restarted = Member(team.readmit, "trip", "a1", team.a1.signer, clock=team.a1.clock)
    decided_on: list[threading.Thread] = []
    decide = restarted.return_

    def spied(*args: Any, **kwargs: Any) -> Any:
        decided_on.append(threading.current_thread())
        return decide(*args, **kwargs)

    restarted.return_ = spied  # type: ignore[method-assign]
    s1 = team.store(restarted)

    async def read() -> threading.Thread:
        assert await s1.aget(NOTES, "pickup") is None
        return threading.current_thread()

    loop_thread = asyncio.run(read())

    assert decided_on
    assert decided_on[0] is not loop_thread


def test_a_delete_while_away_is_a_revocation_with_its_reason(team: Team) -> None:
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "train", {"text": "The 9:00 train to Kyoto."})
    team.a1.depart()
    s2.delete(TRIP, "train")

    decided = arrive(team.a1)

    assert decided is not None
    assert s1.get(TRIP, "train") is None
    (excluded,) = notice(decided)["excluded"]
    assert (excluded["reason"], excluded["key"]) == ("revoked", "train")
    assert "deleted 'trip/train' from the LangGraph store" in excluded["detail"]


def test_a_delete_of_a_path_readmit_never_recorded_records_nothing(team: Team) -> None:
    team.inner.put(TRIP, "legacy", {"text": "written before readmit"})

    team.store(team.a2).delete(TRIP, "legacy")

    assert team.inner.get(TRIP, "legacy") is None
    assert team.readmit.events("trip") == []


def admitted_and_not(team: Team, n: int) -> list[str]:
    """``n`` paths, every third through readmit and the rest straight into the inner store."""
    s2 = team.store(team.a2)
    recorded = []
    for i in range(n):
        key = f"k{i:02d}"
        if i % 3 == 0:
            s2.put(TRIP, key, {"text": f"fact {i}"})
            recorded.append(key)
        else:
            team.inner.put(TRIP, key, {"text": f"fact {i}"})
    return recorded


@pytest.mark.parametrize(("limit", "offset"), [(3, 0), (3, 3), (4, 5), (10, 0), (0, 0), (5, 40)])
def test_search_over_fetches_so_filtering_does_not_starve_a_page(
    team: Team, limit: int, offset: int
) -> None:
    recorded = admitted_and_not(team, 30)
    s1 = team.store(team.a1)
    team.a1.depart()
    arrive(team.a1)
    expected = [i.key for i in team.inner.search(TRIP, limit=100) if i.key in recorded]

    page = s1.search(TRIP, limit=limit, offset=offset)

    assert [i.key for i in page] == expected[offset : offset + limit]


def test_list_namespaces_shows_only_namespaces_with_something_admitted(team: Team) -> None:
    s1 = team.store(team.a1)
    for n in range(12):
        team.inner.put(("hidden", f"n{n:02d}"), "k", {"text": "not recorded"})
    s1.put(("shown", "deep", "er"), "k", {"text": "recorded"})
    team.a1.depart()
    arrive(team.a1)

    assert s1.list_namespaces(limit=3) == [("shown", "deep", "er")]
    assert s1.list_namespaces(max_depth=1) == [("shown",)]
    assert s1.list_namespaces(prefix=("hidden",)) == []


def test_own_writes_after_a_return_are_read_and_a_teammates_wait_for_the_next(
    team: Team,
) -> None:
    s1, s2 = team.store(team.a1), team.store(team.a2)
    team.a1.depart()
    arrive(team.a1)

    s1.put(TRIP, "mine", {"text": "a1 wrote this after returning"})
    s2.put(TRIP, "theirs", {"text": "a2 wrote this while a1 was present"})

    assert s1.get(TRIP, "mine") is not None
    assert s1.get(TRIP, "theirs") is None
    team.a1.depart()
    arrive(team.a1)
    assert s1.get(TRIP, "theirs") is not None


def returned_with_the_hotel(team: Team) -> tuple[ReadmitStore, ReadmitStore]:
    """a2 books Sunrise; a1 leaves and returns with it admitted."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", SUNRISE)
    team.a1.depart()
    arrive(team.a1)
    hotel = s1.get(TRIP, "hotel")
    assert hotel is not None
    assert hotel.value == SUNRISE
    return s1, s2


def test_a_teammates_overwrite_of_an_admitted_path_waits_for_the_next_return(
    team: Team,
) -> None:
    """The view judged Sunrise; the inner store now holds a value no view of a1 judged."""
    s1, s2 = returned_with_the_hotel(team)

    s2.put(TRIP, "hotel", RIVERSIDE)

    assert s1.get(TRIP, "hotel") is None
    assert s1.search(TRIP) == []
    assert s1.list_namespaces() == []
    team.a1.depart()
    arrive(team.a1)
    hotel = s1.get(TRIP, "hotel")
    assert hotel is not None
    assert hotel.value == RIVERSIDE


def test_a_teammates_overwrite_from_another_process_is_hidden_within_the_interval(
    team: Team,
) -> None:
    """Another store object (as another process has) writes: no generation to poll here."""
    s1, _ = returned_with_the_hotel(team)
    other = open_store(team.readmit.url)
    a2 = Member(other, "trip", "a2", team.a2.signer, clock=team.a2.clock)

    ReadmitStore(team.inner, a2).put(TRIP, "hotel", RIVERSIDE)
    time.sleep(FOLLOW_EVERY)

    assert s1.get(TRIP, "hotel") is None
    other.close()


def test_an_admitted_version_withdrawn_through_readmit_is_no_longer_read(team: Team) -> None:
    """a2 revokes the booking in readmit (over HTTP, say); the inner store still holds it."""
    s1, _ = returned_with_the_hotel(team)
    [booked] = [i.id for i in team.a2.visible() if parse(i.key) == identity(TRIP, "hotel")]

    team.a2.revoke([booked], "Sunrise cancelled")

    assert team.inner.get(TRIP, "hotel") is not None
    assert s1.get(TRIP, "hotel") is None


def test_the_last_write_of_a_path_decides_whether_the_agent_reads_it(team: Team) -> None:
    """Its own write after a teammate's is read; a teammate's after its own is not."""
    s1, s2 = returned_with_the_hotel(team)

    s2.put(TRIP, "hotel", RIVERSIDE)
    s1.put(TRIP, "hotel", {"text": "a1 booked the Lakeside instead."})
    assert s1.get(TRIP, "hotel") is not None
    s2.put(TRIP, "hotel", SUNRISE)
    assert s1.get(TRIP, "hotel") is None
    s1.put(TRIP, "hotel", RIVERSIDE)
    assert [i.value for i in s1.search(TRIP)] == [RIVERSIDE]


def test_what_the_agent_writes_in_another_process_is_its_own(team: Team) -> None:
    """A second Member of a1 (another process) writes a path a teammate wrote last."""
    s1, s2 = returned_with_the_hotel(team)
    s2.put(TRIP, "hotel", RIVERSIDE)
    elsewhere = Member(team.readmit, "trip", "a1", team.a1.signer, clock=team.a1.clock)

    team.store(elsewhere).put(TRIP, "hotel", {"text": "a1 booked the Lakeside instead."})

    assert s1.get(TRIP, "hotel") is not None


def test_the_agents_own_write_of_any_value_is_read_back_after_a_return(team: Team) -> None:
    """Values an inner store keeps as JSON come back changed (a time as ISO text, 1e16 as an
    integer): a read that compared texts hid the agent's own write on SqliteStore."""
    s1 = team.store(team.a1)
    team.a1.depart()
    arrive(team.a1)

    value: dict[str, Any] = {"n": 1e16, "z": -0.0}
    if type(team.inner).__name__ != "PostgresStore":  # its JSON encoder takes no datetime
        value["when"] = datetime(2026, 5, 1, 9, tzinfo=UTC)
    s1.put(TRIP, "when", value)

    assert s1.get(TRIP, "when") is not None
    assert [i.key for i in s1.search(TRIP)] == ["when"]


def test_an_admitted_value_a_json_store_hands_back_in_decimal_is_read_back(team: Team) -> None:
    """``PostgresStore`` hands 1e16 back as an integer and -0.0 as 0.0: rendered, the value
    no longer said the admitted text, and the view's value was hidden."""
    value = {"n": 1e16, "z": -0.0, "ratio": 0.1}
    team.store(team.a2).put(TRIP, "count", value)
    team.a1.depart()
    arrive(team.a1)

    found = team.store(team.a1).get(TRIP, "count")

    assert found is not None
    assert found.value == value


def test_a_teammates_write_landing_after_the_agents_own_is_not_read(team: Team) -> None:
    """a2's write is recorded before a1's, and lands in the inner store after it: readmit's
    log says a1's value is the path's, the inner store holds a2's, which a1 read as its
    own (a review)."""
    s1, s2 = returned_with_the_hotel(team)
    s2.put(TRIP, "hotel", RIVERSIDE)
    mine = {"text": "a1 booked the Lakeside instead."}
    s1.put(TRIP, "hotel", mine)
    team.inner.put(TRIP, "hotel", RIVERSIDE)  # a2's write, landing last

    assert s1.get(TRIP, "hotel") is None
    assert s1.search(TRIP) == []
    team.inner.put(TRIP, "hotel", mine)  # what readmit holds, landed at last
    found = s1.get(TRIP, "hotel")
    assert found is not None
    assert found.value == mine


def test_a_value_holding_nan_or_an_infinity_admitted_by_the_view_is_read_back(
    team: Team,
) -> None:
    """Stores that keep JSON hand NaN and infinities back as null; rendered as NaN, the
    text read said otherwise than the admitted one, and the view admitted a value reads
    never showed, naming no exclusion (a probe). Written as those stores write them."""
    s1 = team.store(team.a1)
    value = {"p99_ms": float("nan"), "max": [float("inf"), -float("inf")]}
    if type(team.inner).__name__ == "PostgresStore":  # its encoder writes NaN, which it refuses
        import psycopg

        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            s1.put(TRIP, "latency", value)
        assert s1.get(TRIP, "latency") is None
        return
    s1.put(TRIP, "latency", value)
    team.a1.depart()
    decided = arrive(team.a1)

    assert decided is not None
    assert isinstance(decided.decision, Issued)
    (admitted,) = decided.decision.items
    assert admitted.text == '"trip/latency" = {"max": [null, null], "p99_ms": null}'
    assert s1.get(TRIP, "latency") is not None
    assert [i.key for i in s1.search(TRIP)] == ["latency"]


def withhold_a1(team: Team) -> None:
    """Open an obligation for a1's role that nothing can cover, so its return is withheld."""
    team.store(team.a1).put(TRIP, "hotel", SUNRISE)
    team.a1.depart()
    draft = ObligationDraft(
        id="o-pickup",
        text="Re-plan the pickup.",
        role="planner",
        requires=frozenset({"d-pickup"}),
        critical=frozenset({"d-pickup"}),
        frontier_id="f-pickup",
        frontier_text="No pickup confirmed yet.",
    )
    team.a2.record([OpenObligation(id="open-o", at=team.a2.clock(), author="a2", obligation=draft)])
    decided = arrive(team.a1)
    assert decided is not None
    assert decided.decision.outcome == "blocked"


def test_after_a_withheld_return_reads_raise_with_the_reasons(team: Team) -> None:
    withhold_a1(team)
    s1 = team.store(team.a1)

    with pytest.raises(ViewWithheld) as raised:
        s1.get(TRIP, "hotel")

    assert raised.value.code == "view_withheld"
    assert raised.value.outcome == "blocked"
    assert raised.value.notice["coverage"] == {"obligations": 0.0, "critical": 0.0}
    with pytest.raises(ViewWithheld):
        s1.search(TRIP)


def test_a_refused_batch_stores_nothing(team: Team) -> None:
    withhold_a1(team)
    s1 = team.store(team.a1)
    before = len(team.readmit.events("trip"))

    with pytest.raises(ViewWithheld):
        s1.batch([PutOp(TRIP, "new", {"text": "x"}), GetOp(TRIP, "hotel")])
    with pytest.raises(InvalidNamespaceError):
        s1.batch([PutOp(TRIP, "ok", {"text": "x"}), PutOp(("bad.label",), "k", {"text": "x"})])

    assert len(team.readmit.events("trip")) == before
    assert team.inner.get(TRIP, "new") is None
    assert team.inner.get(TRIP, "ok") is None


def test_after_a_withheld_return_empty_mode_shows_only_the_agents_own_writes(team: Team) -> None:
    withhold_a1(team)
    s1 = team.store(team.a1, on_withheld="empty")

    s1.put(TRIP, "fresh", {"text": "written after the withheld return"})

    assert s1.get(TRIP, "hotel") is None
    assert [i.key for i in s1.search(TRIP)] == ["fresh"]


async def async_scenario(team: Team) -> tuple[Any, Any, list[Any]]:
    """The hotel change of `away_while_hotel_changes`, through the async API."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    await s2.aput(TRIP, "hotel", SUNRISE)
    await s1.aput(NOTES, "pickup", PICKUP)
    team.a1.depart()
    await s2.aput(TRIP, "hotel", RIVERSIDE)
    arrive(team.a1)
    return (
        await s1.aget(NOTES, "pickup"),
        await s1.aget(TRIP, "hotel"),
        await s1.asearch(("notes",)),
    )


async def on_async_inner(kind: str, tmp_path: Path) -> tuple[Team, tuple[Any, Any, list[Any]]]:
    if kind == "memory":
        team = make_team(InMemoryStore(), tmp_path)
        return team, await async_scenario(team)
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "lg.db")) as inner:
        await inner.setup()
        team = make_team(inner, tmp_path)
        return team, await async_scenario(team)


def test_async_reads_hide_a_teammates_overwrite_too(team: Team) -> None:
    if type(team.inner).__name__ != "InMemoryStore":
        pytest.skip("LangGraph's SqliteStore and PostgresStore have no async batch")
    s1, s2 = returned_with_the_hotel(team)

    async def overwritten() -> tuple[Any, list[Any]]:
        await s2.aput(TRIP, "hotel", RIVERSIDE)
        return await s1.aget(TRIP, "hotel"), await s1.asearch(TRIP)

    assert asyncio.run(overwritten()) == (None, [])


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_async_reads_and_writes_go_through_the_same_admission(kind: str, tmp_path: Path) -> None:
    team, (pickup, hotel, notes) = asyncio.run(on_async_inner(kind, tmp_path))

    assert pickup is None
    assert hotel is not None
    assert hotel.value == RIVERSIDE
    assert notes == []
    assert [r.event.op for r in team.readmit.events("trip")] == ["assert"] * 3
    team.readmit.close()


class TripState(TypedDict, total=False):
    readmit: dict[str, Any] | None
    hotel: str | None
    pickup: str | None


def trip_graph(member: Member, store: BaseStore) -> Any:
    """A plain StateGraph whose entry returns the agent and whose exit departs it."""

    def plan(state: TripState, runtime: Runtime[None]) -> TripState:
        assert runtime.store is not None
        hotel, pickup = runtime.store.get(TRIP, "hotel"), runtime.store.get(NOTES, "pickup")
        return {
            "hotel": None if hotel is None else hotel.value["text"],
            "pickup": None if pickup is None else pickup.value["text"],
        }

    graph = StateGraph(TripState)
    graph.add_node("readmit_return", return_node(member))
    graph.add_node("plan", plan)
    graph.add_node("readmit_depart", depart_node(member))
    graph.add_edge(START, "readmit_return")
    graph.add_edge("readmit_return", "plan")
    graph.add_edge("plan", "readmit_depart")
    graph.add_edge("readmit_depart", END)
    return graph.compile(store=store)


def test_a_state_graph_returns_at_its_entry_and_departs_at_its_exit(team: Team) -> None:
    s2 = team.store(team.a2)
    graph = trip_graph(team.a1, team.store(team.a1))
    s2.put(TRIP, "hotel", SUNRISE)
    team.store(team.a1).put(NOTES, "pickup", PICKUP)

    first = graph.invoke({})
    s2.put(TRIP, "hotel", RIVERSIDE)
    second = graph.invoke({})

    assert first["readmit"] is None  # never departed: nothing to readmit
    assert (first["hotel"], first["pickup"]) == (SUNRISE["text"], PICKUP["text"])
    assert (second["hotel"], second["pickup"]) == (RIVERSIDE["text"], None)
    assert reasons(second["readmit"])[("notes", "a1", "pickup")] == "implicitly_invalidated"
    assert len(team.readmit.decisions("trip", "a1")) == 1


class ToolCallingFakeModel(GenericFakeChatModel):
    """LangChain's fake chat model, accepting tools (it answers from its script regardless)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def recall(namespace: list[str], key: str, runtime: ToolRuntime) -> str:
    """Recall what the team's memory holds at a path."""
    assert runtime.store is not None
    found = runtime.store.get(tuple(namespace), key)
    return "nothing" if found is None else str(found.value["text"])


def ask_for_pickup(team: Team) -> dict[str, Any]:
    script: list[AIMessage] = [
        AIMessage(
            content="",
            tool_calls=[
                {
                    "name": "recall",
                    "args": {"namespace": list(NOTES), "key": "pickup"},
                    "id": "call-1",
                }
            ],
        ),
        AIMessage(content="done"),
    ]
    agent = create_agent(
        ToolCallingFakeModel(messages=iter(script)),
        tools=[recall],
        middleware=[ReadmitMiddleware(team.a1)],
        store=team.store(team.a1),
    )
    return dict(agent.invoke({"messages": [{"role": "user", "content": "When is the pickup?"}]}))


def test_a_langchain_agent_returns_before_its_run_and_departs_after(team: Team) -> None:
    away_while_hotel_changes(team)

    out = ask_for_pickup(team)

    assert out["messages"][2].content == "nothing"
    assert reasons(out["readmit"])[("notes", "a1", "pickup")] == "implicitly_invalidated"
    assert out["readmit"]["outcome"] == "issued"
    assert out["readmit"]["view"]["signature"]
    assert len(team.readmit.decisions("trip", "a1")) == 1
    first = ask_for_pickup(team)  # departed after the run, so this run returns again
    assert first["readmit"]["decision"] == 2


names = st.text(st.characters(blacklist_characters="."), min_size=1, max_size=8)


@given(st.lists(names, min_size=1, max_size=3), st.text(max_size=LONG_KEY + 40))
def test_an_item_key_names_exactly_one_path(namespace: list[str], key: str) -> None:
    ident = identity(tuple(namespace), key)

    assert parse(item_key(ident)) == ident
    plain = len(item_key((tuple(namespace), key, False)))
    assert ident[2] is (len(key) > LONG_KEY or plain > KEY_BYTES)


@pytest.mark.parametrize(
    "key", ["旅" * 300, "🧳" * 150, "k" * LONG_KEY], ids=["CJK", "emoji", "ASCII"]
)
def test_a_key_of_at_most_512_characters_is_written_whatever_its_script(
    team: Team, key: str
) -> None:
    """JSON writes a character outside ASCII in six: 300 of them made a readmit key longer
    than the store takes, and the write was refused; once its key was named by its digest,
    the reads still looked for it by the key itself and hid it after a return (reviews)."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s1.put(TRIP, key, SUNRISE)
    team.a2.depart()
    s1.put(TRIP, key, RIVERSIDE)
    team.a2.return_()

    assert all(len(i.key or "") <= KEY_BYTES for i in team.readmit.visible_state("trip", "a1"))
    found = s2.get(TRIP, key)
    assert found is not None
    assert found.value == RIVERSIDE
    assert [i.value for i in s2.search(TRIP)] == [RIVERSIDE]


def test_a_short_key_cannot_take_a_long_keys_identity() -> None:
    long_ident = identity(TRIP, "x" * (LONG_KEY + 1))

    short_ident = identity(TRIP, long_ident[1])

    assert item_key(short_ident) != item_key(long_ident)


def test_the_example_shows_the_returning_agent_its_stale_memory_kept_out() -> None:
    example = Path(__file__).parents[2] / "examples" / "langgraph_team.py"

    ran = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=120, check=True
    )

    lines = ran.stdout.splitlines()
    assert "  planner recall: (nothing)" in lines
    assert "  planner recall: Sunrise cancelled the booking; Riverside Hotel is booked." in lines
    assert any(line.startswith("    trip/train: revoked") for line in lines)
    assert any(
        line.startswith("    notes/planner/pickup: implicitly_invalidated") for line in lines
    )
    stale = [line for line in lines if line.startswith("    notes/planner/pickup")]
    assert "refers to trip/hotel" in stale[0]  # the verifier's lg-… id, read as its path
    assert "lg-" not in stale[0]


def test_reads_batched_together_answer_as_they_would_alone(team: Team) -> None:
    admitted_and_not(team, 30)
    s1 = team.store(team.a1)
    team.a1.depart()
    arrive(team.a1)
    ops: list[Op] = [
        SearchOp(TRIP, limit=3),
        GetOp(TRIP, "k00"),
        SearchOp(TRIP, limit=4, offset=2),
        GetOp(TRIP, "k01"),
        ListNamespacesOp(limit=5),
    ]

    together = s1.batch(ops)

    alone = [s1.batch([op])[0] for op in ops]
    assert together == alone
    assert [
        len(cast(list[Any], r)) if isinstance(r, list) else r is not None for r in together
    ] == [
        3,
        True,
        4,
        False,
        1,
    ]


def test_async_batches_filter_and_page_like_sync_ones(team: Team) -> None:
    if not isinstance(team.inner, InMemoryStore):
        pytest.skip("LangGraph's SqliteStore and PostgresStore have no async batch")
    admitted_and_not(team, 30)
    s1 = team.store(team.a1)
    team.a1.depart()
    arrive(team.a1)
    ops: list[Op] = [SearchOp(TRIP, limit=4, offset=1), GetOp(TRIP, "k01"), GetOp(TRIP, "k03")]

    got = asyncio.run(s1.abatch(ops))

    assert got == s1.batch(ops)


def test_a_write_readmit_refuses_reaches_neither_store(team: Team) -> None:
    built_on_nothing = {**SUNRISE, "_readmit": {"depends_on": ["no-such-item"]}}

    with pytest.raises(InvalidEvent, match="unknown item 'no-such-item'"):
        team.store(team.a1).put(TRIP, "hotel", built_on_nothing)

    assert team.inner.get(TRIP, "hotel") is None
    assert team.readmit.events("trip") == []


def holding_itself() -> dict[str, Any]:
    value: dict[str, Any] = {"text": "loop"}
    value["self"] = value
    return value


@pytest.mark.parametrize(
    ("namespace", "value", "message"),
    [
        (TRIP, {1: "a", "b": 2}, r"put 'trip/hotel': its value is not JSON with string keys"),
        (TRIP, holding_itself(), r"put 'trip/hotel': its value is not JSON with string keys"),
        ("trip", SUNRISE, r"the namespace must be a tuple of strings, such as \('trip',\)"),
        (  # PostgreSQL's index refused it with a StoreError, SQLite took it (a review)
            ("t" * 1800,),
            SUNRISE,
            r"namespace and key make a readmit key of 1,894 bytes, at most 1,800 \(",
        ),
    ],
    ids=["keys of two types", "a value holding itself", "a string namespace", "a long namespace"],
)
def test_a_write_readmit_cannot_record_is_refused_clearly_and_reaches_neither_store(
    team: Team, namespace: Any, value: Any, message: str
) -> None:
    """A TypeError from json, or a namespace recorded as its characters (a probe)."""
    with pytest.raises(InvalidInput, match=message):
        team.store(team.a1).put(namespace, "hotel", value)

    assert team.inner.search(()) == []
    assert team.readmit.events("trip") == []


def test_every_integration_raises_the_same_withheld_and_expired_errors() -> None:
    """An application catching one integration's refusal catches the others' too."""
    from readmit.integrations import mem0, team
    from readmit.integrations.langgraph import ViewExpired, ViewWithheld

    assert ViewExpired is team.ViewExpired is mem0.ViewExpired
    assert ViewWithheld is team.ViewWithheld is mem0.ViewWithheld
    assert issubclass(ViewExpired, ViewWithheld)


@pytest.mark.parametrize("word", ["remove", "rasie"])
def test_an_on_withheld_it_does_not_take_is_refused_when_the_store_is_made(
    team: Team, word: str
) -> None:
    with pytest.raises(InvalidInput, match=f"on_withheld must be 'raise' or 'empty', not '{word}'"):
        team.store(team.a1, on_withheld=word)


def test_a_member_of_a_workspace_or_agent_the_store_does_not_know_is_refused_when_made(
    team: Team,
) -> None:
    with pytest.raises(
        InvalidInput, match=r"no agent 'A1' in workspace 'trip' \(its agents: a1, a2\)"
    ):
        Member(team.readmit, "trip", "A1", HmacSha256Signer(KEY))
    with pytest.raises(InvalidInput, match="no workspace 'trp' in this store"):
        Member(team.readmit, "trp", "a1", HmacSha256Signer(KEY))


class NoAlg:
    """Signs and verifies, but says no algorithm (a review: it got through)."""

    def sign(self, data: bytes) -> str:
        return "x"

    def verify(self, data: bytes, signature: str) -> bool:
        return True


@pytest.mark.parametrize("signer", [None, KEY, NoAlg()])
def test_a_member_without_a_signer_is_refused_when_made(team: Team, signer: Any) -> None:
    """A return failed later with ``'NoneType' object has no attribute 'alg'`` (a probe)."""
    with pytest.raises(InvalidInput, match=r"signer: give a readmit\.signing signer"):
        Member(team.readmit, "trip", "a1", signer)


def test_a_note_a_teammates_return_finds_stale_while_present_is_no_longer_read(
    team: Team,
) -> None:
    """a1 has returned with its pickup note; a2 revokes the booking in readmit and a2's
    return finds the note stale: a verdict binds every later return, any agent's, and
    a1's reads showed the note until a1 returned again."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", SUNRISE)
    s1.put(NOTES, "pickup", PICKUP)
    team.a2.depart()
    team.a1.depart()
    arrive(team.a1)
    [booked] = [i.id for i in team.a2.visible() if parse(i.key) == identity(TRIP, "hotel")]
    team.a2.revoke([booked], "Sunrise cancelled")
    assert s1.get(NOTES, "pickup") is not None  # nothing judged it yet

    assert reasons(notice(team.a2.return_()))[(*NOTES, "pickup")] == "implicitly_invalidated"

    assert s1.get(NOTES, "pickup") is None
    assert s1.search(("notes",)) == []
    assert team.inner.get(NOTES, "pickup") is not None  # the application's data is kept


def test_the_agents_own_write_resting_on_what_fell_is_not_read(team: Team) -> None:
    """a1 notes a taxi resting on its pickup note, after a verdict hid the note and after
    a2 revoked the booking: a return excludes both (``premise_invalidated``), and reads
    showed them (a review)."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", SUNRISE)
    s1.put(NOTES, "pickup", PICKUP)
    s2.put(TRIP, "museum", {"text": "The museum opens at nine."})
    team.a2.depart()
    team.a1.depart()
    arrive(team.a1)
    [booked] = [i.id for i in team.a2.visible() if parse(i.key) == identity(TRIP, "hotel")]
    [museum] = [i.id for i in team.a2.visible() if parse(i.key) == identity(TRIP, "museum")]
    [pickup] = [i.id for i in team.a1.visible() if parse(i.key) == identity(NOTES, "pickup")]
    team.a2.revoke([booked], "Sunrise cancelled")
    team.a2.return_()  # finds the pickup note stale
    assert s1.get(NOTES, "pickup") is None
    team.a2.revoke([museum], "closed for works")

    s1.put(
        NOTES, "taxi", {"text": "Taxi to the pickup at 7:45.", "_readmit": {"depends_on": [pickup]}}
    )
    s1.put(
        NOTES, "visit", {"text": "Visit the museum at ten.", "_readmit": {"depends_on": [museum]}}
    )

    assert s1.get(NOTES, "taxi") is None
    assert s1.get(NOTES, "visit") is None
    team.a1.depart()
    left = {e["key"]: e["reason"] for e in notice(team.a1.return_())["left_out"]}
    assert left == {
        "pickup": "implicitly_invalidated",
        "taxi": "premise_invalidated",
        "visit": "premise_invalidated",
    }
