"""The portability study states an item's annotations through each integration's own channel."""

from datetime import UTC, datetime
from typing import Any

import pytest

from readmit.bench.backends.study import make
from readmit.bench.backends.team import Clock, team
from readmit.bench.history import START, History
from readmit.events import Assert, ItemDraft
from readmit.scenario import load_scenario

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


def written(backend: str) -> tuple[dict[str, ItemDraft], dict[str, str], dict[str, Any]]:
    """Two items through ``backend``: what readmit recorded, the ids, and the stored channel."""
    h = History("channels", [("A0", "acme", "planner"), ("T1", "acme", "member")])
    h.item(
        "T1",
        "h1",
        "Riverside Hotel is booked.",
        key="hotel",
        kind="constraint",
        supports=["d_h"],
        readers={"roles": ["planner", "member"]},
        valid_to="2027-01-01T00:00:00Z",
    )
    h.item("T1", "p1", "Pickup at 8:00 from Riverside.", depends_on=["h1"], unconfirmed=True)
    scenario = load_scenario(h.scenario())
    clock = Clock(START)
    members = team(scenario, None, clock)
    store = make(backend, members)
    try:
        for step in scenario.steps:
            clock.at = step.at
            assert isinstance(step, Assert)
            store.put(step)
        events = members["T1"].store.events(scenario.workspace)
        recorded = {r.event.item.id: r.event.item for r in events if isinstance(r.event, Assert)}
        ids = dict(members["T1"].ids.of)
        if backend == "langgraph":
            got = store.inner.get(("episode",), "hotel")  # type: ignore[attr-defined]
            channel = got.value["_readmit"]
        else:
            memory = ids["h1"].removeprefix("mem0-").rsplit("-", 1)[0]
            channel = store.inner.get(memory)["metadata"]["_readmit"]  # type: ignore[attr-defined]
    finally:
        store.close()
    return recorded, ids, channel


@pytest.mark.parametrize("backend", ["langgraph", "mem0"])
def test_the_study_writes_annotations_through_the_integrations_channel(backend: str) -> None:
    recorded, ids, channel = written(backend)

    hotel, pickup = recorded[ids["h1"]], recorded[ids["p1"]]
    assert ids["h1"] != "h1"  # the integration named the item, not the study
    assert channel["supports"] == ["d_h"]
    assert (hotel.supports, str(hotel.kind), hotel.roles) == (
        frozenset({"d_h"}),
        "constraint",
        frozenset({"planner", "member"}),
    )
    assert hotel.validity.valid_to == datetime(2027, 1, 1, tzinfo=UTC)
    assert pickup.depends_on == {ids["h1"]}
    assert pickup.unconfirmed
