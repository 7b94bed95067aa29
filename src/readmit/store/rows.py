"""The rows a batch reads and writes, for `readmit.store.writer`.

Item rows as the batch sees them, what a batch names, and the set-based reads
and bulk inserts the writer does with them.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from readmit.events import Assert, Close, Event, Evidence, OpenObligation, Revoke, Supersede
from readmit.model import Item
from readmit.store.connection import Connection
from readmit.store.damaged import decoded_item

ACTIVE = "NOT EXISTS (SELECT 1 FROM withdrawn w WHERE w.workspace = i.workspace AND w.id = i.id)"
"""That the item row ``i`` is active: nothing withdrew it (a row of ``withdrawn`` would)."""
WITHDRAWN = "SELECT id FROM withdrawn"
"""The withdrawn items, for `select_in` by ``id``."""
CHUNK = 500
"""Values per ``IN (...)`` list (well under every driver's parameter limit)."""
Row = tuple[object, ...]
Known = Callable[[list[str]], Mapping[str, Item]]
"""What a store has already decoded of some items, by id (a committed body never changes;
`docs/security.md`: no process may run on while its database is replaced)."""


def stored_item(known: Mapping[str, Item], item_id: str, body: str) -> Item:
    """Stored ``item_id``: as the store decoded it (``known``), else parsed from ``body``."""
    found = known.get(item_id)
    return found if found is not None else decoded_item(body, item_id)


@dataclass(slots=True)
class ItemRow:
    """One item as this batch sees it: stored or written by the batch, and its status."""

    body: str
    status: str
    new: bool
    decoded: Item | None = None
    epoch: int = 0
    """The epoch of a row the batch writes (``new``)."""
    key: str | None = None
    """The key of a row the batch writes."""

    def item(self) -> Item:
        if self.decoded is None:
            self.decoded = decoded_item(self.body)
        return self.decoded


@dataclass(slots=True)
class References:
    """What a batch names: ids it claims, items it targets or builds on, keys, evidence."""

    names: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)
    """The names that are not items' (evidence sources, obligations, frontiers)."""
    targets: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    cites: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, events: Sequence[Event]) -> "References":
        refs = cls()
        for event in events:
            match event:
                case Evidence():
                    refs.others.add(event.source_id)
                case Assert() | Supersede():
                    refs.names.add(event.item.id)
                    refs.targets |= event.item.depends_on
                    refs.cites |= event.item.cites
                    if event.item.key is not None:
                        refs.keys.add(event.item.key)
                case OpenObligation():
                    refs.others |= {event.obligation.id, event.obligation.frontier_id}
            if isinstance(event, Supersede | Revoke | Close):
                refs.targets.add(event.target)
        refs.names |= refs.others
        return refs


def select_in(
    db: Connection,
    workspace: str,
    query: str,
    column: str,
    values: Iterable[str],
    extra: str = "",
    where: str = "workspace",
) -> Iterator[tuple[Any, ...]]:
    """Rows of ``query`` in ``workspace`` whose ``column`` is one of ``values``.

    PostgreSQL gets the values as one array parameter, SQLite as ``IN`` lists of
    `CHUNK` placeholders.
    """
    ordered = sorted(values)
    if not ordered:
        return
    if db.dialect == "postgres":
        # One index probe a value, whatever the planner's statistics say: the lateral
        # subquery (kept apart by OFFSET 0) runs once a value. A table loaded faster than
        # autovacuum analyzes it looks tiny to the planner, and both ``= ANY(?)`` and a plain
        # join with the array then read the whole workspace (with ``= ANY``: 25-70 ms a
        # lookup at 100k events; joined: up to seconds, rescanning the array a row).
        # The SQL pieces are the writer's own; the values go as parameters.
        lateral = f"({query} WHERE {where} = ? AND {column} = batch.value {extra} OFFSET 0)"
        yield from db.execute(
            f"SELECT found.* FROM unnest(?::text[]) AS batch(value), LATERAL {lateral} AS found",  # noqa: S608
            (ordered, workspace),
        ).fetchall()
        return
    for start in range(0, len(ordered), CHUNK):
        chunk = ordered[start : start + CHUNK]
        marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
        yield from db.execute(
            f"{query} WHERE {where} = ? AND {column} IN ({marks}) {extra}", (workspace, *chunk)
        ).fetchall()


def insert(db: Connection, table: str, columns: tuple[str, ...], rows: Sequence[Row]) -> None:
    """Insert ``rows`` into ``table`` in one operation (PostgreSQL: COPY)."""
    if rows:
        db.copy(table, columns, rows)
