"""Obligations stored: the cap on those open, and the one a private memory is bound to."""

import json
from collections.abc import Callable, Sequence

from readmit.errors import InvalidInput
from readmit.events import OpenObligation, Recorded
from readmit.model import Item
from readmit.store.connection import Connection
from readmit.store.damaged import decoded_obligation

_OPEN = (
    "SELECT COUNT(*) FROM obligations o "
    "JOIN events e ON e.workspace = o.workspace AND e.epoch = o.epoch "
    "JOIN agents a ON a.workspace = e.workspace AND a.id = e.author "
    "WHERE o.workspace = ? AND o.resolved_epoch IS NULL AND a.principal = ?"
)
"""The open obligations that agents of one principal opened (an obligation is resolved, and
read, only by its own principal's agents)."""


def over_cap(db: Connection, workspace: str, recorded: Sequence[Recorded], most: int) -> None:
    """Refuse ``recorded`` if a principal that opened obligations in it now holds over ``most``.

    Read in the batch's own transaction, under the workspace's write lock, so concurrent
    batches are counted one after another (a check before the write let 8 batches of 250
    each pass a cap of 256).

    Raises:
        InvalidInput: saying that resolving some makes room (the transaction rolls back).
    """
    authors = sorted({r.event.author for r in recorded if isinstance(r.event, OpenObligation)})
    if not authors:
        return
    marks = ", ".join("?" * len(authors))  # placeholders only: no data in the SQL
    principals = db.execute(
        f"SELECT DISTINCT principal FROM agents WHERE workspace = ? AND id IN ({marks})",  # noqa: S608
        (workspace, *authors),
    ).fetchall()
    for (principal,) in principals:
        (count,) = db.execute(_OPEN, (workspace, principal)).fetchone()
        if count > most:
            raise InvalidInput(
                f"principal {principal!r} would hold {count} open obligations here, over "
                f"{most}; resolve some first"
            )


def bound_item(db: Connection, workspace: str, source: str) -> Item | None:
    """The obligation or frontier ``source`` names, if ``workspace`` has one.

    Found by its id, or its frontier's (m029): every obligation the workspace ever had was
    read and decoded for each memory bound to anything but an item (155 ms at 10,000, under
    the workspace's write lock, so one agent's memories held its teammates' writes).
    """
    rows = db.execute(_BY_ID_OR_FRONTIER, (workspace, source, workspace, source)).fetchall()
    if not rows:  # written since m029 by a readmit before it, which left frontier unset
        rows = db.execute(_UNSET, (workspace,)).fetchall()
    for (body,) in rows:
        obligation = decoded_obligation(body)
        for item in (obligation.item, obligation.frontier):
            if item.id == source:
                return item
    return None


_BY_ID_OR_FRONTIER = (
    "SELECT body FROM obligations WHERE workspace = ? AND id = ? "
    "UNION ALL SELECT body FROM obligations WHERE workspace = ? AND frontier = ?"
)
_UNSET = "SELECT body FROM obligations WHERE workspace = ? AND frontier IS NULL"


def _frontiers(db: Connection) -> None:
    """Fill in each stored obligation's frontier id, from its body (m029)."""
    rows = db.execute("SELECT workspace, id, body FROM obligations").fetchall()
    db.executemany(
        "UPDATE obligations SET frontier = ? WHERE workspace = ? AND id = ?",
        [(json.loads(body)["frontier"]["id"], ws, id_) for ws, id_, body in rows],
    )


FRONTIERS: list[str | Callable[[Connection], None]] = [
    "ALTER TABLE obligations ADD COLUMN frontier TEXT",
    _frontiers,
    "CREATE INDEX obligations_by_frontier ON obligations (workspace, frontier)",
]
"""Migration m029: an obligation found by its frontier's id (`bound_item`)."""
