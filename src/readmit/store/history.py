"""The log read back before a departure: events and the items they withdrew.

For items screened less far than a departure (`readmit.admission.context.HistoryLoader`),
and for the events from there an exclusion cites (`named`).
"""

from collections.abc import Iterable

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
    """The events of ``ids`` at or before epoch ``upto``, each with the item it is about.

    The item it stated (an assert or a supersession), or revoked or closed (``None`` for
    one the store lacks; none for evidence): who may read it decides who is told of the
    event (`readmit.admission.hidden`), whatever else it withdrew or its key replaced.
    """
    rows = {
        int(epoch): str(body)
        for epoch, body in select_in(db, workspace, "SELECT epoch, body FROM events", "id", ids)
        if int(epoch) <= upto
    }
    events = parsed.fetch(workspace, sorted(rows), lambda: rows.items(), event_of)
    subjects = {r.event.id: _subject(r) for r in events}
    wanted = sorted({s for s in subjects.values() if s is not None})
    items = {i.id: i for i in items_by(db, decoded, workspace, "id", wanted)}
    return {
        r.event.id: (r, () if (s := subjects[r.event.id]) is None else (items.get(s),))
        for r in events
    }


def _subject(r: Recorded) -> str | None:
    """The id of the item ``r`` stated, or revoked or closed (``None``: it names none)."""
    if isinstance(r.event, Assert | Supersede):
        return r.event.item.id
    if isinstance(r.event, Revoke | Close):
        return r.event.target
    return None


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
