"""A LangGraph value's TTL ends its readmit item, on real TTL stores (SQLite, PostgreSQL).

The stores sweep by the wall clock; these tests judge readmit's recorded end and the view's
admission at a chosen return time instead of waiting for a sweep.
"""

import math
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp, TTLConfig
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from builders import KEY, T0, Ticking
from conftest import fresh_postgres_schema
from integrations.stores import FailingSqliteStore
from readmit.clock import now
from readmit.errors import InvalidInput
from readmit.events import Assert, ItemDraft, ObligationDraft, OpenObligation
from readmit.integrations.langgraph import ReadmitStore, arrive, item_key, notice
from readmit.integrations.langgraph.expiry import Expiry, ending
from readmit.integrations.langgraph.keys import identity
from readmit.integrations.team import Member
from readmit.model import Agent, Item, Validity
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store

TRIP = ("trip",)
HOTEL = {"text": "Riverside Hotel is booked."}
CONFIG: TTLConfig = {"default_ttl": 30, "refresh_on_read": True}
MINUTE = timedelta(minutes=1)


@dataclass
class Timed:
    """An inner store that keeps TTLs, and what it holds as a value's ``expires_at``."""

    store: BaseStore
    expires: Callable[[tuple[str, ...], str], datetime | None]


@dataclass
class Team:
    readmit: SqlStore
    inner: BaseStore
    a1: Member
    a2: Member
    clock: Ticking = field(default_factory=Ticking)

    def store(self, member: Member) -> ReadmitStore:
        return ReadmitStore(self.inner, member)

    def events(self) -> int:
        return len(self.readmit.events("trip"))

    def current(self, path: tuple[str, ...] = TRIP, key: str = "hotel") -> Item:
        """The version of ``path``/``key`` readmit holds active."""
        (item,) = [i for i in self.a2.visible() if i.key == item_key(identity(path, key))]
        return item

    def put_at(self) -> datetime:
        """When the latest put was recorded."""
        return [r.event.at for r in self.readmit.events("trip") if isinstance(r.event, Assert)][-1]

    def ends_after(self, ttl: float, before: datetime) -> bool:
        """Whether the current item ends ``ttl`` minutes after a time of its put.

        After ``before`` (the clock before the put), at the latest when it was recorded.
        """
        end = self.current().validity.valid_to
        return end is not None and before < end - ttl * MINUTE <= self.put_at()


def _sqlite_expires(conn: sqlite3.Connection) -> Callable[[tuple[str, ...], str], datetime | None]:
    def expires(namespace: tuple[str, ...], key: str) -> datetime | None:
        query = "SELECT expires_at FROM store WHERE prefix = ? AND key = ?"
        (found,) = conn.execute(query, (".".join(namespace), key)).fetchone()
        if found is None:
            return None
        at = datetime.fromisoformat(found)  # a put's has its zone; a refresh's is UTC, bare
        return at if at.tzinfo else at.replace(tzinfo=UTC)

    return expires


def _postgres_expires(url: str) -> Callable[[tuple[str, ...], str], datetime | None]:
    import psycopg

    def expires(namespace: tuple[str, ...], key: str) -> datetime | None:
        query = "SELECT expires_at FROM store WHERE prefix = %s AND key = %s"
        with psycopg.connect(url) as conn:
            row = conn.execute(query, (".".join(namespace), key)).fetchone()
        assert row is not None
        return row[0]  # type: ignore[no-any-return]

    return expires


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def timed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Timed]:
    """A LangGraph store that keeps TTLs (``default_ttl`` 30 minutes, refreshed on read)."""
    if request.param == "sqlite":
        conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
        store = SqliteStore(conn, ttl=CONFIG)
        store.setup()
        yield Timed(store, _sqlite_expires(conn))
        conn.close()
    else:
        from langgraph.store.postgres import PostgresStore

        with fresh_postgres_schema() as url, PostgresStore.from_conn_string(url, ttl=CONFIG) as pg:
            pg.setup()
            yield Timed(pg, _postgres_expires(url))


def make_team(inner: BaseStore, tmp_path: Path, clock: Any = None) -> Team:
    readmit = open_store(f"sqlite:///{tmp_path}/readmit.db")
    agents = [Agent(id="a1", principal="family", role="planner")]
    readmit.create_workspace("trip", [*agents, Agent(id="a2", principal="family", role="booking")])
    ticking, signer = Ticking(), HmacSha256Signer(KEY)
    a1, a2 = (Member(readmit, "trip", a, signer, clock=clock or ticking) for a in ("a1", "a2"))
    return Team(readmit, inner, a1, a2, ticking)


@pytest.fixture
def team(timed: Timed, tmp_path: Path) -> Iterator[Team]:
    made = make_team(timed.store, tmp_path)
    yield made
    made.readmit.close()


def open_obligation(team: Team) -> None:
    """An obligation of a1's role that an item supporting ``d-hotel`` covers."""
    draft = ObligationDraft(
        id="o-hotel",
        text="Keep the hotel booking current.",
        role="planner",
        requires=frozenset({"d-hotel"}),
        critical=frozenset({"d-hotel"}),
        frontier_id="f-hotel",
        frontier_text="Hotel booking to confirm.",
    )
    team.a2.record([OpenObligation(id="open", at=team.clock(), author="a2", obligation=draft)])


def test_a_put_with_a_ttl_ends_its_item_when_the_store_may_sweep_it(team: Team) -> None:
    before = team.clock.at

    team.store(team.a2).put(TRIP, "hotel", HOTEL, ttl=10)

    assert team.ends_after(10, before)


def test_a_put_without_a_ttl_takes_the_default_and_an_explicit_none_never_ends(
    team: Team,
) -> None:
    s2 = team.store(team.a2)

    before = team.clock.at
    s2.put(TRIP, "hotel", HOTEL)
    assert team.ends_after(30, before)  # default_ttl

    s2.put(TRIP, "hotel", HOTEL, ttl=None)
    assert team.current().validity.valid_to is None


def test_an_update_of_only_the_ttl_moves_the_end(team: Team) -> None:
    s2 = team.store(team.a2)

    for ttl in (10, 60, 5):
        before = team.clock.at
        s2.put(TRIP, "hotel", HOTEL, ttl=ttl)
        assert team.ends_after(ttl, before)
    s2.put(TRIP, "hotel", HOTEL, ttl=None)
    assert team.current().validity.valid_to is None


def test_a_return_after_the_ttl_leaves_the_value_out_and_it_covers_nothing(team: Team) -> None:
    s1, s2 = team.store(team.a1), team.store(team.a2)
    team.a1.depart()
    open_obligation(team)
    s2.put(TRIP, "hotel", {**HOTEL, "_readmit": {"supports": ["d-hotel"]}}, ttl=10)
    end = team.put_at() + 10 * MINUTE  # the store may sweep it from then at the latest

    team.clock.at += 5 * MINUTE
    before = arrive(team.a1)
    assert before is not None
    assert before.decision.outcome == "issued"
    assert s1.get(TRIP, "hotel") is not None
    assert datetime.fromisoformat(notice(before)["view"]["expires_at"]) <= end

    team.a1.depart()
    team.clock.at = end
    after = arrive(team.a1)

    assert after is not None
    assert after.decision.outcome != "issued"  # nothing else covers the obligation
    reasons = {e["key"]: e["reason"] for e in notice(after)["excluded"]}
    assert reasons["hotel"] == "expired"


def test_the_annotations_end_wins_when_earlier(team: Team) -> None:
    s2 = team.store(team.a2)
    soon, late = T0 + 2 * MINUTE, T0 + timedelta(days=1)

    s2.put(TRIP, "hotel", {**HOTEL, "_readmit": {"valid_to": soon.isoformat()}}, ttl=10)
    assert team.current().validity.valid_to == soon

    before = team.clock.at
    s2.put(TRIP, "hotel", {**HOTEL, "_readmit": {"valid_to": late.isoformat()}}, ttl=10)
    assert team.ends_after(10, before)


def test_a_value_swept_before_it_would_start_is_refused(team: Team) -> None:
    later = {**HOTEL, "_readmit": {"valid_from": (T0 + timedelta(hours=1)).isoformat()}}

    with pytest.raises(InvalidInput, match=r"ttl ends .* before its readmit valid_from"):
        team.store(team.a2).put(TRIP, "hotel", later, ttl=10)

    assert team.inner.get(TRIP, "hotel", refresh_ttl=False) is None
    assert team.events() == 0


def test_a_refreshing_read_writes_nothing_to_readmit_and_keeps_the_puts_end(team: Team) -> None:
    s2 = team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL, ttl=10)
    end, recorded = team.current().validity.valid_to, team.events()
    assert end is not None
    team.a2.depart()
    arrive(team.a2)

    assert s2.get(TRIP, "hotel", refresh_ttl=True) is not None
    assert [i.key for i in s2.search(TRIP, refresh_ttl=True)] == ["hotel"]

    assert team.events() == recorded  # no read wrote
    assert team.current().validity.valid_to == end


@pytest.mark.parametrize("ttl", [10, 1.4])
def test_readmits_end_is_never_after_the_stores_own(
    timed: Timed, tmp_path: Path, ttl: float
) -> None:
    """By the wall clock the store keeps: after the put, and after reads that refresh it.

    PostgreSQL refreshes a TTL of 1.4 minutes as 1 (it keeps whole minutes), SQLite from
    a time cut to the second: readmit's end is before either.
    """
    team = make_team(timed.store, tmp_path, clock=now)  # the stores keep wall times
    s2 = team.store(team.a2)

    s2.put(TRIP, "hotel", HOTEL, ttl=ttl)
    end = team.current().validity.valid_to
    put = timed.expires(TRIP, "hotel")
    s2.get(TRIP, "hotel", refresh_ttl=True)
    refreshed = timed.expires(TRIP, "hotel")

    assert end is not None
    assert put is not None
    assert refreshed is not None
    assert end <= put
    assert end <= refreshed
    team.readmit.close()


def test_a_store_without_ttl_support_never_ends_a_value(tmp_path: Path) -> None:
    team = make_team(InMemoryStore(), tmp_path)
    s2 = team.store(team.a2)

    s2.batch([PutOp(TRIP, "hotel", HOTEL, ttl=10)])  # InMemoryStore ignores it

    assert team.current().validity.valid_to is None
    with pytest.raises(NotImplementedError, match="TTL is not supported"):
        s2.put(TRIP, "hotel", HOTEL, ttl=10)
    team.readmit.close()


@pytest.fixture
def landing(tmp_path: Path) -> Iterator[tuple[Team, FailingSqliteStore]]:
    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
    inner = FailingSqliteStore(conn, ttl=CONFIG)
    inner.setup()
    team = make_team(inner, tmp_path)
    yield team, inner
    team.readmit.close()
    conn.close()


def put_then_failing(landing: tuple[Team, FailingSqliteStore]) -> tuple[ReadmitStore, datetime]:
    """A2's store after it put the hotel for 10 s, and that value's end; the inner store
    fails every write from now on."""
    team, inner = landing
    s2 = team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL, ttl=10)
    end = team.current().validity.valid_to
    assert end is not None
    inner.failing = True
    return s2, end


@pytest.mark.parametrize("failing", ["put", "delete"])
def test_a_value_restored_after_a_failed_write_keeps_its_end(
    landing: tuple[Team, FailingSqliteStore], failing: str
) -> None:
    team, _ = landing
    s2, end = put_then_failing(landing)
    op = PutOp(TRIP, "hotel", {"text": "Sunrise Hotel is booked."} if failing == "put" else None)
    with pytest.raises(OSError, match="disk full"):
        s2.batch([op])

    restored = team.current()
    assert restored.text == '"trip/hotel" = {"text": "Riverside Hotel is booked."}'
    assert restored.validity.valid_to == end


@pytest.mark.parametrize("ttl", [600, None])
def test_a_failed_put_that_only_lengthens_the_ttl_keeps_the_end_the_store_may_hold(
    landing: tuple[Team, FailingSqliteStore], ttl: float | None
) -> None:
    """The store failed the put: it holds the same value, maybe still with its old TTL (a
    LangGraph item does not say). readmit cannot tell it landed: the end stays the old one."""
    team, _ = landing
    s2, end = put_then_failing(landing)
    with pytest.raises(OSError, match="disk full"):
        s2.batch([PutOp(TRIP, "hotel", HOTEL, ttl=ttl)])

    kept = team.current().validity.valid_to
    assert kept is not None
    assert kept <= end


def test_a_ttl_in_a_fraction_of_a_minute_ends_where_the_store_refreshes_it(team: Team) -> None:
    """SQLite keeps 1.4 minutes; PostgreSQL refreshes them as 1 (`Expiry`)."""
    before = team.clock.at

    team.store(team.a2).put(TRIP, "hotel", HOTEL, ttl=1.4)

    assert team.ends_after(1.4 if isinstance(team.inner, SqliteStore) else 1, before)


@pytest.mark.parametrize("whole_minutes", [False, True], ids=["sqlite", "postgres"])
def test_a_ttl_past_any_time_never_ends_and_one_before_any_ends_at_once(
    whole_minutes: bool,
) -> None:
    expiry = Expiry(supported=True, whole_minutes=whole_minutes)
    at = T0 + timedelta(microseconds=500)

    def end(ttl: float) -> datetime | None:
        return expiry.end(PutOp(TRIP, "hotel", HOTEL, ttl=ttl), at)

    assert [end(math.inf), end(1e15)] == [None, None]
    assert [end(-math.inf), end(-1e15)] == [T0, T0]


@pytest.mark.parametrize("ttl", ["soon", math.nan, [10]])
def test_a_ttl_that_is_no_number_is_refused(ttl: Any) -> None:
    op = PutOp(TRIP, "hotel", HOTEL, ttl=ttl)

    with pytest.raises(InvalidInput, match="put 'trip/hotel': ttl must be a number of minutes"):
        Expiry(supported=True).end(op, T0)


def test_a_value_swept_as_it_would_start_is_refused() -> None:
    end = T0 + 10 * MINUTE
    draft = ItemDraft(id="h", text="Riverside Hotel is booked.", validity=Validity(valid_from=end))

    with pytest.raises(InvalidInput, match=r"ttl ends .* before its readmit valid_from"):
        ending(draft, end, "put 'trip/hotel'")


def test_a_new_value_that_landed_before_the_store_failed_keeps_its_own_end(
    landing: tuple[Team, FailingSqliteStore],
) -> None:
    """The store holds the new value: readmit keeps the put as it was, its TTL's end with it
    (a later end than the version before's)."""
    team, inner = landing
    s2 = team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL, ttl=10)

    inner.landing = True
    before = team.clock.at
    with pytest.raises(OSError, match="connection lost"):
        s2.batch([PutOp(TRIP, "hotel", {"text": "Sunrise Hotel is booked."}, ttl=600)])

    assert team.current().text == '"trip/hotel" = {"text": "Sunrise Hotel is booked."}'
    assert team.ends_after(600, before)


@pytest.mark.parametrize("ttl", [None, "same end"])
def test_a_failed_put_of_the_same_value_that_ends_no_later_changes_nothing(
    landing: tuple[Team, FailingSqliteStore], ttl: str | None
) -> None:
    """Whether it landed or not, readmit's version holds: it is neither revoked nor put again
    (what rests on it stays)."""
    team, inner = landing
    s2 = team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL, ttl=None if ttl is None else 10)
    kept, end = team.current(), team.current().validity.valid_to
    minutes: float | None = None
    if ttl is not None:  # put a minute later for a minute less: the same end
        assert end is not None
        team.clock.at += timedelta(seconds=59)
        minutes = (end - (team.clock.at + timedelta(seconds=1))) / MINUTE

    inner.landing = True
    with pytest.raises(OSError, match="connection lost"):
        s2.batch([PutOp(TRIP, "hotel", HOTEL, ttl=minutes)])

    assert team.current().validity.valid_to == end
    assert team.current().id != kept.id  # the put's own version
    assert [type(r.event) for r in team.readmit.events("trip")] == [Assert, Assert]  # no undo


def test_a_value_restored_without_its_annotations_keeps_its_end(
    landing: tuple[Team, FailingSqliteStore],
) -> None:
    """Its premise deleted since, the value the store still holds is asserted again without
    its annotations (they no longer resolve), valid no longer than its TTL."""
    team, inner = landing
    s2 = team.store(team.a2)
    s2.put(TRIP, "flight", {"text": "Flight LH 400."}, ttl=None)
    needs = {**HOTEL, "_readmit": {"depends_on": [{"path": ["trip", "flight"]}]}}
    s2.put(TRIP, "hotel", needs, ttl=10)
    end = team.current().validity.valid_to
    assert end is not None
    s2.delete(TRIP, "flight")

    inner.failing = True
    with pytest.raises(OSError, match="disk full"):
        s2.batch([PutOp(TRIP, "hotel", {"text": "Sunrise Hotel is booked."})])

    restored = team.current()
    assert restored.text.startswith('"trip/hotel" = {"text": "Riverside Hotel is booked."')
    assert restored.depends_on == frozenset()
    assert restored.validity.valid_to == end
