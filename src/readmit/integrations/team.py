"""One agent of a team acting on a readmit store in-process: what every integration wraps.

A `Member` records the agent's writes as events, departs, returns (deciding with
`readmit.decide.decide`, so the decision is in the audit log like any other), and
remembers its latest decision: what an integration filters reads through.
"""

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from readmit.admission.decision import Issued
from readmit.admission.invalidation.implicit import Verifier
from readmit.clock import now
from readmit.decide import Decided, decide
from readmit.events import Event, Recorded, ReturnRequest, Revoke
from readmit.model import Checkpoint, Item
from readmit.policy import Policy
from readmit.signing import Signer
from readmit.store.base import WorkStateStore
from readmit.verifiers.builtin import TermVerifier


@dataclass(frozen=True, slots=True)
class Removal:
    """Why an item of a return's C is not in the agent's view."""

    item: str
    reason: str
    """A reason code, or ``withheld`` when no view was issued and nothing else excluded it."""
    detail: str


def removals(decided: Decided) -> dict[str, Removal]:
    """Every item of ``decided``'s C that its view does not hold, by id, with why."""
    decision = decided.decision
    admitted = {i.id for i in decision.items} if isinstance(decision, Issued) else set()
    why = {e.item: Removal(e.item, e.reason.value, e.detail) for e in decision.exclusions}
    return {
        item.id: why.get(item.id) or Removal(item.id, "withheld", decision.outcome)
        for item in decided.context.items
        if item.id not in admitted
    }


def new_id(prefix: str) -> str:
    """A fresh id for an event or item: ``prefix`` and 16 random hex digits."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


@dataclass
class Member:
    """One agent (``agent`` in ``workspace``) acting on ``store``."""

    store: WorkStateStore
    workspace: str
    agent: str
    signer: Signer
    verifier: Verifier | None = field(default_factory=TermVerifier)
    policy: Policy = field(default_factory=Policy)
    clock: Callable[[], datetime] = now
    latest: Decided | None = None
    """The agent's latest decision in this process, if it has returned."""

    def record(self, events: Sequence[Event]) -> list[Recorded]:
        """Record ``events`` (authored by this agent) atomically, at the clock's time."""
        return self.store.append(self.workspace, events, clock=self.clock)

    def revoke(self, targets: Iterable[str], why: str) -> list[Recorded]:
        """Revoke each of ``targets`` (ids the agent may read) in one batch, saying ``why``."""
        at = self.clock()
        events: list[Event] = [
            Revoke(id=new_id("revoke"), at=at, author=self.agent, target=target, why=why)
            for target in sorted(set(targets))
        ]
        return self.record(events) if events else []

    def depart(self) -> Checkpoint:
        """Checkpoint what the agent can see now (D_a)."""
        return self.store.depart(self.workspace, self.agent, self.clock())

    def return_(self, task: str = "*", purpose: str = "*", query: str | None = None) -> Decided:
        """Decide the agent's return to ``task`` for ``purpose``; remember the decision."""
        at = self.clock()
        request = ReturnRequest(
            id=new_id("return"), at=at, agent=self.agent, task=task, purpose=purpose
        )
        self.latest = decide(
            self.store,
            self.workspace,
            request,
            policy=self.policy,
            verifier=self.verifier,
            signer=self.signer,
            query=query,
        )
        return self.latest

    def admitted(self) -> list[Item] | None:
        """The items of the latest issued view: ``[]`` if it was withheld.

        None before any return: the agent has not been away, so nothing is filtered.
        """
        if self.latest is None:
            return None
        decision = self.latest.decision
        return list(decision.items) if isinstance(decision, Issued) else []

    def visible(self) -> list[Item]:
        """The active items the agent may read now (no admission: its live state)."""
        return self.store.visible_state(self.workspace, self.agent)
