"""The trip workspace's histories as the judgment tests write them: times in minutes from 8:00."""

from typing import Any

from builders import KEY
from readmit.admission.invalidation.implicit import Pair, Verifier
from readmit.decide import decide
from readmit.events import Depart, RecordExperience, ReturnRequest
from readmit.replay import replay
from readmit.scenario import Scenario, load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore
from readmit.testing import FunctionVerifier

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


def replayed_beside(
    store: WorkStateStore,
    events: list[dict[str, Any]],
    beside: list[dict[str, Any]],
    verifier: Verifier,
    agents: list[dict[str, str]] | None = None,
) -> list[tuple[dict[str, Any], list[Pair]]]:
    """The records of ``events``' returns, in the order they were recorded, with ``beside``
    happening while the first return is decided: after it read its context and judged,
    before it is recorded (``beside``'s own returns are recorded first). Each comes with
    the pairs a `FunctionVerifier` was asked while it was decided (none for the first,
    whose decision holds ``beside``'s; none with another verifier)."""
    main = load_scenario(scenario(events, agents))
    ids = [{"id": f"beside-{n}", **e} for n, e in enumerate(beside)]
    meanwhile = load_scenario(scenario(ids, agents))
    asked = verifier.calls if isinstance(verifier, FunctionVerifier) else []
    records: list[tuple[dict[str, Any], list[Pair]]] = []

    def returned(of: Scenario, request: ReturnRequest, first: bool) -> None:
        start = len(asked)
        decided = decide(
            store,
            "trip",
            request,
            policy=of.policy_for(request),
            verifier=verifier,
            signer=SIGNER,
            before_record=(lambda: steps(meanwhile)) if first else None,
        )
        judged = [] if first else [p for batch in asked[start:] for p in batch]
        records.append((decided.record, judged))

    def steps(of: Scenario) -> None:
        for step in of.steps:
            if isinstance(step, ReturnRequest):
                returned(of, step, first=of is main and not records)
            elif isinstance(step, Depart):
                store.depart("trip", step.agent, step.at)
            elif isinstance(step, RecordExperience):
                store.record_experience("trip", step)
            else:
                store.append("trip", [step])

    store.create_workspace("trip", main.agents)
    steps(main)
    return records
