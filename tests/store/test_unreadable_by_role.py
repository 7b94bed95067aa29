"""An item's readers are principals and roles: an item of the agent's own principal for
another role is one it may not read, by id and by key."""

from datetime import UTC, datetime

import pytest

from readmit.events import Assert, ItemDraft
from readmit.model import Agent
from readmit.store import WorkStateStore

T0 = datetime(2026, 5, 1, 9, tzinfo=UTC)
AGENTS = [
    Agent(id="A1", principal="family", role="itinerary"),
    Agent(id="A2", principal="family", role="booking"),
]


@pytest.fixture
def ws(store: WorkStateStore) -> WorkStateStore:
    store.create_workspace("ws", AGENTS)
    booking = ItemDraft(id="b1", text="Booked.", key="k1", roles=frozenset({"booking"}))
    everyone = ItemDraft(id="e1", text="Planned.", key="k2")
    store.append(
        "ws",
        [Assert(id=f"e{n}", at=T0, author="A2", item=d) for n, d in enumerate([booking, everyone])],
    )
    return store


def test_a_key_held_by_an_item_for_another_role_is_one_the_agent_may_not_read(
    ws: WorkStateStore,
) -> None:
    assert ws.unreadable_keys("ws", "A1", ["k1", "k2"]) == {"k1"}
    assert ws.unreadable_keys("ws", "A2", ["k1", "k2"]) == set()


def test_an_item_for_another_role_is_one_the_agent_may_not_read(ws: WorkStateStore) -> None:
    assert ws.unreadable("ws", "A1", ["b1", "e1"]) == {"b1"}
    assert ws.unreadable("ws", "A2", ["b1", "e1"]) == set()
