"""The log read back before a departure: events and the items they withdrew.

For items screened less far than a departure (`readmit.admission.context.HistoryLoader`).
"""

from readmit.admission.context import History
from readmit.events import Assert, Close, Recorded, Revoke, Supersede
from readmit.model import Item
from readmit.store.bodies import BodyCache, items_by, logged_events
from readmit.store.connection import Connection


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
    targets = {r.event.target for r in events if isinstance(r.event, Revoke | Close | Supersede)}
    keys = {
        r.event.item.key
        for r in events
        if isinstance(r.event, Assert | Supersede) and r.event.item.key is not None
    }
    found = items_by(db, decoded, workspace, "id", sorted(targets))
    found += items_by(db, decoded, workspace, "key", sorted(keys))
    return History(events=events, items=tuple(found))
