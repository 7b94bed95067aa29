"""The log read back before a departure: events and the items they withdrew.

For items screened less far than a departure (`readmit.admission.context.HistoryLoader`),
and for the events from there an exclusion cites (`named`).
"""

from collections.abc import Iterable

from readmit.admission.context import History
from readmit.events import Assert, Close, Recorded, Revoke, Supersede
from readmit.model import Item
from readmit.store.bodies import BodyCache, event_of, items_by, logged_events
from readmit.store.connection import Connection
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
) -> History:
    """The events of ``ids`` at or before epoch ``upto``, and the items they are about.

    What each stated, withdrew, and every item holding a key it stated (one it may
    have replaced).
    """
    rows = {
        int(epoch): str(body)
        for epoch, body in select_in(db, workspace, "SELECT epoch, body FROM events", "id", ids)
        if int(epoch) <= upto
    }
    events = parsed.fetch(workspace, sorted(rows), lambda: rows.items(), event_of)
    return History(events=tuple(events), items=tuple(_about(db, decoded, workspace, events)))


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
        query = "SELECT id FROM withdrawn WHERE workspace = ? AND epoch <= ? AND id IN "
        rows = db.execute(query + f"({marks})", (workspace, upto, *chunk)).fetchall()
        gone.update(r[0] for r in rows)
    return frozenset(gone)
