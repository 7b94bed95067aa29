"""readmit over a Mem0 OSS memory bank: writes become events, reads go through the view.

`ReadmitMemory` wraps a ``mem0.Memory`` and `AsyncReadmitMemory` a ``mem0.AsyncMemory``
with the same method names, so an application adopts readmit by changing the line
that constructs its memory::

    memory = ReadmitMemory(Memory(config), member)   # was: memory = Memory(config)

**Writes** are recorded through the agent's `Member` after Mem0 has made them, in the
order `readmit.integrations.mem0.memory` describes (annotations validated first; a
Mem0 write readmit refuses is undone in Mem0 where Mem0 can undo it):

- ``add`` records exactly what Mem0 reports it did: ``ADD`` asserts an item,
  ``UPDATE`` supersedes the memory's current item, ``DELETE`` revokes it. With
  ``infer=False`` every message is an ``ADD``; with ``infer=True`` Mem0's LLM
  extracts the facts (Mem0 2.2's extraction only adds);
- ``update`` that changes a memory's text supersedes its current item;
- ``delete`` revokes its current item and, when the memory has a key, every other
  active item with that key the agent may read (copies of the same thing in other
  agents' banks);
- ``delete_all(...)`` and ``reset()`` revoke the current item of every memory they
  removed, with a reason naming the call.

**Annotations.** ``metadata["_readmit"]`` carries what else readmit judges an item by
(``supports``, ``depends_on``, scope, validity, ``cites``, ``kind``, ``unconfirmed``:
`readmit.integrations.annotations`); a premise may be named ``{"memory": id}`` (that
memory's current version). Mem0 keeps the metadata, so an update's new version carries
the memory's annotations as they stand after the update.

**Ids** (`readmit.integrations.mem0.ids`): the item for a memory version is
``mem0-<memory id>-<n>``, ``n`` its row in ``history()``. **Keys.** ``key`` (a function
of a memory as ``get`` returns it, e.g. ``lambda m: (m.get("metadata") or {}).get("topic")``)
gives items a readmit key: a later memory with the same key replaces earlier ones, in
any agent's bank.

**Reads.** ``depart()`` checkpoints the agent; its first ``search``/``get_all`` after
that decides its return. From then on a memory is removed from results when the
latest decision judged it (its item was a candidate) and did not admit its text,
neither under its memory id nor, for a keyed memory, under its key. Each result
dict gets a ``"readmit"`` entry: ``{"decision": id, "outcome": "issued" | "blocked" |
"reset" | None, "expired_at": time | None, "removed": [{"id", "memory", "reason",
"item", "detail"}]}``.
Memories the decision never saw (written after the return, or never recorded) are
kept. A withheld decision admits nothing, so every memory it judged is removed,
with its exclusion reason or ``"withheld"``; before the first return nothing is
filtered. ``search`` and ``get_all`` ask Mem0 for ``top_k`` plus the number of
memories the decision excluded, so removals never starve a page.

**Expiry.** An issued view is served until its ``expires_at`` (``Policy.view_ttl``
after the return, by the member's clock); after that it is treated exactly like a
withheld one until the agent's next return (``depart()``, then a read): it admits
nothing, so every memory the decision judged is removed, those it had admitted with
reason ``"view_expired"``, and ``"readmit"`` says when (``"expired_at"``, None while
the view is served). The view is not re-decided behind the agent's back.
``on_withheld="raise"`` makes every read (``search``, ``get_all``, ``get``) raise
`ViewWithheld` instead while no view is served (`ViewExpired`, code
``view_expired``, once it expired): the same errors, from the same expiry check
(`readmit.integrations.team`), as the LangGraph store's.

`backfill` / `abackfill` adopt an existing bank. Store calls are synchronous and short
(an in-process store); the async wrapper makes them inline.
"""

from readmit.integrations.mem0.backfill import abackfill, backfill, backfill_events
from readmit.integrations.mem0.ids import current_item, item_id, memory_of
from readmit.integrations.mem0.index import ViewIndex, index
from readmit.integrations.mem0.memory import AsyncReadmitMemory, ReadmitMemory
from readmit.integrations.mem0.recorder import MemoryKey, OnWithheld, Recorder
from readmit.integrations.withheld import ViewExpired, ViewWithheld

__all__ = [
    "AsyncReadmitMemory",
    "MemoryKey",
    "OnWithheld",
    "ReadmitMemory",
    "Recorder",
    "ViewExpired",
    "ViewIndex",
    "ViewWithheld",
    "abackfill",
    "backfill",
    "backfill_events",
    "current_item",
    "index",
    "item_id",
    "memory_of",
]
