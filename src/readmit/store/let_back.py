"""What a departure left out under a verdict that no longer binds: let back, screened again.

A departure leaves an item under a standing verdict out of its checkpoint (and what rests
on it: its premise fell), keeping the verdict's number (m030). Once that verdict lapses,
or another stands in its place, a return to the departure takes the item back among its
candidates (`readmitted`), to be screened again from the reader's watermark
(`readmit.store.verdicts.load`).
"""

from datetime import datetime
from operator import attrgetter

from readmit.admission.context import items_by_id
from readmit.model import Item
from readmit.store.connection import Connection, stamp
from readmit.store.rows import WITHDRAWN, select_in


def readmitted(
    db: Connection,
    workspace: str,
    items: tuple[Item, ...],
    left: tuple[Item, ...],
    at: datetime,
    departure: tuple[int, int],
) -> tuple[tuple[Item, ...], tuple[Item, ...]]:
    """C's ``items`` and what its departure ``left`` out, less what a lapsed verdict let back.

    Lapsed by ``at``, the return's time, where what a verdict rested on has ended.
    ``departure``: the checkpoint's id and epoch.

    Those left out under a verdict lapsed since join C's items (and leave ``left``), and
    so do those on which another verdict stands now than the one the departure kept: one
    decided after its epoch, or one whose number (m030) is not the one it kept (an older
    readmit still running renews a verdict without numbering it: the epoch tells). The
    one that left it out lapsed, and it was found stale again. The first return after that
    lapse let it back and excluded it, a second one to the same departure found the new
    verdict standing and left it out unnamed (a probe), also where the new verdict was
    decided at the departure's own epoch, with nothing new since.

    The departure left an item under a standing verdict out of its checkpoint, and the
    items resting on it (their premise fell); once the verdict lapses, nothing else puts
    them back, and the return would neither screen it again nor see its dependents'
    premise. Still active, they are candidates again (after C's own, by id), screened from
    the reader's watermark (`readmit.store.verdicts.load`).
    """
    if not left:
        return items, left
    held = items_by_id(items)  # made once per tuple: the return needs it anyway
    out = [i for i in left if i.id not in held]
    if not out:
        return items, left
    ids, now = [i.id for i in out], stamp(at)
    found = list(select_in(db, workspace, _LAPSED, "item", ids))
    kept = dict(db.execute(_KEPT, (departure[0],)).fetchall()) if found else {}
    back = {
        item
        for item, lapsed, until, decided, number in found
        if lapsed is not None
        or (until is not None and until <= now)
        or decided > departure[1]  # never the one that stood at the departure
        or kept.get(item, number) not in (None, number)  # another, decided at its epoch
    }
    resting: dict[str, list[str]] = {}  # what rests on an item let back, left out as it fell
    for i in out:
        for premise in i.depends_on:
            resting.setdefault(premise, []).append(i.id)
    todo = list(back)
    while todo:
        grown = [i for i in resting.get(todo.pop(), ()) if i not in back]
        back.update(grown)
        todo += grown
    back -= {r[0] for r in select_in(db, workspace, WITHDRAWN, "id", back)}
    if not back:
        return items, left
    extra = tuple(sorted((i for i in left if i.id in back), key=attrgetter("id")))
    return items + extra, tuple(i for i in left if i.id not in back)


_LAPSED = "SELECT item, lapsed_epoch, restore_until, decided_epoch, verdict FROM invalidations"
_KEPT = "SELECT item, verdict FROM checkpoint_left_out WHERE checkpoint = ?"
