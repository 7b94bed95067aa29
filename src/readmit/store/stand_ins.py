"""Verdicts resting on an item put in a withdrawn statement's place, followed as it goes.

A verdict whose evidence withdrew a statement and put an item in its place (a booking
"confirmed until Friday" in the place of one with no end) also lapses where that item is
replaced by one that holds wherever the statement held, for every reader of the
invalidated item (`readmit.admission.invalidation.narrowed`). A replacement that does not
stands in its turn; a revocation or closing of the stand-in leaves nothing to follow. The
stand-in is kept with the verdict (``restore_in_place``) and moved by the writer of each
event that withdraws it (`lapse`), as the verdicts' other restorations are
(`readmit.store.verdicts`).
"""

from collections.abc import Sequence
from functools import partial

from readmit.admission.context import Restoring
from readmit.admission.invalidation.narrowed import Handles, Paths, holds_in_place
from readmit.events import Assert, Recorded, Supersede
from readmit.model import Scope
from readmit.store.bodies import event_of
from readmit.store.connection import Connection
from readmit.store.readers import item_readers, may_replace, scope_of, seen_by_all
from readmit.store.restoring import Rules
from readmit.store.rows import Known, select_in, stored_item


def paths(db: Connection, workspace: str, handles: Handles) -> Paths:
    """The walks along ``handles``' stand-ins, each step read once for all verdicts walked.

    Verdicts resting on different events of one chain each walked it to its end: returns
    keeping 128 verdicts each along a chain of 1,000 replacements took up to 1.7 s.
    """
    return Paths(
        handles.touching, partial(may_replace, db, workspace), partial(item_readers, db, workspace)
    )


def placed_now(
    db: Connection,
    workspace: str,
    walks: Paths,
    start: int,
    restoring: Restoring,
    scope: Scope | None,
) -> tuple[int | None, str | None]:
    """(epoch the events after ``start`` restore at, or ``None``; the stand-in then, or none).

    ``walks``: along the stand-ins of the log from epoch ``start``, the evidence's, on
    (`paths`); ``restoring``: what restores the verdict, its stand-in at ``start``;
    ``scope``: who may read the invalidated item.
    """
    placed = restoring.in_place
    if placed is None or restoring.withdrawn is None:
        return None, None
    at, now = walks.follow(start, placed, partial(_restores, db, workspace, restoring, scope))
    return at, None if now is None else now[0]


def _restores(
    db: Connection, workspace: str, restoring: Restoring, scope: Scope | None, recorded: Recorded
) -> bool:
    """Whether ``recorded``, replacing the stand-in, holds as the withdrawn statement did."""
    event, withdrawn = recorded.event, restoring.withdrawn
    return (
        isinstance(event, Assert | Supersede)
        and withdrawn is not None
        and holds_in_place(event, withdrawn)
        and seen_by_all(db, workspace, recorded, scope, restoring.said)
    )


def lapse(
    db: Connection,
    workspace: str,
    recorded: Recorded,
    withdrew: Sequence[str],
    rules: Rules,
    known: Known | None,
) -> None:
    """Follow the stand-ins ``recorded`` withdrew: lapse the verdicts it restores, or move.

    The writer says what it withdrew, so the stand-in is not read (one written earlier in
    the same batch is not stored yet): what replaced it restores the verdict, or stands in
    its turn; a revocation or closing leaves none. Verdicts resting on one evidence for
    readers alike are decided once (many pickups resting on one booking); ``rules`` reads
    each row their restorations need once (the writer's, for its batch), and ``known`` gives
    the invalidated items the store has decoded.
    """
    rows = select_in(
        db,
        workspace,
        "SELECT v.item, v.event, v.premise, i.body FROM invalidations v LEFT JOIN items i "
        "ON i.workspace = v.workspace AND i.id = v.item",
        "v.restore_in_place",
        withdrew,
        "AND v.lapsed_epoch IS NULL",
        where="v.workspace",
    )
    event, moved = recorded.event, list[tuple[int | None, str | None, str, str]]()
    decided: dict[tuple[str, str | None, Scope | None], bool] = {}
    held = list(rows)
    found = known([r[0] for r in held]) if known and isinstance(event, Assert | Supersede) else {}
    for item, evidence, premise, body in held:
        at, now = None, None
        if isinstance(event, Assert | Supersede):
            scope = None if body is None else stored_item(found, item, body).scope
            if (key := (evidence, premise, scope)) not in decided:
                restoring = rules.restoration(db, workspace, evidence, premise)
                decided[key] = _restores(db, workspace, restoring, scope, recorded)
            at, now = (recorded.epoch, None) if decided[key] else (None, event.item.id)
        moved.append((at, now, workspace, item))
    db.executemany(
        "UPDATE invalidations SET lapsed_epoch = ?, restore_in_place = ? "
        "WHERE workspace = ? AND item = ?",
        moved,
    )


def stand_ins_of_standing(db: Connection) -> None:
    """Keep each standing verdict's stand-in, lapsing those already restored (m026)."""
    rows = db.execute(
        "SELECT workspace, item, event, event_epoch, premise FROM invalidations "
        "WHERE lapsed_epoch IS NULL AND restore_text IS NOT NULL ORDER BY workspace, event_epoch"
    ).fetchall()
    logs: dict[str, Paths] = {}
    rules = Rules()
    for workspace, item, evidence, epoch, premise in rows:
        restoring = rules.restoration(db, workspace, evidence, premise)
        if restoring.in_place is None:
            continue
        if workspace not in logs:  # read once a workspace, from its earliest such evidence
            logs[workspace] = paths(db, workspace, Handles([_log(db, workspace, int(epoch))]))
        scope = scope_of(db, workspace, item)
        at, now = placed_now(db, workspace, logs[workspace], epoch, restoring, scope)
        db.execute(
            "UPDATE invalidations SET lapsed_epoch = ?, restore_in_place = ? "
            "WHERE workspace = ? AND item = ?",
            (at, None if at is not None else now, workspace, item),
        )


def _log(db: Connection, workspace: str, start: int) -> list[Recorded]:
    """The events of ``workspace`` after epoch ``start`` that may withdraw or replace."""
    rows = db.execute(
        "SELECT epoch, body FROM events WHERE workspace = ? AND epoch > ? "
        "AND op IN ('assert', 'supersede', 'revoke', 'close') ORDER BY epoch",
        (workspace, start),
    ).fetchall()
    return [event_of(int(n), str(body)) for n, body in rows]
