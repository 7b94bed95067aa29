"""The team an episode is written by: one `Member` per agent on a fresh readmit store.

An integration records an item's text and key from what its library stores; the
item's other annotations (``supports``, ``cites``, ``depends_on``, scope, validity,
``kind``, ``unconfirmed``) travel through the integration's own channel (a LangGraph
value's ``"_readmit"`` key, a Mem0 memory's ``metadata["_readmit"]``), as an
application states them: `annotations` writes them in that channel's form.
`Tracking` changes nothing it records: it notes which item id the integration gave
each scenario item, so the study can score what the backend shows by scenario id.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from readmit.admission.invalidation.implicit import Verifier
from readmit.events import Assert, Event, ItemDraft, Recorded, Supersede
from readmit.integrations.team import Member
from readmit.scenario import Scenario
from readmit.signing import HmacSha256Signer
from readmit.store.sqlite import SQLiteStore
from readmit.wire import draft_to_wire

SIGNER = HmacSha256Signer(b"readmit-bench-signing-key")


@dataclass
class Clock:
    """The episode's time: each step is written at its own ``at``."""

    at: datetime

    def __call__(self) -> datetime:
        return self.at


@dataclass
class Ids:
    """Scenario item ids -> the ids the backend's integration gave them."""

    of: dict[str, str] = field(default_factory=dict)
    back: dict[str, str] = field(default_factory=dict)

    def add(self, scenario_id: str, backend_id: str) -> None:
        self.of[scenario_id] = backend_id
        self.back[backend_id] = scenario_id


@dataclass
class Tracking(Member):
    """A `Member` that notes which item id its integration gave the scenario item being written."""

    ids: Ids = field(default_factory=Ids)
    pending: str | None = None
    """The id of the scenario item the integration is writing now."""

    def record(self, events: Sequence[Event], own: bool = False) -> list[Recorded]:
        recorded = super().record(events, own)
        for event in events:
            if self.pending is not None and isinstance(event, Assert | Supersede):
                self.ids.add(self.pending, event.item.id)
                self.pending = None
        return recorded


def annotations(draft: ItemDraft, depends_on: list[str | dict[str, Any]]) -> dict[str, Any]:
    """The scenario item's annotations as an integration channel's JSON object.

    Its scenario form less ``id``, ``text`` and ``key`` (the integration records those),
    with its premises as ``depends_on`` (named the integration's way by the caller).
    """
    wire = draft_to_wire(draft)
    for name in ("id", "text", "key"):
        wire.pop(name, None)
    wire["depends_on"] = depends_on
    return wire


def team(scenario: Scenario, verifier: Verifier | None, clock: Clock) -> dict[str, Tracking]:
    """A fresh in-memory store with the scenario's workspace, and a member per agent."""
    store = SQLiteStore(":memory:")
    store.create_workspace(scenario.workspace, scenario.agents)
    ids = Ids()
    return {
        a.id: Tracking(
            store,
            scenario.workspace,
            a.id,
            SIGNER,
            verifier=verifier,
            policy=scenario.policy,
            clock=clock,
            ids=ids,
        )
        for a in scenario.agents
    }
