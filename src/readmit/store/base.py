"""The work-state store protocol. Backends must behave identically.

Guarantees every implementation gives:

- events are append-only; the store assigns each a strictly increasing,
  gap-free epoch per workspace;
- a batch of events is stored whole or not at all, and an event that is
  inconsistent with what is stored (unknown author or target, duplicate id,
  time going backwards, missing evidence) raises `InvalidEvent` naming it;
- every asserted item gets a receipt binding it to its event, author, epoch
  and text digest;
- the audit log keeps every decision with all its exclusions;
- every write is checked against what its author may read, and an id the
  author may not read is answered exactly like one that does not exist;
- a damaged database does not open (`check` reports the same at any time).
"""

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from readmit.admission.context import ReturnContext, Standing
from readmit.admission.invalidation.judgment import Judgment
from readmit.events import Event, Recorded, RecordExperience, ReturnRequest
from readmit.model import Agent, Checkpoint, Experience, Item

Returning = tuple[str, str]
"""What an agent returns to: (task, purpose)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionSummary:
    """One row of the audit log."""

    id: int
    """The decision's number in its workspace (1, 2, ... per workspace)."""
    workspace: str
    agent: str
    at: datetime
    epoch: int
    outcome: str


class WorkStateStore(Protocol):
    """Durable shared work state for one or more workspaces."""

    def create_workspace(self, workspace: str, agents: Sequence[Agent]) -> None:
        """Create ``workspace`` with its agents, at least one (adding them if it exists)."""
        ...

    def agents(self, workspace: str) -> dict[str, Agent]:
        """The agents of ``workspace`` by id."""
        ...

    def now(self) -> datetime:
        """The time by the store's clock: the database's on PostgreSQL, shared by its servers."""
        ...

    def append(
        self,
        workspace: str,
        events: Sequence[Event],
        *,
        clock: Callable[[], datetime] | None = None,
        max_open: int | None = None,
        own: bool = False,
    ) -> list[Recorded]:
        """Record ``events`` atomically and return them with their epochs.

        With ``clock``, events are recorded at commit time rather than
        at their own ``at``: what a server does for agents that let it keep time.
        With ``max_open``, a batch that would leave the principal of an agent that opened
        an obligation in it holding more open is refused (`InvalidInput`), nothing stored.
        With ``own``, an event's author may withdraw an item it wrote whose readers leave it
        out (a memory layer undoing its own put for others). Never for an agent's request:
        whether it may would tell it what a reader did to the item (a review).
        """
        ...

    def record_experience(self, workspace: str, step: RecordExperience) -> Experience:
        """Add a private experience to its agent's bank."""
        ...

    def depart(
        self, workspace: str, agent: str, at: datetime, returning_to: Returning | None = None
    ) -> Checkpoint:
        """Checkpoint what ``agent`` can see now and is still valid (D_a).

        ``returning_to``: the task and purpose it says it will return to, if it says.
        """
        ...

    def departed_for(
        self, workspace: str, agent: str, at: datetime | None = None
    ) -> Returning | None:
        """The task and purpose ``agent``'s latest departure (by ``at``) said it returns to."""
        ...

    def has_departed(self, workspace: str, agent: str, at: datetime) -> bool:
        """Whether ``agent`` has a departure at or before ``at`` (a return can be decided)."""
        ...

    def return_context(self, workspace: str, request: ReturnRequest) -> ReturnContext:
        """Build C = D_a ⊕ Δ for a return (from the agent's latest departure)."""
        ...

    def events(
        self, workspace: str, after_epoch: int = 0, upto: int | None = None
    ) -> list[Recorded]:
        """The events recorded after ``after_epoch`` (up to ``upto``), in epoch order."""
        ...

    def record_decision(
        self,
        workspace: str,
        agent: str,
        at: datetime,
        epoch: int,
        outcome: str,
        record: dict[str, Any],
        judgment: Judgment | None = None,
        departure: Checkpoint | None = None,
    ) -> int:
        """Append a decision (with all its exclusions) to the audit log; return its id.

        Ids are numbered per workspace, so one says nothing of other workspaces.

        With ``judgment``, also keep, in the same transaction, the invalidations it
        confirmed (they bind every later return) and how far it screened each item.
        The departure it was decided on (``departure``, else the record's epoch of it)
        must still be the agent's latest at ``at``.

        Raises:
            DepartedMeanwhile: if the agent departed again while the return was decided.
        """
        ...

    def remember_judgment(self, workspace: str, agent: str, epoch: int, judgment: Judgment) -> None:
        """Keep what ``judgment`` of ``agent``'s return kept through ``epoch``, with no decision."""
        ...

    def away(self, workspace: str) -> list[str]:
        """The agents of ``workspace`` that departed and have not returned since."""
        ...

    def decisions(
        self,
        workspace: str | None = None,
        agent: str | None = None,
        after: int = 0,
        limit: int | None = None,
    ) -> list[DecisionSummary]:
        """The audit log, oldest first (optionally of one workspace, one agent).

        Past the first ``after`` of them, ``limit`` at most.
        """
        ...

    def decision_count(self, workspace: str, agent: str) -> int:
        """How many decisions ``agent`` has in ``workspace``."""
        ...

    def own_number(self, workspace: str, agent: str, decision_id: int) -> int:
        """How many of ``agent``'s decisions in ``workspace`` are ``decision_id`` or older."""
        ...

    def decision(self, decision_id: int, workspace: str | None = None) -> dict[str, Any]:
        """One stored decision record, by its id in ``workspace`` (ids are per workspace).

        Without ``workspace`` the id must name a decision in only one workspace.

        Raises:
            StoreError: if there is no such decision.
            InvalidInput: if several workspaces have one and ``workspace`` was not named.
        """
        ...

    def visible_state(
        self, workspace: str, agent: str, after: str | None = None, limit: int | None = None
    ) -> list[Item]:
        """The active items ``agent`` may read now, by id: after ``after``, ``limit`` of them."""
        ...

    def unreadable(self, workspace: str, agent: str, ids: Sequence[str]) -> set[str]:
        """Of ``ids``, the active items ``agent`` may not read.

        For a library caller about to change another store (`readmit.store.held`).
        """
        ...

    def unreadable_under(self, workspace: str, agent: str, prefix: str) -> set[str]:
        """The active items ``agent`` may not read whose ids start with ``prefix``.

        For a library caller about to change many entries of another store at once.
        """
        ...

    def unreadable_keys(self, workspace: str, agent: str, keys: Sequence[str]) -> set[str]:
        """Of ``keys``, those an active item ``agent`` may not read holds.

        For a library caller about to write a path of another store that keeps one value
        a key.
        """
        ...

    def logged(
        self, workspace: str, event_ids: Sequence[str], wait: float | None = None
    ) -> dict[str, int]:
        """The epochs of those of ``event_ids`` the log holds, by id.

        Read under the workspace's write lock. ``wait``: for a write of unknown outcome,
        at most so many seconds for the lock, not in turn behind this process's writers
        (`readmit.store.deadline.LOOK_UP_WAIT`); None: as a writer waits for it.
        """
        ...

    def newest_under(self, workspace: str, agent: str, prefix: str) -> Item | None:
        """The newest item (any status) with an id starting ``prefix``, if ``agent`` may read it."""
        ...

    def recorded_under(self, workspace: str, prefix: str) -> set[str]:
        """The ids of the items (any status, any reader) that start with ``prefix``."""
        ...

    def withdrawn_since(self, workspace: str, epoch: int, upto: int | None = None) -> set[str]:
        """The items (any reader) withdrawn by an event after ``epoch`` (up to ``upto``).

        For a library caller that shows what rests on them (`readmit.store.held`).
        """
        ...

    def judged_since(self, workspace: str, since: int, at: datetime) -> tuple[int, list[Standing]]:
        """The last store of verdicts' number, and the standing ones stored after ``since``.

        Standing at ``at``. For a memory layer that serves between returns (`readmit.store.held`).
        """
        ...

    def chains(
        self, workspace: str, premises: Collection[str], at: datetime
    ) -> tuple[dict[str, frozenset[str]], set[str], dict[str, datetime]]:
        """The items on the chains of ``premises``, those of them fallen by ``at``, their ends.

        Each item with what it rests on, and the end of each that has one (`readmit.store.held`).
        """
        ...

    def newest_texts(self, workspace: str, keys: Sequence[str], upto: int) -> dict[str, str]:
        """What the newest item (any status, any reader) of each of ``keys`` says, up to ``upto``.

        Only items asserted at or before epoch ``upto`` count.
        """
        ...

    def experiences(
        self, workspace: str, agent: str, after: str | None = None, limit: int | None = None
    ) -> list[Experience]:
        """``agent``'s own private bank, oldest first: past the memory ``after``, ``limit`` at most.

        Raises:
            InvalidInput: if ``after`` names no memory of the bank.
        """
        ...

    def experiences_named(
        self, workspace: str, agent: str, ids: Collection[str]
    ) -> dict[str, Experience]:
        """The memories of ``agent``'s bank that ``ids`` names, by id (the rest unread)."""
        ...

    def add_agent_key(self, workspace: str, agent: str, key_hash: str, at: datetime) -> None:
        """Store the hash of a new API key for ``agent``."""
        ...

    def agent_for_key(self, key_hash: str) -> tuple[str, Agent] | None:
        """The (workspace, agent) an API key hash belongs to, if any."""
        ...

    def check(self) -> None:
        """Check the database is intact and fully migrated (what ``/health`` reports).

        Raises:
            StoreError: if it is damaged, unreachable or not fully migrated.
        """
        ...

    def close(self) -> None:
        """Release the connections."""
        ...
