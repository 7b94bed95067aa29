"""The LangGraph store backend: `ReadmitStore` per agent over one shared ``InMemoryStore``.

An item lives at ``("episode",)`` / its scenario key (its id when it has none), so a
same-key item overwrites the one before it, as LangGraph keeps one value per path. Its
value is ``{"text": ..., "_readmit": annotations}``: a premise still at its path is
named by path, one a later write overwrote by the item id the integration gave it.
"""

from collections.abc import Iterable
from typing import Any

from langgraph.store.base import Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from readmit.bench.backends.base import Paths, Tally
from readmit.bench.backends.team import Tracking, annotations
from readmit.events import Assert, ItemDraft, Revoke, Supersede
from readmit.integrations.annotations import ANNOTATIONS
from readmit.integrations.langgraph import ReadmitStore

NAMESPACE = ("episode",)


class CountingStore(InMemoryStore):
    """An ``InMemoryStore`` that counts the ops it is sent (puts are writes, the rest reads)."""

    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        puts = sum(isinstance(op, PutOp) for op in listed)
        self.tally.writes += puts
        self.tally.reads += len(listed) - puts
        return super().batch(listed)


class LangGraphBackend:
    """Each agent reads and writes through its own `ReadmitStore` on the shared inner store."""

    name = "langgraph"

    def __init__(self, members: dict[str, Tracking]) -> None:
        self.tally = Tally()
        self.inner = CountingStore(self.tally)
        self.members = members
        self.stores = {
            a: ReadmitStore(self.inner, m, on_withheld="empty") for a, m in members.items()
        }
        self.paths = Paths()

    def put(self, event: Assert) -> None:
        self._write(event.author, event.item.key or event.item.id, event.item)

    def replace(self, event: Supersede) -> None:
        slot = self.paths.current(event.target)
        if slot is None:
            self.tally.gaps.append(f"supersede of {event.target}: its path holds a later value")
            return
        self._write(event.author, slot, event.item)

    def delete(self, event: Revoke) -> None:
        slot = self.paths.current(event.target)
        if slot is None:  # LangGraph keeps one value per path: an older one cannot be deleted
            self.tally.gaps.append(f"revoke of {event.target}: its path holds a later value")
            return
        self.stores[event.author].delete(NAMESPACE, slot)
        del self.paths.holds[slot]

    def _write(self, author: str, path: str, draft: ItemDraft) -> None:
        member = self.members[author]
        premises: list[str | dict[str, Any]] = [
            {"path": [*NAMESPACE, slot]}
            if (slot := self.paths.current(p)) is not None
            else member.ids.of.get(p, p)
            for p in sorted(draft.depends_on)
        ]
        member.pending = draft.id
        value = {"text": draft.text, ANNOTATIONS: annotations(draft, premises)}
        self.stores[author].put(NAMESPACE, path, value)
        self.paths.write(draft.id, path)

    def read(self, agent: str) -> list[str]:
        limit = max(1, len(self.paths.holds))
        found = self.stores[agent].search(NAMESPACE, limit=limit)
        return [self.paths.holds[item.key] for item in found]

    def close(self) -> None:
        return None
