"""readmit over a Mem0 OSS memory bank: writes become events, reads go through the view.

`ReadmitMemory` wraps a ``mem0.Memory`` and `AsyncReadmitMemory` a ``mem0.AsyncMemory``
with the same method names, so an application adopts readmit by changing the line
that constructs its memory::

    memory = ReadmitMemory(Memory(config), member)   # was: memory = Memory(config)

Writes are recorded through the agent's `Member` after Mem0 has made them:

- ``add`` asserts one item per memory Mem0 reports added;
- ``update`` that changes a memory's text supersedes its current item;
- ``delete`` revokes its current item and, when the memory has a key, every other
  active item with that key the agent may read (copies of the same thing in other
  agents' banks).

**Ids.** The item for a memory version is ``mem0-<memory id>-<n>``, where ``n`` is the
1-based position, in ``history(memory id)``, of the row that wrote that text (1 for
the ``ADD``). An item's memory id and version are read back from its id, so no
mapping table is kept. **Keys.** ``key`` (a function of a memory as ``get`` returns
it, e.g. ``lambda m: (m.get("metadata") or {}).get("topic")``) gives items a readmit key:
a later memory with the same key replaces earlier ones, in any agent's bank.

**Reads.** ``depart()`` checkpoints the agent; its first ``search``/``get_all`` after
that decides its return. From then on a memory is removed from results when the
latest decision judged it (its item was a candidate) and did not admit its text,
neither under its memory id nor, for a keyed memory, under its key. Each result
dict gets a ``"readmit"`` entry: ``{"decision": id, "outcome": "issued" | "blocked" |
"reset" | None, "removed": [{"id", "memory", "reason", "item", "detail"}]}``.
Memories the decision never saw (written after the return, or never recorded) are
kept. A withheld decision admits nothing, so every memory it judged is removed,
with its exclusion reason or ``"withheld"``; before the first return nothing is
filtered. ``search`` and ``get_all`` ask Mem0 for ``top_k`` plus the number of
memories the decision excluded, so removals never starve a page.

Store calls are synchronous and short (an in-process store); the async wrapper
makes them inline.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.events import Assert, Event, ItemDraft, Recorded, Revoke, Supersede
from readmit.integrations.team import Member, Removal, new_id, removals

MemoryKey = Callable[[Mapping[str, Any]], str | None]
"""A memory's readmit key, from the memory as Mem0's ``get`` returns it (None: no key)."""

_PREFIX = "mem0-"


def item_id(memory_id: str, version: int) -> str:
    """The readmit item id of version ``version`` of Mem0 memory ``memory_id``."""
    return f"{_PREFIX}{memory_id}-{version}"


def memory_of(item: str) -> tuple[str, int] | None:
    """The memory id and version an item id names; None for an item not from Mem0."""
    if not item.startswith(_PREFIX):
        return None
    memory_id, _, version = item[len(_PREFIX) :].rpartition("-")
    return (memory_id, int(version)) if memory_id and version.isdigit() else None


def _writes_text(row: Mapping[str, Any]) -> bool:
    return row.get("event") == "ADD" or (
        row.get("event") == "UPDATE" and row.get("new_memory") != row.get("old_memory")
    )


def current_item(memory_id: str, history: Sequence[Mapping[str, Any]]) -> str | None:
    """The item of the memory's latest text, from its Mem0 history (None: never written)."""
    versions = [n for n, row in enumerate(history, 1) if _writes_text(row)]
    return item_id(memory_id, versions[-1]) if versions else None


@dataclass(frozen=True, slots=True)
class ViewIndex:
    """One decision as lookups by memory: what it admitted and what it removed."""

    decided: Decided | None
    admitted: Mapping[str, str] = field(default_factory=dict)
    """Memory id -> the admitted text of its newest admitted version."""
    admitted_keyed: frozenset[tuple[str, str]] = frozenset()
    """(key, text) of every admitted keyed item."""
    removed: Mapping[str, Removal] = field(default_factory=dict)
    """Memory id -> why its newest judged, unadmitted version was kept out."""

    def keeps(self, memory: Mapping[str, Any], key: str | None) -> bool:
        """Whether a memory Mem0 returned may be shown to the agent."""
        memory_id, text = str(memory.get("id")), memory.get("memory")
        if memory_id not in self.removed or self.admitted.get(memory_id) == text:
            return True
        return key is not None and (key, text) in self.admitted_keyed


def index(decided: Decided | None) -> ViewIndex:
    """Index ``decided`` by memory (a decision of None filters nothing)."""
    if decided is None:
        return ViewIndex(None)
    decision = decided.decision
    items = decision.items if isinstance(decision, Issued) else ()
    admitted = {found[0]: item.text for item in items if (found := memory_of(item.id)) is not None}
    keyed = frozenset((i.key, i.text) for i in items if i.key is not None)
    removed: dict[str, tuple[int, Removal]] = {}
    for item, removal in removals(decided).items():
        found = memory_of(item)
        if found is None:
            continue
        memory_id, version = found
        if memory_id not in removed or removed[memory_id][0] < version:
            removed[memory_id] = (version, removal)
    return ViewIndex(decided, admitted, keyed, {m: r for m, (_, r) in removed.items()})


@dataclass
class Recorder:
    """The readmit side of a wrapper: turns Mem0 writes into events, filters Mem0 reads."""

    member: Member
    key: MemoryKey | None = None
    returning: bool = False
    """Whether the agent has departed and not yet returned."""
    _index: ViewIndex = field(default_factory=lambda: ViewIndex(None))

    def key_of(self, memory: Mapping[str, Any] | None) -> str | None:
        return self.key(memory) if self.key is not None and memory is not None else None

    def depart(self) -> None:
        self.member.depart()
        self.returning = True

    def before_read(self) -> ViewIndex:
        """Decide the return on the first read after a departure; the index to filter by."""
        if self.returning:
            self.returning = False
            self.member.return_()
        if self._index.decided is not self.member.latest:
            self._index = index(self.member.latest)
        return self._index

    def fetch_size(self, top_k: int) -> int:
        return top_k + len(self._index.removed)

    def filtered(self, result: dict[str, Any], top_k: int) -> dict[str, Any]:
        """Mem0's read result with what the view does not admit taken out, and why."""
        view = self._index
        kept: list[dict[str, Any]] = []
        removed: list[dict[str, Any]] = []
        for memory in result.get("results", []):
            if view.keeps(memory, self.key_of(memory)):
                kept.append(memory)
            else:
                why = view.removed[str(memory["id"])]
                removed.append(
                    {"id": memory["id"], "memory": memory.get("memory")} | _removal_json(why)
                )
        decision = None if view.decided is None else view.decided.id
        outcome = None if view.decided is None else view.decided.decision.outcome
        readmit = {"decision": decision, "outcome": outcome, "removed": removed}
        return {**result, "results": kept[:top_k], "readmit": readmit}

    def added(self, results: Iterable[Mapping[str, Any]], memories: Mapping[str, Any]) -> None:
        """Assert an item for each memory Mem0 reports added (``memories``: id -> memory)."""
        events: list[Event] = []
        for row in results:
            if row.get("event") == "ADD":
                memory_id = str(row["id"])
                key = self.key_of(memories.get(memory_id))
                events.append(self._assert(item_id(memory_id, 1), str(row["memory"]), key))
        if events:
            self.member.record(events)

    def updated(
        self,
        memory_id: str,
        before: Sequence[Mapping[str, Any]],
        after: Sequence[Mapping[str, Any]],
        memory: Mapping[str, Any] | None,
    ) -> None:
        """Supersede the memory's item if the update changed its text (Assert if it had none)."""
        if len(after) <= len(before) or not _writes_text(after[-1]):
            return
        draft = ItemDraft(
            id=item_id(memory_id, len(after)),
            text=str(after[-1]["new_memory"]),
            key=self.key_of(memory),
        )
        target = current_item(memory_id, before)
        at, author = self.member.clock(), self.member.agent
        if target is None or target not in {item.id for item in self.member.visible()}:
            self.member.record([Assert(id=new_id("mem0"), at=at, author=author, item=draft)])
            return
        event = Supersede(id=new_id("mem0"), at=at, author=author, target=target, item=draft)
        self.member.record([event])

    def deleted(self, memory_id: str, before: Sequence[Mapping[str, Any]], key: str | None) -> None:
        """Revoke the memory's item and, with a key, every readable active item with that key."""
        target = current_item(memory_id, before)
        visible = self.member.visible()
        targets = [i.id for i in visible if i.id == target or (key is not None and i.key == key)]
        self.member.revoke(targets, f"deleted from Mem0 by {self.member.agent}")

    def _assert(self, item: str, text: str, key: str | None) -> Assert:
        draft = ItemDraft(id=item, text=text, key=key)
        at = self.member.clock()
        return Assert(id=new_id("mem0"), at=at, author=self.member.agent, item=draft)


def _removal_json(removal: Removal) -> dict[str, str]:
    """A removal as the JSON-ready dict a result's ``readmit.removed`` entry carries."""
    return {"reason": removal.reason, "item": removal.item, "detail": removal.detail}


def backfill_events(
    histories: Mapping[str, Sequence[Mapping[str, Any]]],
    member: Member,
    keys: Mapping[str, str | None] | None = None,
) -> list[Event]:
    """The events that replay Mem0 histories (memory id -> ``history()`` rows) for ``member``.

    ADD asserts, an UPDATE that changes the text supersedes, DELETE revokes, memory by
    memory in history order, with the ids the wrappers use, so a bank adopted this
    way is filtered like one written through them.
    """
    events: list[Event] = []
    at, author = member.clock(), member.agent
    for memory_id, rows in histories.items():
        current: str | None = None
        for n, row in enumerate(rows, 1):
            if row.get("event") == "DELETE" and current is not None:
                why = "deleted from Mem0 (backfilled)"
                events.append(
                    Revoke(id=new_id("mem0"), at=at, author=author, target=current, why=why)
                )
                current = None
            elif _writes_text(row):
                key = (keys or {}).get(memory_id)
                draft = ItemDraft(id=item_id(memory_id, n), text=str(row["new_memory"]), key=key)
                if current is None:
                    events.append(Assert(id=new_id("mem0"), at=at, author=author, item=draft))
                else:
                    events.append(
                        Supersede(
                            id=new_id("mem0"), at=at, author=author, target=current, item=draft
                        )
                    )
                current = draft.id
    return events


class ReadmitMemory:
    """A ``mem0.Memory`` whose writes are readmit events and whose reads the view filters.

    Methods other than those below (``reset``, ``delete_all``, ...) go to the inner
    memory unrecorded.
    """

    def __init__(self, inner: Any, member: Member, *, key: MemoryKey | None = None) -> None:
        self.inner = inner
        self.readmit = Recorder(member, key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def depart(self) -> None:
        """The agent leaves: checkpoint it; its next read decides its return."""
        self.readmit.depart()

    def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.inner.add(messages, **kwargs)
        rows = result.get("results", [])
        memories = {str(r["id"]): self.inner.get(r["id"]) for r in rows} if self.readmit.key else {}
        self.readmit.added(rows, memories)
        return result

    def update(self, memory_id: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        before = self.inner.history(memory_id)
        result: dict[str, Any] = self.inner.update(memory_id, *args, **kwargs)
        memory = self.inner.get(memory_id) if self.readmit.key else None
        self.readmit.updated(memory_id, before, self.inner.history(memory_id), memory)
        return result

    def delete(self, memory_id: str) -> dict[str, Any]:
        before = self.inner.history(memory_id)
        key = self.readmit.key_of(self.inner.get(memory_id)) if self.readmit.key else None
        result: dict[str, Any] = self.inner.delete(memory_id)
        self.readmit.deleted(memory_id, before, key)
        return result

    def search(self, query: str, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        self.readmit.before_read()
        fetch = self.readmit.fetch_size(top_k)
        return self.readmit.filtered(self.inner.search(query, top_k=fetch, **kwargs), top_k)

    def get_all(self, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        self.readmit.before_read()
        fetch = self.readmit.fetch_size(top_k)
        return self.readmit.filtered(self.inner.get_all(top_k=fetch, **kwargs), top_k)

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory, or None when the view removed it (``search``/``get_all`` say why)."""
        view = self.readmit.before_read()
        memory: dict[str, Any] | None = self.inner.get(memory_id)
        keep = memory is None or view.keeps(memory, self.readmit.key_of(memory))
        return memory if keep else None

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.inner.history(memory_id)
        return rows


class AsyncReadmitMemory:
    """`ReadmitMemory` for a ``mem0.AsyncMemory``: the same behaviour, awaited."""

    def __init__(self, inner: Any, member: Member, *, key: MemoryKey | None = None) -> None:
        self.inner = inner
        self.readmit = Recorder(member, key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def depart(self) -> None:
        """The agent leaves: checkpoint it; its next read decides its return."""
        self.readmit.depart()

    async def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self.inner.add(messages, **kwargs)
        rows = result.get("results", [])
        memories = {}
        if self.readmit.key:
            memories = {str(r["id"]): await self.inner.get(r["id"]) for r in rows}
        self.readmit.added(rows, memories)
        return result

    async def update(self, memory_id: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        before = await self.inner.history(memory_id)
        result: dict[str, Any] = await self.inner.update(memory_id, *args, **kwargs)
        memory = await self.inner.get(memory_id) if self.readmit.key else None
        self.readmit.updated(memory_id, before, await self.inner.history(memory_id), memory)
        return result

    async def delete(self, memory_id: str) -> dict[str, Any]:
        before = await self.inner.history(memory_id)
        key = self.readmit.key_of(await self.inner.get(memory_id)) if self.readmit.key else None
        result: dict[str, Any] = await self.inner.delete(memory_id)
        self.readmit.deleted(memory_id, before, key)
        return result

    async def search(self, query: str, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        self.readmit.before_read()
        fetch = self.readmit.fetch_size(top_k)
        result = await self.inner.search(query, top_k=fetch, **kwargs)
        return self.readmit.filtered(result, top_k)

    async def get_all(self, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        self.readmit.before_read()
        fetch = self.readmit.fetch_size(top_k)
        return self.readmit.filtered(await self.inner.get_all(top_k=fetch, **kwargs), top_k)

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory, or None when the view removed it (``search``/``get_all`` say why)."""
        view = self.readmit.before_read()
        memory: dict[str, Any] | None = await self.inner.get(memory_id)
        keep = memory is None or view.keeps(memory, self.readmit.key_of(memory))
        return memory if keep else None

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = await self.inner.history(memory_id)
        return rows


def backfill(
    memory: Any, member: Member, memory_ids: Iterable[str], *, key: MemoryKey | None = None
) -> list[Recorded]:
    """Record an existing ``mem0.Memory`` bank's history as ``member``'s events, atomically.

    ``memory_ids`` names the memories to adopt (e.g. the ids ``get_all`` lists, plus any
    deleted ones to carry as revocations). The events are stamped now, in history
    order; run it once, before the agents read through the wrappers.
    """
    ids = list(memory_ids)
    histories = {m: memory.history(m) for m in ids}
    keys = {m: key(got) for m in ids if key and (got := memory.get(m)) is not None}
    events = backfill_events(histories, member, keys)
    return member.record(events) if events else []


async def abackfill(
    memory: Any, member: Member, memory_ids: Iterable[str], *, key: MemoryKey | None = None
) -> list[Recorded]:
    """`backfill` for a ``mem0.AsyncMemory``."""
    ids = list(memory_ids)
    histories = {m: await memory.history(m) for m in ids}
    keys: dict[str, str | None] = {}
    for m in ids:
        got = await memory.get(m) if key else None
        if key and got is not None:
            keys[m] = key(got)
    events = backfill_events(histories, member, keys)
    return member.record(events) if events else []
