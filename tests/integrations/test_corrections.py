"""What a memory layer owes readmit is recorded before the next record, departure or return."""

import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from builders import KEY
from readmit.admission.decision import Issued
from readmit.errors import StoreError
from readmit.events import Assert, ItemDraft
from readmit.integrations.corrections import owe, owing, settle
from readmit.integrations.team import Member, new_id
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Member, Member]]:
    store: WorkStateStore = open_store(f"sqlite:///{tmp_path}/readmit.db")
    store.create_workspace("trip", [Agent(id=a, principal="team", role="planner") for a in "ab"])
    signer = HmacSha256Signer(KEY)
    yield Member(store, "trip", "a", signer), Member(store, "trip", "b", signer)
    store.close()


def state(member: Member, text: str) -> str:
    item = ItemDraft(id=new_id("fact"), text=text)
    member.record([Assert(id=new_id("a"), at=member.clock(), author=member.agent, item=item)])
    return item.id


def admitted_texts(member: Member) -> list[str]:
    decision = member.return_().decision
    assert isinstance(decision, Issued)
    return sorted(i.text for i in decision.items)


def test_a_return_records_what_is_owed_before_it_decides(team: tuple[Member, Member]) -> None:
    a, _ = team
    hotel = state(a, "The hotel is the Hilton.")
    state(a, "Dinner at 8.")
    a.depart()
    owe(a.store, "the hotel", partial(a.revoke, [hotel], "the layer never got it"))
    assert admitted_texts(a) == ["Dinner at 8."]
    assert owing(a.store) == []


def test_a_correction_that_fails_refuses_the_return_and_stays_owed_in_order(
    team: tuple[Member, Member],
) -> None:
    a, b = team
    hotel, dinner = state(a, "The hotel is the Hilton."), state(a, "Dinner at 8.")
    a.depart()
    down = True

    def undo_hotel() -> None:
        if down:
            raise StoreError("SQLite: database is locked")
        a.revoke([hotel], "undone")

    owe(a.store, "the hotel", undo_hotel)
    owe(a.store, "dinner", partial(a.revoke, [dinner], "undone"))
    for refused in (a.return_, partial(b.record, []), b.depart, b.visible):
        with pytest.raises(StoreError) as failed:
            refused()
        assert (
            "readmit still holds what a memory layer's store does not (the hotel)"
            in (failed.value.__notes__[-1])
        )
    assert a.latest is None
    assert owing(a.store) == ["the hotel", "dinner"]
    down = False
    assert admitted_texts(a) == []
    assert owing(a.store) == []


def test_a_record_on_another_thread_waits_for_the_correction(
    team: tuple[Member, Member],
) -> None:
    """Recorded meanwhile, a teammate's event would come before the correction it follows."""
    a, b = team
    hotel = state(a, "The hotel is the Hilton.")
    inside, go = threading.Event(), threading.Event()

    def undo() -> None:
        inside.set()
        assert go.wait(30)
        a.revoke([hotel], "undone")

    owe(a.store, "the hotel", undo)
    settling = threading.Thread(target=settle, args=(a.store,))
    settling.start()
    assert inside.wait(30)
    beside = threading.Thread(target=state, args=(b, "The hotel is the Ritz."))
    beside.start()
    beside.join(0.2)
    assert beside.is_alive()  # waiting for the correction
    go.set()
    settling.join(30)
    beside.join(30)
    ops = [(r.event.op, r.event.author) for r in a.store.events("trip")]
    assert ops == [("assert", "a"), ("revoke", "a"), ("assert", "b")]
