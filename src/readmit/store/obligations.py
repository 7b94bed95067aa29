"""The cap on the obligations a principal holds open (`SqlStore.append`'s ``max_open``)."""

from collections.abc import Sequence

from readmit.errors import InvalidInput
from readmit.events import OpenObligation, Recorded
from readmit.store.connection import Connection

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
