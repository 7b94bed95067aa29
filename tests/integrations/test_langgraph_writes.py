"""`ReadmitStore` writes (annotations, failure order) and view expiry, on real LangGraph stores."""

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from builders import KEY, Ticking
from integrations.stores import FailingStore, Hooked
from readmit.clock import format_time
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import Assert, ItemDraft, ObligationDraft, OpenObligation
from readmit.integrations.langgraph import (
    ReadmitStore,
    ViewExpired,
    ViewWithheld,
    arrive,
    item_key,
    notice,
)
from readmit.integrations.langgraph.admitted import Lens
from readmit.integrations.langgraph.expiry import Expiry
from readmit.integrations.langgraph.keys import identity
from readmit.integrations.langgraph.reconcile import reconcile
from readmit.integrations.langgraph.writes import plan, reads, recorded
from readmit.integrations.team import Member
from readmit.model import Agent, Kind
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store

TRIP = ("trip",)
HOTEL = {"text": "Riverside Hotel is booked."}


@dataclass
class Team:
    readmit: SqlStore
    inner: FailingStore
    a1: Member
    a2: Member
    clock: Ticking = field(default_factory=Ticking)

    def store(self, member: Member, **options: Any) -> ReadmitStore:
        return ReadmitStore(self.inner, member, **options)

    def ops(self) -> list[str]:
        return [r.event.op for r in self.readmit.events("trip")]


def shown(store: BaseStore, key: str) -> object:
    """The value ``store`` shows at ``TRIP``/``key`` (None: it hides the path)."""
    found = store.get(TRIP, key)
    return None if found is None else found.value


def room_booked(team: Team) -> tuple[Hooked, ReadmitStore, ReadmitStore, str]:
    """a2 books a room; a1 returns (its store showing only its own writes while withheld);
    the inner store hooked for writes landing in other orders. The room's item id."""
    team.inner = inner = Hooked()
    s1, s2 = team.store(team.a1, on_withheld="empty"), team.store(team.a2)
    s2.put(TRIP, "room", {"text": "Room A is booked."})
    [room] = [i.id for i in team.a2.visible()]
    team.a1.depart()
    arrive(team.a1)
    return inner, s1, s2, room


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    readmit = open_store(f"sqlite:///{tmp_path}/readmit.db")
    readmit.create_workspace(
        "trip",
        [
            Agent(id="a1", principal="family", role="planner"),
            Agent(id="a2", principal="family", role="booking"),
        ],
    )
    clock, signer = Ticking(), HmacSha256Signer(KEY)
    policy = Policy(view_ttl=timedelta(hours=1))
    a1, a2 = (Member(readmit, "trip", a, signer, clock=clock, policy=policy) for a in ("a1", "a2"))
    yield Team(readmit, FailingStore(), a1, a2, clock)
    readmit.close()


def open_obligation(team: Team, requires: str) -> None:
    """An obligation of a1's role that an item supporting ``requires`` covers."""
    draft = ObligationDraft(
        id="o-hotel",
        text="Keep the hotel booking current.",
        role="planner",
        requires=frozenset({requires}),
        critical=frozenset({requires}),
        frontier_id="f-hotel",
        frontier_text="Hotel booking to confirm.",
    )
    team.a2.record([OpenObligation(id="open", at=team.clock(), author="a2", obligation=draft)])


def test_annotations_in_the_value_are_recorded_and_cover_an_obligation(team: Team) -> None:
    s2 = team.store(team.a2)
    team.a1.depart()
    open_obligation(team, "d-hotel")
    value = {**HOTEL, "_readmit": {"supports": ["d-hotel"], "kind": "constraint"}}

    s2.put(TRIP, "hotel", value)
    decided = arrive(team.a1)

    (item,) = [i for i in team.a2.visible() if i.key == item_key(identity(TRIP, "hotel"))]
    assert (item.supports, item.kind) == (frozenset({"d-hotel"}), Kind.CONSTRAINT)
    assert item.text == '"trip/hotel" = {"text": "Riverside Hotel is booked."}'
    inner = team.inner.get(TRIP, "hotel")
    assert inner is not None
    assert inner.value == value  # the application's value is stored as written
    assert decided is not None
    assert decided.decision.outcome == "issued"
    assert team.store(team.a1).get(TRIP, "hotel") is not None


def test_without_the_annotation_the_same_return_is_withheld(team: Team) -> None:
    team.a1.depart()
    open_obligation(team, "d-hotel")

    team.store(team.a2).put(TRIP, "hotel", HOTEL)
    decided = arrive(team.a1)

    assert decided is not None
    assert decided.decision.outcome == "blocked"


def test_a_premise_named_by_path_invalidates_its_dependent_when_deleted(team: Team) -> None:
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    s1.put(("notes",), "pickup", pickup)
    team.a1.depart()

    s2.delete(TRIP, "hotel")
    decided = arrive(team.a1)

    assert decided is not None
    reasons = {(e["key"], e["reason"]) for e in notice(decided)["excluded"]}
    assert reasons == {("hotel", "revoked"), ("pickup", "premise_invalidated")}
    assert s1.get(("notes",), "pickup") is None
    (fell,) = [e for e in notice(decided)["excluded"] if e["key"] == "pickup"]
    (premise,) = fell["evidence_paths"]  # the detail's lg-… id, named as the value it is
    assert (premise["namespace"], premise["key"]) == (["trip"], "hotel")
    assert premise["item"] in fell["detail"]


def test_a_dependent_whose_premise_fell_before_the_departure_is_named_in_the_notice(
    team: Team,
) -> None:
    """Hidden from reads, it was named nowhere: no decision judges it (a probe)."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    s1.put(("notes",), "pickup", pickup)
    s2.delete(TRIP, "hotel")  # while a1 is still here
    team.a1.depart()

    decided = arrive(team.a1)

    assert decided is not None
    assert s1.get(("notes",), "pickup") is None
    shown = notice(decided)
    assert shown["excluded"] == []
    [left] = shown["left_out"]
    assert (left["namespace"], left["key"], left["reason"]) == (
        ["notes"],
        "pickup",
        "premise_invalidated",
    )
    assert left["detail"] == "a premise it rests on fell before the departure"


@pytest.mark.parametrize("withdraw", ["delete", "overwrite"])
def test_a_value_resting_on_a_path_a_teammate_withdraws_while_present_is_hidden_with_it(
    team: Team, withdraw: str
) -> None:
    """Reads hid only the hotel and served the pickup resting on it until the next
    return, which excludes it as premise_invalidated (a probe)."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    s1.put(("notes",), "pickup", pickup)
    s1.put(("notes",), "tip", {"text": "Tip the driver."})
    team.a1.depart()
    arrive(team.a1)
    assert s1.get(("notes",), "pickup") is not None

    if withdraw == "delete":
        s2.delete(TRIP, "hotel")
    else:
        s2.put(TRIP, "hotel", {"text": "Riverside Hotel is booked."})

    assert s1.get(TRIP, "hotel") is None
    assert s1.get(("notes",), "pickup") is None
    assert [i.key for i in s1.search(("notes",))] == ["tip"]


def test_a_value_resting_on_a_path_the_reads_never_showed_falls_when_it_is_overwritten(
    team: Team,
) -> None:
    """The hotel, written by a2 after a1's return, is not shown to a1 (no view judged
    it); a1's pickup rests on it. a2's overwrite replaced the version the pickup rests
    on, and reads kept serving the pickup, which the next return excludes as
    premise_invalidated (a probe: only a delete, which names its target, hid it)."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    team.a1.depart()
    arrive(team.a1)
    s2.put(TRIP, "hotel", HOTEL)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    s1.put(("notes",), "pickup", pickup)
    assert s1.get(("notes",), "pickup") is not None

    s2.put(TRIP, "hotel", {"text": "Sunrise Hotel is booked."})

    assert s1.get(("notes",), "pickup") is None
    team.a1.depart()  # it leaves the pickup out: its premise fell
    decided = arrive(team.a1)
    assert decided is not None
    assert [(e["key"], e["reason"]) for e in notice(decided)["left_out"]] == [
        ("pickup", "premise_invalidated")
    ]


def test_the_agents_own_overwrite_of_a_premise_hides_a_teammates_value_resting_on_it(
    team: Team,
) -> None:
    """a2's pickup rests on a2's hotel; a1, back, overwrites the hotel. The pickup's
    premise is replaced (the next return excludes it): reads kept serving it to a1,
    where a2's own overwrite hid it (a probe). a1's new hotel is its own: shown."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    s2.put(("notes",), "pickup", pickup)
    team.a1.depart()
    arrive(team.a1)
    assert s1.get(("notes",), "pickup") is not None

    s1.put(TRIP, "hotel", {"text": "Sunrise Hotel is booked."})

    assert s1.get(("notes",), "pickup") is None
    hotel = s1.get(TRIP, "hotel")
    assert hotel is not None
    assert hotel.value == {"text": "Sunrise Hotel is booked."}


def returned_with_a_pickup_on_the_hotel(team: Team) -> tuple[ReadmitStore, ReadmitStore]:
    """a2 books the hotel, a1 notes a pickup resting on it, departs and returns."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    s1.put(TRIP, "pickup", pickup)
    team.a1.depart()
    arrive(team.a1)
    return s1, s2


def test_the_agents_own_newer_value_stands_when_its_older_versions_premise_falls(
    team: Team,
) -> None:
    """The admitted pickup's id stayed at the path after a1's own overwrite, and the
    hotel's fall hid a1's own taxi plan (a review)."""
    s1, s2 = returned_with_a_pickup_on_the_hotel(team)
    s1.put(TRIP, "pickup", {"text": "I will take a taxi at 8:00."})

    s2.put(TRIP, "hotel", {"text": "Riverside Hotel is booked."})

    assert shown(s1, "pickup") == {"text": "I will take a taxi at 8:00."}


def test_a_teammates_hearsay_at_the_premise_hides_the_path_not_what_rests_on_it(
    team: Team,
) -> None:
    """Hearsay replaces nothing in readmit: the next return admits the pickup (a review)."""
    s1, s2 = returned_with_a_pickup_on_the_hotel(team)

    s2.put(TRIP, "hotel", {"text": "I heard it is full.", "_readmit": {"unconfirmed": True}})

    assert s1.get(TRIP, "hotel") is None
    assert s1.get(TRIP, "pickup") is not None


def test_a_value_resting_on_a_fact_outside_langgraph_is_hidden_when_it_is_revoked(
    team: Team,
) -> None:
    """Only premises at a LangGraph path were followed (a review)."""
    s1 = team.store(team.a1)
    team.a2.record(
        [
            Assert(
                id="e-budget",
                at=team.a2.clock(),
                author="a2",
                item=ItemDraft(id="budget", text="The budget allows 4-star.", key="budget"),
            )
        ]
    )
    s1.put(TRIP, "hotel", {"text": "Sunrise (4-star).", "_readmit": {"depends_on": ["budget"]}})
    team.a1.depart()
    arrive(team.a1)
    assert s1.get(TRIP, "hotel") is not None

    team.a2.revoke(["budget"], "The budget was cut.")

    assert s1.get(TRIP, "hotel") is None


def test_a_premise_written_earlier_in_the_same_batch_resolves_to_it(team: Team) -> None:
    s1 = team.store(team.a1)
    needs = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}

    s1.batch([PutOp(TRIP, "hotel", HOTEL), PutOp(("notes",), "pickup", needs)])

    by_key = {i.key: i for i in team.a1.visible()}
    hotel = by_key[item_key(identity(TRIP, "hotel"))]
    assert by_key[item_key(identity(("notes",), "pickup"))].depends_on == {hotel.id}


def test_scope_and_validity_annotations_reach_the_item(team: Team) -> None:
    annotations = {
        "readers": {"roles": ["booking"]},
        "task": "trip",
        "purposes": ["booking"],
        "valid_to": "2026-05-02T00:00:00Z",
        "cites": [],
        "unconfirmed": True,
    }

    team.store(team.a2).put(TRIP, "hotel", {**HOTEL, "_readmit": annotations})

    (item,) = team.a2.visible()
    assert item.scope.roles == {"booking"}
    assert (item.scope.task, item.scope.purposes) == ("trip", frozenset({"booking"}))
    assert item.validity.valid_to == datetime(2026, 5, 2, tzinfo=UTC)
    assert item.receipt is None  # unconfirmed
    assert team.a1.visible() == []  # a planner may not read it


BAD = [
    pytest.param({"supports": "d-hotel"}, "supports: Input should be a valid list", id="type"),
    pytest.param({"colour": "red"}, "colour: unknown field", id="unknown"),
    pytest.param(
        {"supprts": ["d-hotel"]},
        r"supprts: unknown field \(did you mean 'supports'\?\)",
        id="misspelled",
    ),
    pytest.param(
        {"depends_on": [{"memory": "m1"}]}, "a 'memory' reference is not", id="foreign ref"
    ),
    pytest.param(
        {"depends_on": [{"path": ["trip", "nowhere"]}]}, "names no active item", id="dangling"
    ),
    pytest.param(
        {"valid_from": "2026-06-01T00:00:00Z", "valid_to": "2026-05-01T00:00:00Z"},
        "valid_from must be before valid_to",
        id="interval",
    ),
    pytest.param("constraint", "must be a JSON object", id="not an object"),
]


@pytest.mark.parametrize(("annotations", "message"), BAD)
def test_bad_annotations_are_refused_and_nothing_is_written(
    team: Team, annotations: object, message: str
) -> None:
    s2 = team.store(team.a2)

    with pytest.raises(InvalidInput, match=message) as raised:
        s2.batch(
            [
                PutOp(TRIP, "train", {"text": "The 9:30 train."}),
                PutOp(TRIP, "hotel", {**HOTEL, "_readmit": annotations}),
            ]
        )

    assert "put 'trip/hotel'" in str(raised.value)
    assert team.inner.get(TRIP, "train") is None
    assert team.inner.get(TRIP, "hotel") is None
    assert team.ops() == []


def test_a_premise_readmit_does_not_know_reaches_neither_store(team: Team) -> None:
    with pytest.raises(InvalidEvent, match="depends_on names unknown item 'h0'"):
        team.store(team.a2).put(TRIP, "hotel", {**HOTEL, "_readmit": {"depends_on": ["h0"]}})

    assert team.inner.get(TRIP, "hotel") is None
    assert team.ops() == []


def test_a_put_the_inner_store_fails_is_revoked(team: Team) -> None:
    s2 = team.store(team.a2)
    team.inner.failing = True

    with pytest.raises(OSError, match="disk full"):
        s2.put(TRIP, "hotel", HOTEL)

    assert team.ops() == ["assert", "revoke"]
    assert team.a2.visible() == []
    (why,) = [r.event.why for r in team.readmit.events("trip") if r.event.op == "revoke"]
    assert why == "the LangGraph store failed the write (OSError: disk full)"


def test_a_failed_overwrite_leaves_the_old_value_admitted(team: Team) -> None:
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL)
    team.a1.depart()
    team.inner.failing = True

    with pytest.raises(OSError, match="disk full"):
        s2.put(TRIP, "hotel", {"text": "Sunrise Hotel is booked."})
    team.inner.failing = False
    arrive(team.a1)

    assert team.ops() == ["assert", "assert", "revoke", "assert"]
    (item,) = team.a2.visible()
    assert "Riverside" in item.text
    got = s1.get(TRIP, "hotel")
    assert got is not None
    assert got.value == HOTEL


def test_a_failed_delete_leaves_the_value_admitted(team: Team) -> None:
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", {**HOTEL, "_readmit": {"supports": ["d-hotel"]}})
    team.a1.depart()
    team.inner.failing = True

    with pytest.raises(OSError, match="disk full"):
        s2.delete(TRIP, "hotel")
    team.inner.failing = False
    arrive(team.a1)

    assert team.ops() == ["assert", "revoke", "assert"]
    (item,) = team.a2.visible()
    assert item.supports == {"d-hotel"}  # restored from the value, annotations included
    assert s1.get(TRIP, "hotel") is not None


def test_when_the_inner_store_cannot_be_read_back_the_batch_is_revoked(team: Team) -> None:
    s2 = team.store(team.a2)
    team.inner.down = True

    with pytest.raises(OSError, match="disk full"):
        s2.batch([PutOp(TRIP, "hotel", HOTEL), PutOp(TRIP, "train", {"text": "9:30."})])

    assert team.ops() == ["assert", "assert", "revoke", "revoke"]
    assert team.a2.visible() == []


def test_async_writes_reconcile_like_sync_ones(team: Team) -> None:
    s2 = team.store(team.a2)
    team.inner.failing = True

    with pytest.raises(OSError, match="disk full"):
        asyncio.run(s2.aput(TRIP, "hotel", HOTEL))

    assert team.ops() == ["assert", "revoke"]
    assert team.a2.visible() == []


def test_a_view_is_not_served_after_it_expires(team: Team) -> None:
    s1, s2 = team.store(team.a1), team.store(team.a2)
    s2.put(TRIP, "hotel", HOTEL)
    team.a1.depart()
    arrive(team.a1)
    assert s1.get(TRIP, "hotel") is not None

    team.clock.at += timedelta(hours=1)

    with pytest.raises(ViewExpired) as raised:
        s1.get(TRIP, "hotel")
    assert isinstance(raised.value, ViewWithheld)
    assert raised.value.code == "view_expired"
    assert "expired at 2026-05-01T09:00" in str(raised.value)
    with pytest.raises(ViewExpired):
        s1.search(TRIP)
    team.a1.depart()
    arrive(team.a1)
    assert s1.get(TRIP, "hotel") is not None


def test_after_expiry_empty_mode_shows_only_the_agents_own_writes(team: Team) -> None:
    s1 = team.store(team.a1, on_withheld="empty")
    team.store(team.a2).put(TRIP, "hotel", HOTEL)
    team.a1.depart()
    arrive(team.a1)
    s1.put(TRIP, "mine", {"text": "a1 wrote this after returning"})

    team.clock.at += timedelta(hours=2)

    assert s1.get(TRIP, "hotel") is None
    assert [i.key for i in s1.search(TRIP)] == ["mine"]
    assert asyncio.run(s1.aget(TRIP, "hotel")) is None


def test_after_expiry_the_agents_own_write_read_before_is_still_read(team: Team) -> None:
    """The lens that replaces the expired one keeps the texts the agent wrote, which its
    reads compare the path's value with: not only that the agent wrote the path."""
    s1 = team.store(team.a1, on_withheld="empty")
    team.a1.depart()
    arrive(team.a1)
    mine = {"text": "a1 wrote this after returning"}
    s1.put(TRIP, "mine", mine)
    assert s1.get(TRIP, "mine") is not None  # the lens follows the log past the write

    team.clock.at += timedelta(hours=2)

    assert shown(s1, "mine") == mine
    team.inner.put(TRIP, "mine", {"text": "written around readmit"})
    assert s1.get(TRIP, "mine") is None


@pytest.mark.parametrize("met", [False, True], ids=["landing", "met-then-landing"])
def test_the_agents_write_landing_after_its_view_expired_is_read(team: Team, met: bool) -> None:
    """The view expires while the write is at the inner store, and a read meanwhile puts a
    lens of the agent's own writes in place: the landing was shown only to the lens it
    replaced, and the agent's write stayed hidden until its next return."""
    team.inner = inner = Hooked()
    s1 = team.store(team.a1, on_withheld="empty")
    team.a1.depart()
    arrive(team.a1)
    mine = {"text": "a1 wrote this after returning"}
    expired: list[bool] = []

    def expire() -> None:
        if met:  # the lens meets the write in the log before the view expires
            s1.get(TRIP, "other")
        team.clock.at += timedelta(hours=2)
        expired.append(s1.get(TRIP, "other") is None)

    inner.hooks = [(True, expire)]
    s1.put(TRIP, "mine", mine)

    assert expired == [True]
    assert shown(s1, "mine") == mine


def test_the_agents_write_landing_after_its_view_expired_stays_hidden_if_a_teammate_wrote_since(
    team: Team,
) -> None:
    """The lens met the write in the log, then a teammate's later write of the path, and
    hid it: the lens of the agent's own writes that replaces it does not show the landing."""
    team.inner = inner = Hooked()
    s1, s2 = team.store(team.a1, on_withheld="empty"), team.store(team.a2)
    team.a1.depart()
    arrive(team.a1)

    def meanwhile() -> None:
        s1.get(TRIP, "other")  # meets a1's write, in flight
        s2.put(TRIP, "mine", {"text": "a2's, written after a1's"})
        assert s1.get(TRIP, "mine") is None
        team.clock.at += timedelta(hours=2)
        s1.get(TRIP, "other")  # the view expired: a lens of a1's own writes replaces it

    inner.hooks = [(True, meanwhile)]
    s1.put(TRIP, "mine", {"text": "a1's, landing last"})

    assert s1.get(TRIP, "mine") is None
    assert s1.search(TRIP) == []


@pytest.mark.parametrize("how", ["its premise revoked", "its end passed"])
def test_the_agents_write_taken_away_after_its_view_expired_is_not_shown_as_it_lands(
    team: Team, how: str
) -> None:
    """The lens met the write in flight; the view expired; then the write was taken away.
    The lens of the agent's own writes that replaced the expired one knew no item at the
    path, hid nothing, and showed the write as it landed (a review)."""
    inner, s1, _, room = room_booked(team)
    ends = format_time(team.clock.at + timedelta(hours=3))
    held = {"depends_on": [room]} if how == "its premise revoked" else {"valid_to": ends}

    def meanwhile() -> None:
        s1.get(TRIP, "other")  # meets a1's write, in flight
        team.clock.at += timedelta(hours=2)
        s1.get(TRIP, "other")  # the view expired: a lens of a1's own writes replaces it
        if how == "its premise revoked":
            team.a2.revoke([room], "cancelled")
        else:
            team.clock.at += timedelta(hours=2)
        s1.get(TRIP, "other")  # the new lens follows the log and the clock

    inner.hooks = [(True, meanwhile)]
    s1.put(TRIP, "talk", {"text": "The talk is in Room A.", "_readmit": held})

    assert s1.get(TRIP, "talk") is None
    assert s1.search(TRIP) == []


class _Handing:
    """A lens's lock that runs ``then`` once, just after it is next released: another
    thread's turn, made to come at that point."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.then: Callable[[], object] | None = None

    def __enter__(self) -> None:
        self.lock.acquire()

    def __exit__(self, *_: object) -> None:
        self.lock.release()
        then, self.then = self.then, None
        if then is not None:
            then()


def test_a_landing_told_as_the_view_expires_is_not_shown_before_its_start(team: Team) -> None:
    """The lens hid the write as not valid yet; as it was told of the landing, a read in
    another thread put the lens of the agent's own writes in its place, copying what the
    old one had just let go; the landing then reached the new lens, which showed the write
    before its start (a review)."""
    team.inner = inner = Hooked()
    s1 = team.store(team.a1, on_withheld="empty")
    team.a1.depart()
    arrive(team.a1)
    start = format_time(team.clock.at + timedelta(hours=3))
    handing = _Handing()

    def meanwhile() -> None:
        lens = s1._read_lens()
        assert lens is not None
        lens.lock = handing  # type: ignore[assignment]
        assert s1.get(TRIP, "plan") is None  # met in flight, hidden: not valid yet

        def expire() -> None:
            team.clock.at += timedelta(hours=2)
            s1.get(TRIP, "other")

        handing.then = expire

    inner.hooks = [(True, meanwhile)]
    s1.put(TRIP, "plan", {"text": "Ship on Monday.", "_readmit": {"valid_from": start}})

    assert handing.then is None  # the other thread's read came
    assert s1.get(TRIP, "plan") is None


def test_the_agents_write_met_in_flight_by_a_new_returns_lens_is_read_once_it_lands(
    team: Team,
) -> None:
    """The write took its lens, a return was decided, then the write was recorded: the new
    return's lens met it in the log in flight, and its landing was told to the old lens
    alone (a review; hidden until the return after)."""
    team.inner = inner = Hooked()
    s1 = team.store(team.a1, on_withheld="empty")
    team.a1.depart()
    arrive(team.a1)
    s1.get(TRIP, "other")  # the lens the write takes
    record = team.a1.record

    def returned_first(events: Any, own: bool = False) -> Any:
        team.a1.record = record  # type: ignore[method-assign]
        team.a1.depart()
        arrive(team.a1)
        return record(events, own)

    team.a1.record = returned_first  # type: ignore[method-assign]
    inner.hooks = [(True, lambda: s1.get(TRIP, "other"))]  # the new lens meets it in flight
    s1.put(TRIP, "plan", {"text": "Ship on Monday."})

    assert shown(s1, "plan") == {"text": "Ship on Monday."}


def test_a_write_a_return_judged_while_in_flight_is_not_shown_as_it_lands_if_excluded(
    team: Team,
) -> None:
    """Recorded before the return, which left it out (its premise was revoked): the landing
    is told to the new return's lens only for what it met in the log in flight."""
    inner, s1, _, room = room_booked(team)
    s1.get(TRIP, "other")

    def meanwhile() -> None:
        team.a2.revoke([room], "cancelled")
        team.a1.depart()
        arrive(team.a1)
        s1.get(TRIP, "other")  # the new return's lens

    inner.hooks = [(True, meanwhile)]
    s1.put(TRIP, "talk", {"text": "The talk is in Room A.", "_readmit": {"depends_on": [room]}})

    assert s1.get(TRIP, "talk") is None
    assert team.a1.latest is not None
    [left] = notice(team.a1.latest)["left_out"]  # left out at the departure, as fallen
    assert (left["key"], left["reason"]) == ("talk", "premise_invalidated")


def test_two_readers_finding_the_view_expired_at_once_put_one_lens_in_place(team: Team) -> None:
    """Each made a lens of the agent's own writes; the landing of the write in flight was
    told to the second, and the store kept the first, which never showed it (a review)."""
    team.inner = inner = Hooked()
    s1 = team.store(team.a1, on_withheld="empty")
    team.a1.depart()
    arrive(team.a1)
    s1.get(TRIP, "other")
    made: list[Lens] = []

    def meanwhile() -> None:
        old = s1._lens
        assert old is not None
        old.catch_up(team.a1)  # meets the write, in flight
        team.clock.at += timedelta(hours=2)
        made.extend([old.lapsed(), old.lapsed()])  # two readers' threads, at once
        s1._lens = made[0]  # the first reader's assignment lands last

    inner.hooks = [(True, meanwhile)]
    s1.put(TRIP, "plan", {"text": "I will book the train."})

    assert made[0] is made[1]
    assert shown(s1, "plan") == {"text": "I will book the train."}


def test_a_correction_leaves_alone_what_a_later_write_of_the_path_replaced(team: Team) -> None:
    """Concurrent writes of one path, one cancelled: the correction revoked an item the
    next write had replaced, was refused as a whole, and left readmit showing nothing
    while the inner store held the last value (a review)."""
    s2 = team.store(team.a2)
    writes = plan(team.a2, [PutOp(TRIP, "hotel", HOTEL)], Expiry.of(team.inner))
    recorded(team.a2, writes)  # in readmit; its inner write never came
    s2.put(TRIP, "hotel", {"text": "Riverside"})  # a later write of the path, landed

    reconcile(team.a2, writes, team.inner.batch(reads(writes)), OSError("cancelled"))

    [item] = team.a2.visible()
    assert '"Riverside"' in item.text


def test_a_value_resting_on_the_path_it_overwrites_is_refused_naming_the_path(team: Team) -> None:
    """Its premise was resolved to the new version itself, and the writer refused an id
    the user never saw ("depends_on names unknown item 'lg-…'"); nothing is stored."""
    s1 = team.store(team.a1)
    s1.put(TRIP, "plan", {"text": "v1"})
    revised = {"text": "v2", "_readmit": {"depends_on": [{"path": ["trip", "plan"]}]}}

    with pytest.raises(InvalidInput, match=r"put 'trip/plan'.*the path this write replaces"):
        s1.put(TRIP, "plan", revised)

    assert team.ops() == ["assert"]
    plan = s1.get(TRIP, "plan")
    assert plan is not None
    assert plan.value == {"text": "v1"}


def test_reads_read_only_the_withdrawals_since_what_they_last_followed(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every premise ever held was asked about at each read after a keyed write: 30
    rewrites of two values asked about 30 ids, the cost growing with history (a review).
    Now the withdrawals of the events just read, by epoch: none here."""
    s1, s2 = team.store(team.a1), team.store(team.a2)
    team.a1.depart()
    arrive(team.a1)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    for n in range(30):
        s1.put(TRIP, "hotel", {"text": f"Hotel number {n} is booked."})
        s1.put(("notes",), "pickup", pickup)
    assert s1.get(("notes",), "pickup") is not None
    last = team.readmit.events("trip")[-1].epoch
    asked: list[tuple[int, set[str]]] = []
    since = team.readmit.withdrawn_since

    def counted(workspace: str, epoch: int, upto: int | None = None) -> set[str]:
        found = since(workspace, epoch, upto)
        asked.append((epoch, found))
        return found

    monkeypatch.setattr(team.readmit, "withdrawn_since", counted)

    s2.put(TRIP, "train", {"text": "The 9:30 train."})
    assert s1.get(("notes",), "pickup") is not None

    assert asked == [(last, set())]


def test_a_keyed_statement_that_replaces_nothing_leaves_what_rests_on_the_path_shown(
    three: dict[str, Member],
) -> None:
    """c, of another principal, states the hotel's key through readmit: the writer keeps
    b's hotel (c may not read it), and the next return admits the pickup resting on it,
    which reads hid (a review). The hotel's path itself is hidden: c wrote it."""
    a, b, c = three["a"], three["b"], three["c"]
    inner = InMemoryStore()
    sa, sb = ReadmitStore(inner, a), ReadmitStore(inner, b)
    sb.put(TRIP, "hotel", HOTEL)
    pickup = {"text": "Pickup at 8:00.", "_readmit": {"depends_on": [{"path": ["trip", "hotel"]}]}}
    sb.put(("notes",), "pickup", pickup)
    a.depart()
    arrive(a)
    assert sa.get(("notes",), "pickup") is not None

    theirs = ItemDraft(id="c-hotel", text="Ours.", key=item_key(identity(TRIP, "hotel")))
    c.record([Assert(id="c-put", at=c.clock(), author="c", item=theirs)])

    assert sa.get(TRIP, "hotel") is None
    assert sa.get(("notes",), "pickup") is not None
    a.depart()
    again = arrive(a)
    assert again is not None
    assert "pickup" not in {e["key"] for e in notice(again)["excluded"]}


def test_a_value_resting_on_a_chain_outside_the_view_is_hidden_when_its_end_falls(
    three: dict[str, Member],
) -> None:
    """The pickup, which a may read, rests on c's hotel and that on c's contract, both
    for c's eyes only: the contract revoked, reads showed the pickup on, where a fresh
    return excludes it (a review)."""
    a, c = three["a"], three["c"]
    for item_id, text, on in [("q", "Contract Q is signed.", ()), ("p", "Hotel under Q.", ("q",))]:
        theirs = ItemDraft(id=item_id, text=text, key=f"k-{item_id}", depends_on=frozenset(on))
        c.record([Assert(id=f"e-{item_id}", at=c.clock(), author="c", item=theirs)])
    inner = InMemoryStore()
    readers = {"principals": ["team", "other"]}
    on_p = {"text": "Pickup 8:00", "_readmit": {"readers": readers, "depends_on": [{"key": "k-p"}]}}
    ReadmitStore(inner, c).put(TRIP, "pickup", on_p)
    sa = ReadmitStore(inner, a)
    a.depart()
    arrive(a)
    assert sa.get(TRIP, "pickup") is not None

    c.revoke(["q"], "void")

    assert sa.get(TRIP, "pickup") is None
