"""Items a checkpoint lacks that Δ withdraws, quoted to the return as they were held.

D_a holds only what its agent may read. A withdrawal during Δ of an item another
principal asserted before the departure (a revocation, a supersession, or a keyed
assert replacing it) would be news to the return, with no withdrawn text, where the
same history without that departure quotes the item, since its Δ holds the item's
assertion: a verifier that links the withdrawn text to an item of C confirms there and
not here, and a return in between would let back what its twin excludes. The store
quotes each such item instead, wherever it was asserted
(`readmit.admission.invalidation.unquoted.quoted`). Quoted items are never candidates,
and a verdict resting on one shows its text to no reader who may not read it
(`readmit.admission.invalidation.observations.readable`).
"""

from collections.abc import Sequence
from typing import Any

from readmit.model import Item
from readmit.store.bodies import item_of
from readmit.store.connection import Connection
from readmit.store.decoded import BodyCache
from readmit.store.rows import select_in

_HELD = (
    "SELECT i.id, i.body, i.epoch, w.id, w.epoch FROM items i "
    "LEFT JOIN withdrawn w ON w.workspace = i.workspace AND w.id = i.id"
)


def held_at(
    db: Connection,
    cache: BodyCache[str, Item],
    workspace: str,
    departed: int,
    ids: Sequence[str],
    keys: Sequence[str],
) -> tuple[Item, ...]:
    """The items named by one of ``ids`` or holding one of ``keys`` when ``departed`` was.

    Asserted at or before epoch ``departed`` and not withdrawn by then; a withdrawal
    recorded without its epoch (before migration m012) may have come later, and is quoted.
    Oldest first.
    """
    rows: list[tuple[Any, ...]] = [  # (id, body, epoch, the withdrawal's id and epoch)
        *select_in(db, workspace, _HELD, "i.id", ids, where="i.workspace"),
        *select_in(db, workspace, _HELD, "i.key", keys, where="i.workspace"),
    ]
    bodies = {
        str(item_id): str(body)
        for item_id, body, epoch, withdrawn, at in rows
        if int(epoch) <= departed and (withdrawn is None or at is None or int(at) > departed)
    }
    found = cache.fetch(workspace, sorted(bodies), lambda: bodies.items(), item_of)
    return tuple(sorted(found, key=lambda i: (i.epoch, i.id)))
