"""An agent's decisions recorded, and its history read back: decisions and bank, by pages.

A decision whose COMMIT got no answer (a connection cut as PostgreSQL committed) is looked
for in the log under the workspace's write lock, as `readmit.store.resent` looks for a
batch: found, it is answered with its number instead of an unknown outcome.

Decisions and memories grow with every return and every memory, so each is read a page at a
time off an index (`readmit.store.audit.summaries`, `readmit.store.absence.bank`), and one
decision, one count or the memories a decision readmitted without the rest: an agent with
a year of returns behind it is answered without every row of its history being read.
"""

from collections.abc import Callable, Collection, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from readmit.admission.invalidation.judgment import Judgment
from readmit.admission.memo import keep
from readmit.errors import StoreError
from readmit.model import Agent, Checkpoint, Experience
from readmit.store import absence, audit
from readmit.store.base import DecisionSummary
from readmit.store.bodies import Departures
from readmit.store.connection import Connection
from readmit.store.rows import CHUNK
from readmit.wire.decisions import checked_decision

T = TypeVar("T")

OWN_NUMBERS = 4096
"""How many decisions' own numbers a store remembers from recording them (`own_number`)."""


class Records:
    """The part of `readmit.store.SqlStore` that records decisions and reads back them and banks."""

    conn: Connection
    _departures: Departures
    _own: dict[tuple[str, int], tuple[str, int]]
    """(workspace, decision id) -> (agent, its own number) of the decisions this object
    recorded, counted in the transaction that recorded each."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _reading(self, read: Callable[..., T], *args: Any) -> T:
        raise NotImplementedError

    def _transaction(
        self, lock: str, wait: float | None = None
    ) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def agents(self, workspace: str) -> Mapping[str, Agent]:
        raise NotImplementedError

    def _keep(self, db: Connection, workspace: str, agent: str, epoch: int, j: Judgment) -> None:
        raise NotImplementedError

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
        agents = self.agents(workspace)
        checked_decision(agents, workspace, agent, at, epoch, outcome, record)
        rest = audit.checkpoint_rest(self._read, self._departures, workspace, agent, at, record)
        text = audit.body(record, rest)  # its ``not_selected``: the rest of that checkpoint's
        kept = audit.packed(text, self.conn.dialect)
        inserted = (0, 0)  # its row's id and number, once inserted
        try:
            with self._transaction(lock=workspace) as db:
                departed = (record["departure_epoch"], departure.at if departure else None)
                inserted = audit.insert_decision(
                    db, workspace, agent, at, epoch, outcome, kept, departed
                )
                number = inserted[1]
                own = audit.own_number(db, workspace, agent, number)
                if judgment is not None and judgment.verifier:
                    self._keep(db, workspace, agent, epoch, judgment)
        except StoreError as failed:  # its COMMIT unanswered: logged all the same?
            row = (agent, at, epoch, outcome, kept)
            look = partial(audit.decided_anyway, self._transaction, workspace)
            if not inserted[0] or (found := look(inserted, row, failed)) is None:
                raise
            number, own = inserted[1], found
        keep(self._own, (workspace, number), (agent, own), OWN_NUMBERS)
        return number

    def decisions(
        self,
        workspace: str | None = None,
        agent: str | None = None,
        after: int = 0,
        limit: int | None = None,
    ) -> list[DecisionSummary]:
        return self._reading(audit.summaries, workspace, agent, after, limit)

    def decision_count(self, workspace: str, agent: str) -> int:
        return self._reading(audit.count, workspace, agent)

    def own_number(self, workspace: str, agent: str, decision_id: int) -> int:
        """The agent's count of its decisions up to ``decision_id``.

        One this object recorded is known without a read: a return recorded, then its
        number read, failed as if undecided when the connection was lost between the two
        (a review: the agent was told to try again, and its next return counted two).
        """
        known = self._own.get((workspace, decision_id))
        if known is not None and known[0] == agent:
            return known[1]
        return self._reading(audit.own_number, workspace, agent, decision_id)

    def decision(self, decision_id: int, workspace: str | None = None) -> dict[str, Any]:
        """One stored decision record, by its number in ``workspace``.

        Raises:
            StoreError: if there is no such decision.
            InvalidInput: if several workspaces have one and ``workspace`` was not named.
        """
        with self._read() as db:
            return audit.record(
                db, decision_id, workspace, partial(self._departures.candidate_ids, db)
            )

    def experiences(
        self, workspace: str, agent: str, after: str | None = None, limit: int | None = None
    ) -> list[Experience]:
        return self._reading(absence.bank, workspace, agent, None, after, limit)

    def experiences_named(
        self, workspace: str, agent: str, ids: Collection[str]
    ) -> dict[str, Experience]:
        """The memories of ``agent``'s bank that ``ids`` names, by id (the rest unread)."""
        wanted, found = list(dict.fromkeys(ids)), dict[str, Experience]()
        with self._read() as db:
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                found |= {e.id: e for e in absence.bank(db, workspace, agent, ids=chunk)}
        return found
