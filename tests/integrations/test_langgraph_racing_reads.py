"""A teammate's write that lands while a returned agent's read is at the inner store.

readmit records a write before the inner store gets it, so a read that checked the
log before the record and reached the inner store after the write would show a value
no view of the reader judged. Each test lands a teammate's overwrite in that window.
"""

import asyncio
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, Op, PutOp, Result, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from builders import KEY
from integrations.stores import Hooked
from readmit.events import Assert, ItemDraft
from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.langgraph.keys import identity, item_key, render, same_times, says
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store

TRIP = ("trip",)
SUNRISE = {"text": "Sunrise Hotel is booked."}
RIVERSIDE = {"text": "Riverside Hotel is booked."}


class Racing(InMemoryStore):
    """An ``InMemoryStore`` that runs ``meanwhile`` once, as its next read starts."""

    def __init__(self) -> None:
        super().__init__()
        self.meanwhile: Callable[[], None] | None = None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        meanwhile, self.meanwhile = self.meanwhile, None
        if meanwhile is not None:
            meanwhile()
        return super().batch(listed)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)


@pytest.fixture
def readmit(tmp_path: Path) -> Iterator[SqlStore]:
    store = open_store(f"sqlite:///{tmp_path}/readmit.db")
    agents = [Agent(id=a, principal="family", role="planner") for a in ("a1", "a2")]
    store.create_workspace("trip", agents)
    yield store
    store.close()


def racing(readmit: SqlStore, *more: tuple[str, dict[str, str]]) -> tuple[Racing, ReadmitStore]:
    """a2 books Sunrise (and writes ``more`` paths); a1 departs and returns with it admitted.

    a2's overwrite of the booking is to land as a1's next read starts.
    """
    at = [datetime(2026, 5, 1, 8, tzinfo=UTC)]

    def tick() -> datetime:
        at[0] += timedelta(seconds=1)
        return at[0]

    a1, a2 = (Member(readmit, "trip", a, HmacSha256Signer(KEY), clock=tick) for a in ("a1", "a2"))
    inner = Racing()
    s1, s2 = ReadmitStore(inner, a1), ReadmitStore(inner, a2)
    s2.put(TRIP, "hotel", SUNRISE)
    for key, value in more:
        s2.put(TRIP, key, value)
    a1.depart()
    arrive(a1)
    hotel = s1.get(TRIP, "hotel")
    assert hotel is not None
    assert hotel.value == SUNRISE
    inner.meanwhile = lambda: s2.put(TRIP, "hotel", RIVERSIDE)
    return inner, s1


READS: dict[str, Callable[[ReadmitStore], object]] = {
    "get": lambda s: s.get(TRIP, "hotel"),
    "search": lambda s: s.search(TRIP),
    "list_namespaces": lambda s: s.list_namespaces(),
    "batch": lambda s: s.batch([GetOp(TRIP, "hotel"), SearchOp(TRIP)]),
    "aget": lambda s: asyncio.run(s.aget(TRIP, "hotel")),
    "asearch": lambda s: asyncio.run(s.asearch(TRIP)),
    "alist_namespaces": lambda s: asyncio.run(s.alist_namespaces()),
    "abatch": lambda s: asyncio.run(s.abatch([GetOp(TRIP, "hotel"), SearchOp(TRIP)])),
}
NOTHING: dict[str, object] = {"get": None, "aget": None, "batch": [None, []], "abatch": [None, []]}


@pytest.mark.parametrize("read", READS)
def test_a_read_does_not_show_an_overwrite_that_landed_while_it_read(
    readmit: SqlStore, read: str
) -> None:
    inner, s1 = racing(readmit)

    assert READS[read](s1) == NOTHING.get(read, [])
    assert inner.meanwhile is None  # the overwrite did land during the read
    landed = inner.get(TRIP, "hotel")
    assert landed is not None
    assert landed.value == RIVERSIDE


@pytest.mark.parametrize("asynchronous", [False, True], ids=["search", "asearch"])
def test_a_page_that_raced_an_overwrite_is_read_again_to_its_limit(
    readmit: SqlStore, asynchronous: bool
) -> None:
    """Filtered again, the page lost the overwritten hotel and came back one short, though
    another admitted value was there to fill it: a caller paging by ``limit`` stopped."""
    train, taxi = {"text": "The 9:00 train."}, {"text": "A taxi at 8."}
    inner, s1 = racing(readmit, ("train", train), ("taxi", taxi))

    found = asyncio.run(s1.asearch(TRIP, limit=2)) if asynchronous else s1.search(TRIP, limit=2)

    assert inner.meanwhile is None  # the overwrite did land during the read
    assert [i.key for i in found] == ["train", "taxi"]


@pytest.mark.parametrize("read", ["list_namespaces", "alist_namespaces"])
def test_a_listing_cut_at_a_depth_keeps_its_cut_namespaces_when_filtered_again(
    readmit: SqlStore, read: str
) -> None:
    """Filtered again after the overwrite, the listing is still cut at its ``max_depth``:
    ('trip',) leads to a1's own notes, though the value stored right there is hidden."""
    inner, s1 = racing(readmit)
    overwrite, inner.meanwhile = inner.meanwhile, None  # not during a1's own write
    s1.put((*TRIP, "notes"), "n1", {"text": "Check in after three."})
    inner.meanwhile = overwrite

    if read == "list_namespaces":
        listed = s1.list_namespaces(max_depth=1)
    else:
        listed = asyncio.run(s1.alist_namespaces(max_depth=1))

    assert inner.meanwhile is None  # the overwrite did land during the read
    assert listed == [TRIP]


def two_agents(
    readmit: SqlStore, inner: InMemoryStore
) -> tuple[Member, ReadmitStore, ReadmitStore]:
    """a1's member and each agent's store over ``inner``; a2 books Sunrise, a1 departs."""
    a1, a2 = (Member(readmit, "trip", a, HmacSha256Signer(KEY)) for a in ("a1", "a2"))
    s1, s2 = ReadmitStore(inner, a1), ReadmitStore(inner, a2)
    s2.put(TRIP, "hotel", SUNRISE)
    a1.depart()
    return a1, s1, s2


@pytest.mark.parametrize("read", ["get", "search"])
def test_a_value_its_return_judged_superseded_is_not_shown_while_the_newer_write_lands(
    readmit: SqlStore, read: str
) -> None:
    """a2's overwrite is recorded and its inner write not landed when a1 returns: the
    decision admits Riverside and excludes Sunrise, and a1 read Sunrise (a probe)."""

    class Landing(InMemoryStore):
        """Holds a write of Riverside until ``go`` is set, as a slow network would."""

        def __init__(self) -> None:
            super().__init__()
            self.writing, self.go = threading.Event(), threading.Event()

        def batch(self, ops: Iterable[Op]) -> list[Result]:
            listed = list(ops)
            if any(isinstance(o, PutOp) and o.value == RIVERSIDE for o in listed):
                self.writing.set()
                self.go.wait(60)
            return super().batch(listed)

    inner = Landing()
    a1, s1, s2 = two_agents(readmit, inner)
    writer = threading.Thread(target=s2.put, args=(TRIP, "hotel", RIVERSIDE))
    writer.start()
    assert inner.writing.wait(60)
    decided = arrive(a1)
    during = s1.get(TRIP, "hotel") if read == "get" else s1.search(TRIP)
    inner.go.set()
    writer.join(60)
    after = s1.get(TRIP, "hotel")

    assert decided is not None
    assert [e.reason.value for e in decided.decision.exclusions] == ["stale_or_superseded"]
    assert during in (None, [])
    assert after is not None
    assert after.value == RIVERSIDE


def test_a_value_an_older_write_left_at_the_path_is_not_shown(readmit: SqlStore) -> None:
    """Two writers' writes landed in the inner store in the other order than readmit's log:
    the path holds Sunrise for good, which a1's decision excluded as superseded."""
    inner = InMemoryStore()
    a1, s1, s2 = two_agents(readmit, inner)
    s2.put(TRIP, "hotel", RIVERSIDE)
    inner.put(TRIP, "hotel", SUNRISE)  # the older write, landing last
    arrive(a1)

    assert s1.get(TRIP, "hotel") is None
    assert s1.search(TRIP) == []
    inner.put(TRIP, "hotel", RIVERSIDE)  # what readmit holds, landed at last
    found = s1.get(TRIP, "hotel")
    assert found is not None
    assert found.value == RIVERSIDE


def test_a_value_written_around_readmit_that_is_no_json_is_not_shown(readmit: SqlStore) -> None:
    """Rendering it to compare raised json's TypeError out of the read."""
    inner = InMemoryStore()
    a1, s1, _ = two_agents(readmit, inner)
    arrive(a1)
    inner.put(TRIP, "hotel", {1: "a", "text": "Sunrise Hotel is booked."})  # type: ignore[dict-item]

    assert s1.get(TRIP, "hotel") is None
    assert s1.search(TRIP) == []


class Colour(Enum):
    RED = "red"


@dataclass
class Room:
    number: int
    floor: int


@dataclass
class Booking:
    hotel: str
    _ref: str = "internal"


AS_STORED = {
    "a time": {"when": datetime(2026, 5, 1, 8, 30, tzinfo=UTC)},
    "a time with microseconds": {"when": datetime(2026, 5, 1, 8, 30, 0, 5, tzinfo=UTC)},
    "a day": {"day": date(2026, 5, 1)},
    "an enum": {"colour": Colour.RED},
    "a dataclass": {"room": Room(12, 1)},
    "a uuid": {"ref": uuid.UUID(int=7)},
    "a time whose offset has seconds": {  # orjson writes +00:20, and +12:60 for 12:59:33
        "when": datetime(1900, 1, 1, 12, tzinfo=timezone(timedelta(minutes=19, seconds=32))),
        "far": datetime(2026, 5, 1, tzinfo=timezone(-timedelta(hours=12, seconds=3573))),
    },
    "a dataclass with a private field": {"booking": Booking("Lakeside")},  # orjson skips it
}


@pytest.mark.parametrize("value", AS_STORED.values(), ids=AS_STORED.keys())
def test_an_admitted_value_a_json_store_hands_back_is_shown(
    readmit: SqlStore, tmp_path: Path, value: dict[str, Any]
) -> None:
    """``SqliteStore`` writes it as orjson does (a time in ISO 8601, an enum as its value):
    rendered with ``str`` it no longer said the admitted text, and was hidden (a review)."""
    connection = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
    inner = SqliteStore(connection)
    inner.setup()
    a1, a2 = (Member(readmit, "trip", a, HmacSha256Signer(KEY)) for a in ("a1", "a2"))
    ReadmitStore(inner, a2).put(TRIP, "hotel", value)
    a1.depart()
    arrive(a1)

    found = ReadmitStore(inner, a1).get(TRIP, "hotel")
    connection.close()

    assert found is not None
    assert render(TRIP, "hotel", found.value) == render(TRIP, "hotel", value)


def test_a_time_rendered_by_its_str_before_still_says_the_same() -> None:
    """Items written before times were rendered in ISO 8601 hold ``str``'s space."""
    earlier = '"trip/hotel" = {"when": "2026-05-01 08:30:00+00:00"}'
    read = render(TRIP, "hotel", {"when": "2026-05-01T08:30:00+00:00"})

    assert same_times(read, earlier)
    assert not same_times(render(TRIP, "hotel", {"when": "2026-05-02T08:30:00+00:00"}), earlier)


def test_a_number_a_json_store_hands_back_in_decimal_still_says_the_same() -> None:
    """``jsonb`` keeps numbers in decimal: 1e16 comes back as an integer, -0.0 as 0.0."""
    said = render(TRIP, "n", {"n": 1e16, "z": -0.0, "big": [0.5, 1e300]})

    assert says(TRIP, "n", {"n": 10**16, "z": 0.0, "big": [0.5, 10**300]}, [said])
    for other in (
        {"n": 10**16 + 1, "z": 0.0, "big": [0.5, 10**300]},  # one float, not one decimal
        {"n": 10**16, "z": 0.0, "big": [0.5]},
        {"n": 10**16, "z": 0.0, "big": [0.5, 10**300], "more": 1},
        {"n": "1e16", "z": 0.0, "big": [0.5, 10**300]},
    ):
        assert not says(TRIP, "n", other, [said])
    assert not says(TRIP, "n", {"on": True}, [render(TRIP, "n", {"on": 1})])
    assert not says(("other",), "n", {"n": 10**16}, [render(TRIP, "n", {"n": 1e16})])


def test_the_agents_write_through_its_other_store_is_not_shown_before_it_lands(
    readmit: SqlStore,
) -> None:
    """Two ReadmitStores of a1 over one inner store: the one that did not write met the
    write in the log and showed the path while it still held a2's value (a review)."""
    inner = Racing()
    a1, s1, s2 = two_agents(readmit, inner)
    arrive(a1)
    elsewhere = ReadmitStore(inner, a1)
    s2.put(TRIP, "hotel", RIVERSIDE)
    assert s1.get(TRIP, "hotel") is None
    mine = {"text": "a1 booked the Lakeside instead."}
    seen: list[object] = []
    inner.meanwhile = lambda: seen.append(s1.get(TRIP, "hotel"))

    elsewhere.put(TRIP, "hotel", mine)

    assert seen == [None]  # recorded, not landed: the path held a2's value
    found = s1.get(TRIP, "hotel")
    assert found is not None
    assert found.value == mine


def test_the_agents_write_whose_landing_is_told_after_its_newer_ones_is_still_its_own(
    readmit: SqlStore,
) -> None:
    """Two of a1's writes of one path, both met in the log while in flight: the older lands
    first and is told landed after the newer one. The path holds the newer value, which a
    lens keeping one text a path hid."""

    inner = Hooked()
    a1, s1, _ = two_agents(readmit, inner)
    arrive(a1)
    older, newer = {"text": "Lakeside, two nights."}, {"text": "Lakeside, three nights."}
    inner.hooks = [
        (False, lambda: s1.put(TRIP, "hotel", newer)),  # the older landed, not yet told
        (True, lambda: s1.get(TRIP, "hotel")),  # the lens meets both writes in the log
    ]

    s1.put(TRIP, "hotel", older)

    assert inner.hooks == []
    found = s1.get(TRIP, "hotel")
    assert found is not None
    assert found.value == newer


class Tier(Enum):
    GOLD = "gold"


def test_a_value_an_older_readmit_rendered_by_str_is_shown_where_the_store_keeps_it(
    readmit: SqlStore,
) -> None:
    """Its item says the enum by its ``str`` (older readmits did); ``InMemoryStore`` keeps
    the enum itself, which rendered as an older readmit did says the admitted text."""
    inner = InMemoryStore()
    a1, _, _ = two_agents(readmit, inner)
    older = '"trip/tier" = {"level": "Tier.GOLD"}'
    stated = ItemDraft(id="lg-old", text=older, key=item_key(identity(TRIP, "tier")))
    a1.record([Assert(id="put-old", at=a1.clock(), author="a1", item=stated)])
    inner.put(TRIP, "tier", {"level": Tier.GOLD})
    a1.depart()
    arrive(a1)

    found = ReadmitStore(inner, a1).get(TRIP, "tier")

    assert found is not None
    assert found.value == {"level": Tier.GOLD}


def test_a_value_replaced_before_the_departure_that_landed_last_is_not_shown(
    readmit: SqlStore,
) -> None:
    """The version left at the path was replaced before a1 departed, so it is in neither C
    nor Δ: a lens that hid only those showed it (a review)."""
    inner = InMemoryStore()
    a1, a2 = (Member(readmit, "trip", a, HmacSha256Signer(KEY)) for a in ("a1", "a2"))
    s1, s2 = ReadmitStore(inner, a1), ReadmitStore(inner, a2)
    s2.put(TRIP, "hotel", RIVERSIDE)
    s2.put(TRIP, "hotel", {"text": "The Ritz is booked."})
    inner.put(TRIP, "hotel", RIVERSIDE)  # the older write, landing last
    a1.depart()
    arrive(a1)

    assert s1.get(TRIP, "hotel") is None
    assert s1.search(TRIP) == []
