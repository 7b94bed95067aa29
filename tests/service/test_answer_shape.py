"""A return's answer is `AgentDecisionOut` exactly: it validates against that shape, and its
JSON is byte for byte the JSON of its validated copy (every key in the shape's order).

`Service.return_` does not validate its own answer again
(`readmit.service.copies.answer`): these tests keep it honest, for each kind of
decision the travel case makes (blocked, with missing requirements and an unreadable
supporter; issued, with withheld and readmitted memories; an item the agent may not
read) and for a busy workspace, whose answer lists hundreds of exclusions twice.
"""

from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from readmit.examples.travel import travel_scenario
from readmit.service.copies import decision_json
from readmit.service.reading import Caller
from readmit.store import SqlStore
from readmit.wire.outbound import AgentDecisionOut
from servicekit import Team, make_team, play

SHAPE: TypeAdapter[AgentDecisionOut] = TypeAdapter(AgentDecisionOut)


def validated_json(answer: bytes) -> bytes:
    """``answer`` validated against `AgentDecisionOut` (raising if it is not one), as JSON."""
    return SHAPE.dump_json(SHAPE.validate_json(answer))


@pytest.mark.parametrize("supported", [False, True], ids=["plain", "unreadable-supporter"])
def test_every_travel_answer_is_its_own_validated_json(
    client: httpx.Client, team: Team, supported: bool
) -> None:
    scenario = travel_scenario()
    if supported:  # the agency's note, unreadable to A1, would cover what A1's return lacks
        note = next(e for e in scenario["events"] if e.get("item", {}).get("id") == "n1")
        note["item"]["supports"] = ["d_p"]

    answers = play(client, team, scenario)

    blocked, issued = (a.json() for a in answers)
    assert (blocked["outcome"], issued["outcome"]) == ("blocked", "issued")
    assert blocked["missing"]
    assert issued["readmitted"]
    assert issued["withheld_memories"]
    for answer in answers:
        assert answer.content == validated_json(answer.content)


def event(agent: str, n: int, readers: object) -> dict[str, Any]:
    item = {"id": f"i{n}", "text": f"{agent} runs build {n}.", "key": f"k{n % 3}"}
    return {"op": "assert", "author": agent, "item": {**item, "readers": {"principals": readers}}}


def test_a_busy_workspaces_answer_is_its_own_validated_json(store: SqlStore) -> None:
    team = make_team(store)
    service = team.service
    callers: dict[str, Caller] = {a: service.authenticate(k) for a, k in team.keys.items()}
    writers: dict[str, object] = {"A2": "*", "A3": "*", "X1": ["agency"]}  # unreadable to A1
    for n in range(12):
        for agent, readers in writers.items():
            service.record(callers[agent], [event(agent, n, readers)])
    service.depart(callers["A1"])
    for n in range(12, 18):
        for agent, readers in writers.items():
            service.record(callers[agent], [event(agent, n, readers)])

    answer = service.return_(callers["A1"], "ops", "p")

    assert len(answer["excluded"]) > 10  # the superseded builds, A1's own to see
    assert answer["view"] is not None
    assert answer["view"]["excluded"] == answer["excluded"]
    assert store.decision(store.decisions("trip", "A1")[0].id, "trip")["hidden"]  # X1's
    assert decision_json(answer) == validated_json(decision_json(answer))
