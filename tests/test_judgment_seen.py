"""What an agent's copy of its decision record says of the return's judgment.

`readmit.report.agent_copy` tells the verifier, the budget, and what the judgment found
that the copy lists: the items it lists ``unscreened``, and the standing and new
invalidations of items the agent may read (the record's ``shown``). The operator's counts
take in what the agent may not read, and what the stage spent is never told.
"""

from typing import Any

from pydantic import TypeAdapter

from builders import logged
from readmit.admission.invalidation.implicit import SPENT, Pair, Verdict
from readmit.replay import replay
from readmit.report import agent_copy
from readmit.scenario import load_scenario
from readmit.store import WorkStateStore
from readmit.testing import FunctionVerifier
from readmit.wire.outbound import AgentJudgmentOut
from trip import SIGNER, at, depart, ret

BUDGET = {"calls": 8, "tokens": None, "seconds": None, "steps": 8192}
SPENDING = {"calls": 7, "scans": 1, "pairs": 9, "tokens": 300, "seconds": None, "steps": 40}


def _excluded(item: str, reason: str) -> dict[str, Any]:
    detail = SPENT if reason == "unscreened" else "v: it closed"
    return {"item": item, "reason": reason, "stage": "implicit", "evidence": [], "detail": detail}


EXCLUDED = [
    _excluded("mine", "unscreened"),
    _excluded("theirs", "unscreened"),  # an item the agent may not read
    _excluded("closed", "implicitly_invalidated"),
    _excluded("secret", "implicitly_invalidated"),  # an item the agent may not read
]


def _told(judgment: dict[str, Any], excluded: list[dict[str, Any]] = EXCLUDED) -> dict[str, Any]:
    record = logged(excluded=excluded, hidden=["theirs", "secret"], judgment=judgment)
    told: dict[str, Any] = agent_copy(record)["judgment"]
    TypeAdapter(AgentJudgmentOut).validate_python(told)
    return told


def test_an_agent_is_told_the_counts_of_what_its_copy_lists() -> None:
    """The operator's record counts two unscreened items and two invalidations, one each
    of an item the agent may not read: the agent is told one of each, as its copy lists."""
    judgment = {"verifier": "v", **SPENDING, "unscreened": 2, "standing": 1, "confirmed": 1,
                "budget": BUDGET, "shown": {"standing": 0, "confirmed": 1}}  # fmt: skip

    assert _told(judgment) == {
        "verifier": "v",
        "unscreened": 1,
        "standing": 0,
        "confirmed": 1,
        "budget": BUDGET,
    }


def test_a_record_logged_before_it_kept_what_was_shown_tells_the_counts_it_logged() -> None:
    """A record from before ``shown`` was logged (here, one that invalidated only what its
    agent may read): the invalidations it counted, and the unscreened items its copy lists."""
    judgment = {"verifier": "v", **SPENDING, "unscreened": 2, "standing": 0, "confirmed": 1,
                "budget": BUDGET}  # fmt: skip

    assert _told(judgment, EXCLUDED[:3]) == {
        "verifier": "v",
        "unscreened": 1,
        "standing": 0,
        "confirmed": 1,
        "budget": BUDGET,
    }


def _w_breaks_x(pair: Pair) -> Verdict:
    hit = pair.earlier.id == "x" and pair.later.replacement_id == "w"
    return Verdict(invalidates=hit, confidence=0.9, reason="closed")


def _asserts(n: int, id: str, text: str) -> dict[str, Any]:
    """B1 states an item only the neighbours may read."""
    item = {"id": id, "text": text, "readers": {"principals": ["neighbours"]}}
    return {"at": at(n), "author": "B1", "op": "assert", "item": item}


def test_a_standing_verdict_on_an_item_the_agent_may_not_read_is_not_counted(
    store: WorkStateStore,
) -> None:
    """B1's return confirms that the neighbours' W made their X stale; A1, away meanwhile,
    returns to find the verdict standing on X, which it may not read. The operator's
    record counts it; A1's copy lists no exclusion of X, and counts none: a count told it
    that an item it may not read fell."""
    x = _asserts(2, "x", "The standup room is Room Atlas.")
    w = _asserts(4, "w", "Room Atlas is closed for repairs.")
    agents = [("A1", "family"), ("B1", "neighbours")]
    made = load_scenario(
        {
            "format": "readmit.scenario/1",
            "workspace": "trip",
            "agents": [{"id": a, "principal": p, "role": "itinerary"} for a, p in agents],
            "events": [depart(1), x, depart(3, "B1"), w, ret(5, "B1"), ret(6)],
        }
    )

    _, family = replay(made, store, signer=SIGNER, verifier=FunctionVerifier(_w_breaks_x))

    [fell] = [e for e in family.record["excluded"] if e["item"] == "x"]
    assert fell["reason"] == "implicitly_invalidated"
    assert "x" in family.record["hidden"]
    judgment = family.record["judgment"]
    assert (judgment["standing"], judgment["shown"]) == (1, {"standing": 0, "confirmed": 0})
    assert agent_copy(family.record)["judgment"]["standing"] == 0
