"""The log read back before a departure: events and the items they withdrew.

For items screened less far than a departure (`readmit.admission.context.HistoryLoader`),
and for the events from there an exclusion cites (`named`).
"""

from collections.abc import Iterable
from typing import Any

from readmit.admission.context import History, Told
from readmit.events import Assert, Close, Recorded, Revoke, Supersede
from readmit.model import Item
from readmit.store.bodies import event_of, items_by, logged_events
from readmit.store.connection import Connection
from readmit.store.decoded import BodyCache
from readmit.store.rows import CHUNK, select_in


def history(
    db: Connection,
    parsed: BodyCache[int, Recorded],
    decoded: BodyCache[str, Item],
    workspace: str,
    upto: int,
    after: int,
    news: bool = True,
) -> History:
    """The events in (``after``, ``upto``] and the items they withdrew or replaced.

    Without ``news``, only the events that can withdraw an item are read.
    """
    events = tuple(logged_events(db, parsed, workspace, after, upto, not news))
    found = _about(db, decoded, workspace, events, stated=False)
    return History(events=events, items=tuple(found), gone=_gone(db, workspace, found, after))


def named(
    db: Connection,
    parsed: BodyCache[int, Recorded],
    decoded: BodyCache[str, Item],
    workspace: str,
    upto: int,
    ids: list[str],
) -> dict[str, Told]:
    """The events of ``ids`` at or before epoch ``upto``, each with the items it is about.

    What it stated or withdrew (``None`` for one the store lacks), and what its key
    replaced, as the writer recorded it. A replacement from before migration m012 kept
    no epoch: such an item is taken to be replaced by each event that could have (after
    it, not hearsay, by an author who may read it).
    """
    rows = {
        int(epoch): str(body)
        for epoch, body in select_in(db, workspace, "SELECT epoch, body FROM events", "id", ids)
        if int(epoch) <= upto
    }
    events = parsed.fetch(workspace, sorted(rows), lambda: rows.items(), event_of)
    items = {i.id: i for i in _about(db, decoded, workspace, events)}
    replaced = _replaced(db, workspace, [i.id for i in items.values() if i.key is not None])
    told = {}
    for r in events:
        about: list[Item | None] = []
        if isinstance(r.event, Revoke | Close | Supersede):
            about.append(items.get(r.event.target))
        if isinstance(r.event, Assert | Supersede):
            about.append(items.get(r.event.item.id))
            held = [i for i in items.values() if i.key is not None and i.key == r.event.item.key]
            about += [i for i in held if replaced.get(i.id, -1) == r.epoch]
            if any(replaced.get(i.id, -1) is None for i in held) and not r.event.item.unconfirmed:
                who = _agent(db, workspace, r.event.author)
                about += [
                    i
                    for i in held
                    if replaced.get(i.id, -1) is None
                    and i.epoch < r.epoch
                    and (who is None or i.scope.readable_by(*who))
                ]
        told[r.event.id] = (r, tuple(about))
    return told


def _agent(db: Connection, workspace: str, agent: str) -> tuple[str, str] | None:
    """``agent``'s principal and role (``None``: not known, so taken to read anything)."""
    query = "SELECT principal, role FROM agents WHERE workspace = ? AND id = ?"
    row = db.execute(query, (workspace, agent)).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def _replaced(db: Connection, workspace: str, ids: list[str]) -> dict[str, int | None]:
    """Of ``ids``, those replaced by a keyed item, with the epoch it came at (if kept)."""
    query = "SELECT id, epoch FROM withdrawn"
    found: list[tuple[Any, ...]] = [
        *select_in(db, workspace, query, "id", ids, extra="AND status = 'replaced'")
    ]  # (id, epoch): the epoch is NULL for a withdrawal from before migration m012
    return {str(i): None if at is None else int(at) for i, at in found}


def _about(
    db: Connection,
    decoded: BodyCache[str, Item],
    workspace: str,
    events: Iterable[Recorded],
    stated: bool = True,
) -> list[Item]:
    """The items ``events`` withdrew, hold the keys they stated, and (``stated``) stated."""
    ids, keys = set(), set()
    for r in events:
        if isinstance(r.event, Revoke | Close | Supersede):
            ids.add(r.event.target)
        if isinstance(r.event, Assert | Supersede):
            if stated:
                ids.add(r.event.item.id)
            if r.event.item.key is not None:
                keys.add(r.event.item.key)
    found = items_by(db, decoded, workspace, "id", sorted(ids))
    return found + items_by(db, decoded, workspace, "key", sorted(keys))


def _gone(db: Connection, workspace: str, items: list[Item], upto: int) -> frozenset[str]:
    """Of ``items``, those withdrawn at or before ``upto``.

    As far as the store knows: a withdrawal from before migration m012 kept no epoch,
    and is not counted (its item is taken to hold its key still: more is excluded).
    """
    ids = sorted({i.id for i in items})
    gone: set[str] = set()
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
        # ``+ 0``: by the ids; by m027's index of epochs SQLite read every earlier withdrawal.
        query = "SELECT id FROM withdrawn WHERE workspace = ? AND epoch + 0 <= ? AND id IN "
        rows = db.execute(query + f"({marks})", (workspace, upto, *chunk)).fetchall()
        gone.update(r[0] for r in rows)
    return frozenset(gone)
