"""Adopt an existing Mem0 bank: replay each memory's history as one agent's events.

ADD asserts, an UPDATE that changes the text supersedes, DELETE revokes, memory by
memory in history order, with the item ids the wrappers use
(`readmit.integrations.mem0.ids`), so a bank adopted this way is filtered like one
written through them. Items get their text and key, and end when Mem0 stops showing the
memory (its current ``expiration_date``, `readmit.integrations.mem0.expiry`); annotations
are not replayed (Mem0 keeps only a memory's current metadata, not each version's).
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from readmit.events import Assert, Event, ItemDraft, Recorded, Revoke, Supersede
from readmit.integrations.mem0.expiry import ending
from readmit.integrations.mem0.ids import item_id, writes_text
from readmit.integrations.mem0.recorder import MemoryKey
from readmit.integrations.team import Member, new_id


def backfill_events(
    histories: Mapping[str, Sequence[Mapping[str, Any]]],
    member: Member,
    keys: Mapping[str, str | None] | None = None,
    *,
    memories: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> list[Event]:
    """The events that replay Mem0 histories (memory id -> ``history()`` rows) for ``member``.

    ``memories`` (by id, as ``get`` returns them) end each memory's items when Mem0 stops
    showing it.
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
            elif writes_text(row):
                key = (keys or {}).get(memory_id)
                draft = ItemDraft(id=item_id(memory_id, n), text=str(row["new_memory"]), key=key)
                draft = ending(draft, (memories or {}).get(memory_id))
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
    memories = {m: memory.get(m) for m in ids}  # for their keys and expiration dates
    keys = {m: key(got) for m, got in memories.items() if key and got is not None}
    events = backfill_events(histories, member, keys, memories=memories)
    return member.record(events) if events else []


async def abackfill(
    memory: Any, member: Member, memory_ids: Iterable[str], *, key: MemoryKey | None = None
) -> list[Recorded]:
    """`backfill` for a ``mem0.AsyncMemory``."""
    ids = list(memory_ids)
    histories = {m: await memory.history(m) for m in ids}
    memories = {m: await memory.get(m) for m in ids}  # for their keys and expiration dates
    keys = {m: key(got) for m, got in memories.items() if key and got is not None}
    events = backfill_events(histories, member, keys, memories=memories)
    return member.record(events) if events else []
