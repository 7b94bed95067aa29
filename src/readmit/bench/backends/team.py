"""The team an episode is written by: one `Member` per agent on a fresh readmit store.

An integration writes an item's text and key; everything else readmit judges by
(``supports``, ``cites``, ``depends_on``, scope, validity, ``unconfirmed``) is what the
application states through its `Member`. `Annotating` does that: the driver names
the scenario item being written, and the event the integration records carries
that item's annotations under the integration's own id, key and text.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from readmit.admission.invalidation.implicit import Verifier
from readmit.events import Assert, Event, ItemDraft, Recorded, Supersede
from readmit.integrations.team import Member
from readmit.scenario import Scenario
from readmit.signing import HmacSha256Signer
from readmit.store.sqlite import SQLiteStore

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

    def map(self, ids: frozenset[str]) -> frozenset[str]:
        return frozenset(self.of.get(i, i) for i in ids)


@dataclass
class Annotating(Member):
    """A `Member` that gives the item its integration records the scenario's annotations."""

    ids: Ids = field(default_factory=Ids)
    pending: ItemDraft | None = None
    """The scenario item the integration is writing now."""

    def record(self, events: Sequence[Event]) -> list[Recorded]:
        return super().record([self._annotated(e) for e in events])

    def _annotated(self, event: Event) -> Event:
        draft = self.pending
        if draft is None or not isinstance(event, Assert | Supersede):
            return event
        self.pending = None
        written = event.item
        self.ids.add(draft.id, written.id)
        item = replace(
            draft,
            id=written.id,
            text=written.text,
            key=written.key,
            depends_on=self.ids.map(draft.depends_on),
        )
        return replace(event, item=item)


def team(scenario: Scenario, verifier: Verifier | None, clock: Clock) -> dict[str, Annotating]:
    """A fresh in-memory store with the scenario's workspace, and a member per agent."""
    store = SQLiteStore(":memory:")
    store.create_workspace(scenario.workspace, scenario.agents)
    ids = Ids()
    return {
        a.id: Annotating(
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
