"""Writes that land while a memory layer reads the log and what the store says of it.

A layer reads the log's events, then what the store says of them (`News`): the items they
withdrew, the verdicts stored. Writes landing between those reads must not be taken for
what the events did: an item stated and withdrawn after the events read was put out
before the layer met it, then served as the agent's own (a review).
"""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from integrations.conftest import team
from integrations.stores import FailingStore
from readmit.admission.decision import Issued
from readmit.events import Assert, ItemDraft
from readmit.integrations.following import Following
from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.team import Member, removals

TRIP = ("trip",)


@pytest.fixture
def members(tmp_path: Path) -> Iterator[dict[str, Member]]:
    """a1 and a2 of the family, x1 of the agency."""
    yield from team(tmp_path / "r.db", [("a1", "family"), ("a2", "family"), ("x1", "agency")])


def _draft(member: Member, item_id: str, text: str, **fields: object) -> None:
    item = ItemDraft(id=item_id, text=text, **fields)  # type: ignore[arg-type]
    member.record([Assert(id=f"e-{item_id}", at=member.clock(), author=member.agent, item=item)])


def _after_the_events(store: Any, between: Callable[[], object]) -> None:
    """Run ``between`` once, just after the next read of the log's events."""
    real, fired = store.events, list[bool]()

    def hooked(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        if not fired:
            fired.append(True)
            between()
        return found

    store.events = hooked


def test_the_agents_own_item_stated_and_revoked_after_the_events_read_is_named(
    members: dict[str, Member],
) -> None:
    a1, a2 = members["a1"], members["a2"]
    a1.depart()
    following = Following(a1.return_())
    following.withdrawn(a1)
    _draft(a2, "k", "The car is a Fiat.", key="car")  # a keyed statement: withdrawals read

    def race() -> None:
        _draft(a1, "w", "Gate 4 at 9:00.")
        a2.revoke(["w"], "the gate changed")

    _after_the_events(a1.store, race)
    first = following.withdrawn(a1)
    second = following.withdrawn(a1)

    assert [(r.item, r.reason) for r in [*first, *second]] == [("w", "revoked")]
    a1.depart()
    decision = a1.return_().decision
    assert isinstance(decision, Issued)
    assert "w" not in {i.id for i in decision.items}  # as the next return says


def test_an_item_of_c_revoked_after_the_events_read_keeps_its_reason(
    members: dict[str, Member],
) -> None:
    a1, a2 = members["a1"], members["a2"]
    _draft(a2, "h", "Sunrise Hotel is booked.")
    a1.depart()
    following = Following(a1.return_())
    following.withdrawn(a1)
    _draft(a2, "k", "The car is a Fiat.", key="car")
    _after_the_events(a1.store, lambda: a2.revoke(["h"], "it fell through"))

    got = [*following.withdrawn(a1), *following.withdrawn(a1)]

    assert [(r.item, r.reason, r.detail) for r in got] == [("h", "revoked", "it fell through")]


def test_an_item_of_c_on_a_chain_revoked_after_the_events_read_keeps_its_reason(
    members: dict[str, Member],
) -> None:
    """The agency's note rests on a1's hotel; x1 states a taxi on the note, and the layer
    asks the store for the note's chain, which holds the hotel (a review)."""
    a1, a2, x1 = members["a1"], members["a2"], members["x1"]
    everyone = frozenset({"*"})
    _draft(a2, "h", "Sunrise Hotel is booked.", principals=everyone)
    _draft(x1, "n", "Agency note on the hotel.", depends_on={"h"})
    a1.depart()
    following = Following(a1.return_())
    following.withdrawn(a1)
    _draft(x1, "t", "Taxi for the agency note.", principals=everyone, depends_on={"n"})
    _after_the_events(a1.store, lambda: a2.revoke(["h"], "it fell through"))

    got = [*following.withdrawn(a1), *following.withdrawn(a1)]

    assert sorted((r.item, r.reason, r.detail) for r in got) == [
        ("h", "revoked", "it fell through"),
        ("t", "premise_invalidated", ""),
    ]


def test_an_item_of_c_on_a_chain_found_stale_after_the_events_read_keeps_its_reason(
    members: dict[str, Member],
) -> None:
    a1, a2, x1 = members["a1"], members["a2"], members["x1"]
    everyone = frozenset({"*"})
    _draft(a2, "h", "Sunrise Hotel is booked.", principals=everyone)
    _draft(a2, "d", "Dinner at Sunrise Hotel at eight.", principals=everyone)
    _draft(x1, "n", "Agency note on the dinner.", depends_on={"d"})
    a2.depart()
    a1.depart()
    following = Following(a1.return_())
    following.withdrawn(a1)
    _draft(x1, "t", "Taxi for the agency note.", principals=everyone, depends_on={"n"})

    def race() -> None:
        a2.revoke(["h"], "the booking fell through")
        assert removals(a2.return_())["d"].reason == "implicitly_invalidated"  # a verdict

    _after_the_events(a1.store, race)
    got = [*following.withdrawn(a1), *following.withdrawn(a1)]

    assert {r.item: r.reason for r in got}["d"] == "implicitly_invalidated"


def test_a_lens_hides_its_own_write_revoked_after_the_events_read(
    three: dict[str, Member],
) -> None:
    """b revokes a's landed write through readmit; the inner store still holds it."""
    a, b = three["a"], three["b"]
    inner = FailingStore()
    s1, s2 = ReadmitStore(inner, a), ReadmitStore(inner, b)
    a.depart()
    arrive(a)
    assert s1.get(TRIP, "none") is None  # the lens, and its watch
    s2.put(TRIP, "car", {"text": "Fiat"})  # a keyed statement after the return

    def race() -> None:
        s1.put(TRIP, "note", {"text": "Gate 4"})
        w = next(i.id for i in a.visible() if "Gate 4" in i.text)
        b.revoke([w], "gate changed")

    _after_the_events(a.store, race)
    s1.get(TRIP, "car")  # catches up

    assert s1.get(TRIP, "note") is None
    a.depart()
    arrive(a)
    assert s1.get(TRIP, "note") is None  # as the next return says


def test_a_lens_shows_the_value_restored_after_its_failed_write_after_the_events_read(
    three: dict[str, Member],
) -> None:
    """a's overwrite of b's admitted value fails and readmit restores it in a's name."""
    a, b = three["a"], three["b"]
    inner = FailingStore()
    s1, s2 = ReadmitStore(inner, a), ReadmitStore(inner, b)
    s2.put(TRIP, "hotel", {"text": "Sunrise"})
    a.depart()
    arrive(a)
    assert s1.get(TRIP, "hotel") is not None
    s2.put(TRIP, "car", {"text": "Fiat"})

    def race() -> None:
        inner.failing = True
        with pytest.raises(OSError, match="disk full"):
            s1.put(TRIP, "hotel", {"text": "Riverside"})
        inner.failing = False

    _after_the_events(a.store, race)
    s1.get(TRIP, "car")

    assert s1.get(TRIP, "hotel") is not None
    a.depart()
    arrive(a)
    assert s1.get(TRIP, "hotel") is not None  # as the next return says


def test_a_lens_hides_its_own_write_a_verdict_stored_after_the_events_read_covers(
    three: dict[str, Member],
) -> None:
    """a writes a dinner at the Sunrise Hotel and b revokes the hotel; b's return finds
    the dinner stale and stores the verdict, all between a's reads of the log and of the
    verdicts. Read after the events, the verdict named an item a's lens had not met; it
    then met a's write and showed it."""
    a, b = three["a"], three["b"]
    inner = FailingStore()
    s1, s2 = ReadmitStore(inner, a), ReadmitStore(inner, b)
    s2.put(TRIP, "hotel", {"text": "Sunrise Hotel is booked."})
    b.depart()
    a.depart()
    arrive(a)
    assert s1.get(TRIP, "hotel") is not None

    def race() -> None:
        s1.put(TRIP, "dinner", {"text": "Dinner at Sunrise Hotel at eight."})
        hotel = next(i.id for i in b.visible() if "Sunrise Hotel is booked" in i.text)
        b.revoke([hotel], "the booking fell through")
        dinner = next(i.id for i in a.visible() if "Dinner" in i.text)
        assert removals(b.return_())[dinner].reason == "implicitly_invalidated"

    _after_the_events(a.store, race)
    s1.get(TRIP, "none")  # catches up: the race runs here
    s1.get(TRIP, "none")  # and again: the write, the revocation

    assert s1.get(TRIP, "dinner") is None
    a.depart()
    arrive(a)
    assert s1.get(TRIP, "dinner") is None  # as the next return says
