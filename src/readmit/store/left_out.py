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
was replaced in Δ if Δ asserts its key and no item of that key that could have replaced
it (a confirmed one, by an author who may read it, as the writer replaces) came between
it and the departure; otherwise it is taken to have been replaced before the departure,
since counting its key as one D_a held would let a watermark stand that should be cut
(`readmit.admission.invalidation.unquoted`).
"""

from collections.abc import Callable, Mapping, Sequence
from functools import cache as cache_once

from readmit.events import Assert, Close, Recorded, Revoke, Supersede
from readmit.model import Agent, Item
from readmit.store.bodies import items_by
from readmit.store.connection import Connection
from readmit.store.decoded import BodyCache

_NOT_HELD = (
    "SELECT i.id, i.key, w.status, w.epoch FROM items i "
    "LEFT JOIN withdrawn w ON w.workspace = i.workspace AND w.id = i.id "
    "WHERE i.workspace = ? AND i.epoch <= ? "
    "AND NOT EXISTS (SELECT 1 FROM checkpoint_items k WHERE k.checkpoint = ? AND k.item = i.id) "
    "AND (w.id IS NULL OR w.epoch IS NULL OR w.epoch > ?) ORDER BY i.id"
)
"""The items asserted by a checkpoint's epoch, not in it, and not known withdrawn by then."""
_KEY_BETWEEN = (  # ``+ 0``: probed by key, not by a scan of the epochs (`absence`)
    "SELECT id FROM items WHERE workspace = ? AND key = ? AND epoch + 0 > ? AND epoch + 0 <= ?"
)


def unrecorded(
    db: Connection,
    cache: BodyCache[str, Item],
    workspace: str,
    checkpoint: tuple[int, int],
    reader: Agent,
    delta: Sequence[Recorded],
    agents: Callable[[], Mapping[str, Agent]],
) -> tuple[Item, ...]:
    """What ``checkpoint`` (its id and epoch) left out that ``reader``, its agent, may read.

    ``delta``: the log after the checkpoint, where withdrawals from before m012 are found;
    ``agents``: the workspace's, read once if an undated replacement must be placed.
    Only the rows that may be such an item are decoded.
    """
    cp_id, cp_epoch = checkpoint
    rows = db.execute(_NOT_HELD, (workspace, cp_epoch, cp_id, cp_epoch)).fetchall()
    named, keyed = _withdrawals(delta)
    undated = {r[0] for r in rows if r[2] is not None and r[3] is None}
    maybe = [
        r[0]
        for r in rows
        if r[0] not in undated or r[0] in named or (r[2] == "replaced" and r[1] in keyed)
    ]
    found = []
    authors = cache_once(agents)
    for item in sorted(items_by(db, cache, workspace, "id", maybe), key=lambda i: i.id):
        if not item.scope.readable_by(reader.principal, reader.role):
            continue
        if (
            item.id not in undated
            or item.id in named
            or not _replaced_before(db, cache, workspace, item, cp_epoch, authors)
        ):
            found.append(item)
    return tuple(found)


def _replaced_before(
    db: Connection,
    cache: BodyCache[str, Item],
    workspace: str,
    item: Item,
    upto: int,
    agents: Callable[[], Mapping[str, Agent]],
) -> bool:
    """Whether an item of ``item``'s key asserted after it, by ``upto``, may have replaced it.

    As the writer replaces: a confirmed item whose author may read ``item`` (hearsay and an
    author of another principal replace nothing).
    """
    args = (workspace, item.key, item.epoch, upto)
    ids = [r[0] for r in db.execute(_KEY_BETWEEN, args).fetchall()]
    if not ids:
        return False
    for later in items_by(db, cache, workspace, "id", ids):
        author = agents().get(later.author)
        if later.receipt is not None and (
            author is None or item.scope.readable_by(author.principal, author.role)
        ):
            return True
    return False


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
