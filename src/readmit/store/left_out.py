"""What a checkpoint left out, for one made before its store recorded it (migration m013).

A checkpoint holds D_a, the items its agent may read that were active and still valid
when it departed; since m012 it also records the ids of the rest of what the agent could
read then (`readmit.store.absence.checkpoint`), so that a later withdrawal of one is
quoted to the return as a withdrawal (`readmit.admission.context.ReturnContext.left_out`).
A checkpoint made before recorded nothing of it, and a return to it found nothing left
out: it failed open as it did before m012.

The rest can be found again from what the store keeps. Every item is asserted at one
epoch and withdrawn at most once, and a checkpoint took every item its agent may read
that was active and valid. So an item its agent may read, asserted by the checkpoint's
epoch, not in it and not withdrawn by that epoch, is one it left out. A withdrawal's
epoch is recorded since m012; one from before is found in Δ: an event naming the item
(a revocation, closing or supersession) withdrew it there. An item replaced by its key
was replaced in Δ if Δ asserts its key and no item of that key came between it and the
departure; otherwise it is taken to have been replaced before the departure, since
counting its key as one D_a held would let a watermark stand that should be cut
(`readmit.admission.invalidation.unquoted`).
"""

from collections.abc import Sequence

from readmit.events import Assert, Close, Recorded, Revoke, Supersede
from readmit.model import Agent, Item
from readmit.store.bodies import BodyCache, items_by
from readmit.store.connection import Connection

_NOT_HELD = (
    "SELECT i.id, w.status, w.epoch FROM items i "
    "LEFT JOIN withdrawn w ON w.workspace = i.workspace AND w.id = i.id "
    "WHERE i.workspace = ? AND i.epoch <= ? "
    "AND NOT EXISTS (SELECT 1 FROM checkpoint_items k WHERE k.checkpoint = ? AND k.item = i.id) "
    "AND (w.id IS NULL OR w.epoch IS NULL OR w.epoch > ?) ORDER BY i.id"
)
"""The items asserted by a checkpoint's epoch, not in it, and not known withdrawn by then."""
_KEY_BETWEEN = (
    "SELECT 1 FROM items WHERE workspace = ? AND key = ? AND epoch > ? AND epoch <= ? LIMIT 1"
)


def unrecorded(
    db: Connection,
    cache: BodyCache[str, Item],
    workspace: str,
    checkpoint: tuple[int, int],
    reader: Agent,
    delta: Sequence[Recorded],
) -> tuple[Item, ...]:
    """What ``checkpoint`` (its id and epoch) left out that ``reader``, its agent, may read.

    ``delta``: the log after the checkpoint, where withdrawals from before m012 are found.
    """
    cp_id, cp_epoch = checkpoint
    rows = db.execute(_NOT_HELD, (workspace, cp_epoch, cp_id, cp_epoch)).fetchall()
    undated = {r[0]: r[1] for r in rows if r[1] is not None and r[2] is None}
    items = items_by(db, cache, workspace, "id", [r[0] for r in rows])
    named, keyed = _withdrawals(delta)
    found = []
    for item in sorted(items, key=lambda i: i.id):
        if not item.scope.readable_by(reader.principal, reader.role):
            continue
        status = undated.get(item.id)
        if status is None or item.id in named:
            found.append(item)
        elif status == "replaced" and item.key in keyed:
            between = (workspace, item.key, item.epoch, cp_epoch)
            if db.execute(_KEY_BETWEEN, between).fetchone() is None:
                found.append(item)
    return tuple(found)


def _withdrawals(delta: Sequence[Recorded]) -> tuple[set[str], set[str]]:
    """The ids ``delta`` names as withdrawn, and the keys it asserts."""
    named: set[str] = set()
    keyed: set[str] = set()
    for recorded in delta:
        event = recorded.event
        if isinstance(event, Revoke | Close | Supersede):
            named.add(event.target)
        if isinstance(event, Assert | Supersede) and event.item.key is not None:
            keyed.add(event.item.key)
    return named, keyed
