"""The trip workspace's histories as the judgment tests write them: times in minutes from 8:00."""

from typing import Any

from builders import KEY
from readmit.admission.invalidation.implicit import Verifier
from readmit.replay import replay
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore

SIGNER = HmacSha256Signer(KEY)
AGENTS = [
    {"id": "A1", "principal": "family", "role": "itinerary"},
    {"id": "A2", "principal": "family", "role": "booking"},
    {"id": "A3", "principal": "family", "role": "itinerary"},
    {"id": "B1", "principal": "neighbours", "role": "itinerary"},
]


def at(n: int) -> str:
    """The time ``n`` minutes after 8:00 on the trip's first day."""
    return f"2026-05-01T{8 + n // 60:02}:{n % 60:02}:00Z"


def assert_item(n: int, id: str, text: str, **extra: Any) -> dict[str, Any]:
    """A2 asserts item ``id`` at minute ``n`` (``extra``: its other fields)."""
    return {"at": at(n), "author": "A2", "op": "assert", "item": {"id": id, "text": text, **extra}}


def ret(n: int, agent: str = "A1") -> dict[str, Any]:
    return {"at": at(n), "op": "return", "agent": agent, "task": "trip", "purpose": "itinerary"}


def depart(n: int, agent: str = "A1") -> dict[str, Any]:
    return {"at": at(n), "op": "depart", "agent": agent}


def scenario(
    events: list[dict[str, Any]], agents: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    """``events`` in the trip workspace (``agents``: the family's and a neighbour's)."""
    return {
        "format": "readmit.scenario/1",
        "workspace": "trip",
        "agents": AGENTS if agents is None else agents,
        "policy": {"max_items": 8},
        "events": events,
    }


def replayed(
    store: WorkStateStore, events: list[dict[str, Any]], verifier: Verifier
) -> list[dict[str, Any]]:
    """The decision records of ``events``' returns, replayed on ``store``."""
    decided = replay(load_scenario(scenario(events)), store, verifier=verifier, signer=SIGNER)
    return [d.record for d in decided]


def reason(record: dict[str, Any], item: str) -> str | None:
    """Why ``record`` excluded ``item`` (``None``: it did not)."""
    return next((e["reason"] for e in record["excluded"] if e["item"] == item), None)
