"""What an agent reads back over HTTP and MCP: its decisions, its bank, the state, by the page.

Each list grows with the agent's history or the workspace, so each is answered a page at a
time (`PAGE` entries unless asked, `PAGE_MOST` at most; a page of items or memories also
ends at `PAGE_CHARS` characters) with the cursor of the next page, and read from the store
a page at a time: an agent with a year of returns behind it reads its latest decision, or
has one explained, without every row of its history being read.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from readmit.clock import format_time
from readmit.errors import NotFound
from readmit.model import Agent, Experience, Item
from readmit.service.copies import shown
from readmit.service.ids import ref, reference
from readmit.service.schemas import PAGE_CHARS, DecisionSummaryOut
from readmit.store import SqlStore
from readmit.wire.outbound import (
    AgentDecisionOut,
    ItemOut,
    MemoryOut,
    Outcome,
    item_out,
    memory_out,
)


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated agent a request acts as."""

    workspace: str
    agent: Agent


class Reading:
    """The reading operations of `readmit.service.operations.Service`, over ``store``."""

    store: SqlStore

    def decisions(
        self, caller: Caller, after: int = 0, limit: int | None = None
    ) -> tuple[list[DecisionSummaryOut], int | None]:
        """The caller's own decisions, oldest first, numbered from 1 for the caller.

        Those numbered past ``after``, ``limit`` at most; and the next page's cursor.
        """
        rows = self.store.decisions(caller.workspace, caller.agent.id, after, _one_more(limit))
        page = [
            DecisionSummaryOut(
                id=n,
                at=format_time(r.at),
                epoch=r.epoch,
                outcome=cast(Outcome, r.outcome),  # the store keeps what decide wrote
            )
            for n, r in enumerate(rows[:limit], start=after + 1)
        ]
        return page, (after + len(page) if len(rows) > len(page) else None)

    def explain(self, caller: Caller, decision_id: int) -> AgentDecisionOut:
        """The caller's decision number ``decision_id``, as the caller may see it.

        Raises:
            NotFound: if the caller has no decision with that number.
        """
        ws, agent = caller.workspace, caller.agent.id
        row = self.store.decisions(ws, agent, decision_id - 1, 1) if decision_id >= 1 else []
        if not row:
            raise NotFound(f"you have no decision {decision_id}")
        record = self.store.decision(row[0].id, ws)
        # The record keeps the ids of what was readmitted; the agent sees the memories,
        # as the return itself showed them (memories are never changed nor removed).
        bank = self.store.experiences_named(ws, agent, record["readmitted"])
        readmitted = [memory_out(bank[i]) for i in record["readmitted"] if i in bank]
        return shown(record, decision_id, readmitted)

    def state(
        self, caller: Caller, after: str | None, limit: int
    ) -> tuple[list[ItemOut], str | None]:
        """A page of the items the caller may read now, and the next's cursor (`State.page`)."""
        items, following = self.store.page(caller.workspace, caller.agent.id, after, limit)
        kept = _fitting(map(_item_chars, items))
        if kept < len(items):
            items, following = items[:kept], items[kept - 1].id
        return [item_out(i) for i in items], following

    def memories(
        self, caller: Caller, after: str | None = None, limit: int | None = None
    ) -> tuple[list[MemoryOut], str | None]:
        """The caller's own private bank, oldest first.

        Past the memory ``after`` (a reference, as `readmit.service.ids.ref` reads it: ``m1``
        is the caller's ``A1/m1``), ``limit`` at most; and the next page's cursor (a reference
        to the last memory, `readmit.service.ids.reference`).

        Raises:
            InvalidInput: if ``after`` names no memory of the caller's.
        """
        mine = None if after is None else ref(caller.agent.id, after)  # ``m1`` is ``A1/m1``
        found = self._bank(caller, mine, limit)
        page = found[:limit]
        page = page[: _fitting(map(_memory_chars, page))]
        last = page[-1].id if len(found) > len(page) else None
        # The cursor reads back as the last memory (`ref`): a plain id (``tip``, replayed
        # from a scenario) is ``/tip``, as ``tip`` would be the caller's ``A1/tip``.
        return [memory_out(e) for e in page], (None if last is None else reference(last))

    def _bank(self, caller: Caller, after: str | None, limit: int | None) -> list[Experience]:
        """The caller's memories past ``after``: ``limit`` and one more, or fewer past `PAGE_CHARS`.

        Read in ever longer runs: read at once, 10,000 memories of 16 KB were 160 MB read for
        a page of 65 (a review).
        """
        ws, agent = caller.workspace, caller.agent.id
        if limit is None:  # the whole bank
            return self.store.experiences(ws, agent, after, None)
        found: list[Experience] = []
        chars, run = 0, 64
        while True:
            ask = min(run, limit + 1 - len(found))
            got = self.store.experiences(ws, agent, after, ask)
            found += got
            read = sum(map(_memory_chars, got))
            chars += read
            if len(got) < ask or len(found) > limit or chars > PAGE_CHARS:
                return found
            # twice as many, but no more than the characters left take at the last run's
            # length (not all runs': after a few long memories, short ones came 2 a query)
            fit = (PAGE_CHARS - chars) // max(1, read // len(got)) + 2
            after, run = got[-1].id, min(2 * run, fit)


def _memory_chars(memory: Experience) -> int:
    """The characters of ``memory`` that `memory_out` shows."""
    return len(memory.id) + len(memory.text) + len(memory.source_item_id)


def _one_more(limit: int | None) -> int | None:
    """A page's read: one entry past it tells whether another page follows."""
    return None if limit is None else limit + 1


def _fitting(sizes: Iterable[int]) -> int:
    """How many entries of these ``sizes`` a page holds: `PAGE_CHARS` in all, one at least."""
    total = n = 0
    for n, size in enumerate(sizes, start=1):
        total += size
        if total > PAGE_CHARS and n > 1:
            return n - 1
    return n


def _item_chars(item: Item) -> int:
    """The characters of ``item`` that `item_out` shows."""
    key = 0 if item.key is None else len(item.key)
    return len(item.id) + len(item.text) + len(item.author) + key + sum(map(len, item.supports))
