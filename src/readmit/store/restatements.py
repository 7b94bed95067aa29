"""Migration m016: verdicts lapsed by a restatement that no longer restores stand again."""

import json

from readmit.events import Recorded
from readmit.store.connection import Connection
from readmit.store.verdicts import restores, scope_of, seen_by_all
from readmit.wire import parse_event


def bounded_lapses_stand(db: Connection) -> None:
    """Lapse each verdict a restatement lapsed by the first that restores today, if any.

    Before m016, a restatement bounded in time, task or purpose (`readmit.events.restates`)
    lapsed a verdict, which then stayed lapsed once the statement ended. Each verdict
    lapsed by a restatement is now lapsed by the first that restores under today's rule,
    at or after the one that lapsed it (the rule only narrowed), or stands.
    """
    lapsed = db.execute(
        "SELECT workspace, item, restore_text, lapsed_epoch FROM invalidations "
        "WHERE lapsed_epoch IS NOT NULL AND restore_text IS NOT NULL"
    ).fetchall()
    for workspace, item, text, epoch in lapsed:
        scope = scope_of(db, workspace, item)
        rows = db.execute(
            "SELECT epoch, body FROM events WHERE workspace = ? AND epoch >= ? "
            "AND op IN ('assert', 'supersede') ORDER BY epoch",
            (workspace, epoch),
        ).fetchall()
        logged = (Recorded(epoch=n, event=parse_event(json.loads(b), n)) for n, b in rows)
        first = next(
            (
                r.epoch
                for r in logged
                if restores(r, text, None) and seen_by_all(db, workspace, r, scope)
            ),
            None,
        )
        if first != epoch:
            db.execute(
                "UPDATE invalidations SET lapsed_epoch = ? WHERE workspace = ? AND item = ?",
                (first, workspace, item),
            )
