"""An agent's history read back: its decisions and its private bank, a page at a time.

Both grow with every return and every memory, so each is read a page at a time off an index
(`readmit.store.audit.summaries`, `readmit.store.absence.bank`), and one decision, one
count or the memories a decision readmitted without the rest: an agent with a year of
returns behind it is answered without every row of its history being read.
"""

from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from functools import partial
from typing import Any, TypeVar

from readmit.model import Experience
from readmit.store import absence, audit
from readmit.store.base import DecisionSummary
from readmit.store.bodies import Departures
from readmit.store.connection import Connection
from readmit.store.rows import CHUNK

T = TypeVar("T")

OWN_NUMBERS = 4096
"""How many decisions' own numbers a store remembers from recording them (`own_number`)."""


class Records:
    """The part of `readmit.store.SqlStore` that reads decisions and private banks."""

    _departures: Departures
    _own: dict[tuple[str, int], tuple[str, int]]
    """(workspace, decision id) -> (agent, its own number) of the decisions this object
    recorded, counted in the transaction that recorded each."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _reading(self, read: Callable[..., T], *args: Any) -> T:
        raise NotImplementedError

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
