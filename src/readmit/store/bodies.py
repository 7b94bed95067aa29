"""Stored bodies decoded once per store: items and logged events never change once committed.

An item's body is immutable after its transaction commits (its withdrawal is a row
of ``withdrawn``, read fresh every time), and the event log is append-only, so
a decoded item or a parsed event can serve every later read. `BodyCache`
(`readmit.store.decoded`) keeps them per store and workspace; only committed rows are
read here (nothing appends and reads the log in one transaction).
"""

import threading
from collections.abc import Callable
from datetime import datetime
from functools import partial
from operator import attrgetter, itemgetter
from typing import NamedTuple

from readmit.admission.memo import grown_from, keep
from readmit.events import Recorded
from readmit.model import Agent, Item
from readmit.store.connection import Connection
from readmit.store.damaged import decoded_event, decoded_item
from readmit.store.decoded import CACHE_LIMIT, BodyCache, units
from readmit.store.rows import ACTIVE

LAST_EPOCH = 2**62
"""An epoch no log reaches (the open end of a range of events)."""
_CHECKPOINT_IDS = "SELECT item FROM checkpoint_items WHERE checkpoint = ?"
"""A checkpoint's item ids: D_a, in code point order once sorted in Python."""
_LEFT_OUT_IDS = "SELECT item FROM checkpoint_left_out WHERE checkpoint = ? ORDER BY item"
"""What a checkpoint left out as no longer valid that its agent may read (migration m012)."""
_LATER_IDS = "SELECT id FROM items WHERE workspace = ? AND epoch > ? AND epoch <= ? ORDER BY epoch"
"""The ids of the items asserted in an epoch range, in epoch order (one item an epoch)."""
_ITEMS_BY = {
    "id": "SELECT id, body FROM items WHERE workspace = ? AND id",
    "key": "SELECT id, body FROM items WHERE workspace = ? AND key",
}


def active_items(db: Connection, cache: BodyCache[str, Item], workspace: str) -> list[Item]:
    """The active items (none withdrawn), decoding only the bodies no earlier read decoded.

    Where only a few are new to the cache, only theirs are read (`BodyCache.fetch`).
    """
    ids = [r[0] for r in db.execute("SELECT id " + _ACTIVE, (workspace,)).fetchall()]
    rows = lambda: db.execute("SELECT id, body " + _ACTIVE, (workspace,)).fetchall()  # noqa: E731
    return cache.fetch(workspace, ids, rows, item_of, partial(_rows_by, db, workspace, "id"))


_ACTIVE = "FROM items i WHERE workspace = ? AND " + ACTIVE
_ID = attrgetter("id")
_FIRST = itemgetter(0)


def readable_items(
    db: Connection, cache: BodyCache[str, Item], workspace: str, who: Agent
) -> list[Item]:
    """The active items ``who`` may read, by id in code point order.

    As Python sorts: a PostgreSQL collation would sort them otherwise.
    """
    every = active_items(db, cache, workspace)
    return sorted((i for i in every if i.scope.readable_by(who.principal, who.role)), key=_ID)


class _Items(NamedTuple):
    """C's items at an epoch, and their ids in the same order."""

    items: tuple[Item, ...]
    ids: tuple[str, ...]


_Return = tuple[str, str, datetime, int]
"""A return: its workspace, agent, time and epoch."""


class Departures:
    """Each checkpoint's items, decoded, in D_a's order, and C's items and Δ at each epoch.

    A checkpoint's rows are written once, with the departure, and an item's body never
    changes after commit, so every return to the same departure can reuse them: a warm
    return to a 100k-item checkpoint no longer reads, sorts and looks up 100k ids. The
    items asserted up to an epoch are fixed once that epoch is committed (writers of a
    workspace commit in epoch order), so a return at the same epoch as an earlier one
    gets the very same tuples of C's items and of Δ, and what is derived from them alone
    (`readmit.admission.context.ReturnContext.by_id`, explicit invalidation's split of
    C's items) is derived once. The memos start over when the tuples they hold would cost
    more than ``limit`` units in all, as the decoded caches count them (`units`: one an item
    or event, and one a KiB of its text; counting items alone, tuples of 16,384-character
    texts could hold 16 GB, a review's finding).
    """

    def __init__(self, limit: int = CACHE_LIMIT) -> None:
        self._lock = threading.Lock()
        self._items: dict[int, tuple[tuple[Item, ...], tuple[str, ...]]] = {}
        self._left_out: dict[int, tuple[Item, ...]] = {}
        self._contexts: dict[tuple[int, int], tuple[tuple[Item, ...], _Items]] = {}
        self._deltas: dict[tuple[str, int, int], tuple[Recorded, ...]] = {}
        self._returns: dict[_Return, int] = {}
        self._size = 0
        self.limit = limit

    def _held(self, size: int, whole: Callable[[], int] | None = None) -> None:
        """Make room for ``size`` more units (the caller holds the lock).

        ``whole``: what the tuple that grew by them costs, counted after a start over.
        """
        if self._size + size > self.limit:
            self._items.clear()
            self._left_out.clear()
            self._contexts.clear()
            self._deltas.clear()
            self._size = 0
            size = size if whole is None else whole()
        self._size += size

    def left_out(
        self,
        db: Connection,
        cache: BodyCache[str, Item],
        workspace: str,
        checkpoint: int,
        unrecorded: Callable[[], tuple[Item, ...]] | None = None,
    ) -> tuple[Item, ...]:
        """What ``checkpoint`` left out as no longer valid that its agent may read.

        ``unrecorded``: how to find it for a checkpoint made before it was recorded
        (`readmit.store.left_out`). The same tuple for every return to it: what derives
        from it is remembered with C.
        """
        with self._lock:
            found = self._left_out.get(checkpoint)
        if found is not None:
            return found
        if unrecorded is not None:
            found = unrecorded()
        else:
            ids = [r[0] for r in db.execute(_LEFT_OUT_IDS, (checkpoint,)).fetchall()]
            found = tuple(items_by(db, cache, workspace, "id", ids)) if ids else ()
        with self._lock:
            if checkpoint not in self._left_out:
                self._held(units(found))
                self._left_out[checkpoint] = found
        return self._left_out.get(checkpoint, found)

    def items(
        self, db: Connection, cache: BodyCache[str, Item], workspace: str, checkpoint: int
    ) -> tuple[tuple[Item, ...], tuple[str, ...]]:
        """``checkpoint``'s items, by id, and their ids."""
        with self._lock:
            found = self._items.get(checkpoint)
        if found is not None:
            return found
        ids = sorted(i for (i,) in db.execute(_CHECKPOINT_IDS, (checkpoint,)).fetchall())
        items = tuple(
            cache.fetch(
                workspace,
                ids,
                lambda: db.execute(
                    "SELECT i.id, i.body FROM checkpoint_items c JOIN items i "
                    "ON i.workspace = ? AND i.id = c.item WHERE c.checkpoint = ?",
                    (workspace, checkpoint),
                ).fetchall(),
                item_of,
            )
        )
        found = (items, tuple(ids))
        with self._lock:
            if checkpoint not in self._items:
                self._held(units(items))
                self._items[checkpoint] = found
        return found

    def context(
        self,
        db: Connection,
        cache: BodyCache[str, Item],
        workspace: str,
        checkpoint: tuple[int, int],
        epoch: int,
    ) -> tuple[tuple[Item, ...], tuple[Item, ...]]:
        """D_a's items (``checkpoint``'s: its id and epoch), and all of C's at ``epoch``.

        C's items are D_a's, then those asserted after the departure up to ``epoch`` (only
        those since the latest epoch remembered are read), in epoch order (an item's epoch
        is its assert's, one item an epoch). The order is the context's, and so the order
        of a decision's exclusions: it must not depend on the backend or its query plan
        (PostgreSQL returns rows in no set order). Ids sort in Python, by code point:
        SQLite's order for its primary key, whatever a PostgreSQL collation would say.
        """
        cp_id, cp_epoch = checkpoint
        with self._lock:
            found = self._contexts.get((cp_id, epoch))
            # Else the latest epoch of this checkpoint remembered below ``epoch``: only the
            # items asserted since are read, and appended to its tuple.
            since = max((e for c, e in self._contexts if c == cp_id and e < epoch), default=None)
            base = None if since is None else self._contexts[cp_id, since]
        if found is not None:
            return found[0], found[1].items
        if base is None:
            items, ids = self.items(db, cache, workspace, cp_id)
            base = (items, _Items(items, ids))
        span = (workspace, cp_epoch if since is None else since, epoch)
        later = [i for (i,) in db.execute(_LATER_IDS, span).fetchall()]
        added = cache.fetch(
            workspace,
            later,
            lambda: db.execute(
                "SELECT id, body FROM items WHERE workspace = ? AND epoch > ? AND epoch <= ?",
                span,
            ).fetchall(),
            item_of,
        )
        earlier = base[1].items
        extended = _Items(grown_from(earlier + tuple(added), earlier), base[1].ids + tuple(later))
        with self._lock:
            if (cp_id, epoch) not in self._contexts:
                if since is not None and (cp_id, since) in self._contexts:
                    del self._contexts[cp_id, since]  # returns move on to later epochs
                    self._held(units(added), lambda: units(extended.items))  # ``base`` counted
                else:
                    self._held(units(extended.items))
                self._contexts[cp_id, epoch] = (base[0], extended)
        return base[0], extended.items

    def returned(self, request: _Return, checkpoint: int) -> None:
        """Remember the checkpoint of the return ``request`` (workspace, agent, time, epoch).

        Its decision record's ``not_selected`` names C's candidates at that epoch.
        """
        with self._lock:
            keep(self._returns, request, checkpoint, 4096)

    def return_candidates(self, request: _Return) -> tuple[int, tuple[str, ...]] | None:
        """The checkpoint and C's ids of the return ``request``, if remembered."""
        with self._lock:
            checkpoint = self._returns.get(request)
        found = None if checkpoint is None else self.remembered_ids(checkpoint, request[3])
        return None if checkpoint is None or found is None else (checkpoint, found)

    def remembered_ids(self, checkpoint: int, epoch: int) -> tuple[str, ...] | None:
        """`candidate_ids` if this store remembers C at ``epoch`` for ``checkpoint``."""
        with self._lock:
            found = self._contexts.get((checkpoint, epoch))
        return None if found is None else found[1].ids

    def candidate_ids(
        self, db: Connection, workspace: str, checkpoint: int, epoch: int
    ) -> list[str]:
        """The ids of C's items at ``epoch`` for a return to ``checkpoint``, in `context`'s order.

        From the remembered tuple when there is one, else read: ids only, nothing decoded.
        """
        found = self.remembered_ids(checkpoint, epoch)
        if found is not None:
            return list(found)
        row = db.execute(
            "SELECT epoch FROM checkpoints WHERE id = ? AND workspace = ?", (checkpoint, workspace)
        ).fetchone()
        if row is None:
            return []
        ids = sorted(i for (i,) in db.execute(_CHECKPOINT_IDS, (checkpoint,)).fetchall())
        return ids + [i for (i,) in db.execute(_LATER_IDS, (workspace, row[0], epoch)).fetchall()]

    def delta(
        self, db: Connection, cache: BodyCache[int, Recorded], workspace: str, span: range
    ) -> tuple[Recorded, ...]:
        """Δ: the events of epochs ``span`` (after the departure, up to a committed epoch).

        Fixed once its last epoch is committed, like C's items: returns at one epoch get
        the same tuple, and a return at a later epoch reads only the events since.
        """
        key = (workspace, span.start, span.stop)
        with self._lock:
            found = self._deltas.get(key)
            # Else the longest remembered Δ from the same departure: only what follows it
            # is read, and appended to it.
            stop = max(
                (k[2] for k in self._deltas if k[:2] == key[:2] and k[2] < span.stop),
                default=span.start,
            )
            base = self._deltas.get((workspace, span.start, stop), ())
        if found is not None:
            return found
        found = grown_from(
            base + tuple(logged_events(db, cache, workspace, stop - 1, span.stop - 1)), base
        )
        with self._lock:
            if key not in self._deltas:
                if self._deltas.pop((workspace, span.start, stop), None) is not None:
                    self._held(units(found[len(base) :]), lambda: units(found))  # moved on
                else:
                    self._held(units(found))
                self._deltas[key] = found
        return found


def logged_events(
    db: Connection,
    cache: BodyCache[int, Recorded],
    workspace: str,
    after: int,
    upto: int,
    withdrawing: bool = False,
) -> list[Recorded]:
    """The events in (``after``, ``upto``], in epoch order, each body parsed once per store.

    With ``withdrawing``, only those that can withdraw an item: a supersession, a
    revocation, a closing, and an assert of a keyed item (which may replace another);
    the others are neither read nor parsed.
    """
    epochs_sql, bodies_sql = _LOG[withdrawing]
    params = (workspace, after, upto) * (2 if withdrawing else 1)
    epochs = [r[0] for r in db.execute(epochs_sql, params).fetchall()]
    rows = lambda: db.execute(bodies_sql, params).fetchall()  # noqa: E731
    return cache.fetch(workspace, epochs, rows, event_of)


_RANGE = "FROM events WHERE workspace = ? AND epoch > ? AND epoch <= ?"
_CAN_WITHDRAW = (
    " AND (op IN ('supersede', 'revoke', 'close') OR epoch IN (SELECT epoch FROM items i"
    " WHERE workspace = ? AND epoch > ? AND epoch <= ? AND key IS NOT NULL AND EXISTS"
    " (SELECT 1 FROM items j WHERE j.workspace = i.workspace AND j.key = i.key"
    " AND j.epoch + 0 < i.epoch)))"
)
"""An item's epoch is its assert's: a keyed item's assert may replace an earlier item
with its key, and only if there is one. A cold return reads the log back to the oldest
item it screens; most keys there are held once, and their asserts are left unparsed.
(``+ 0``: the probe goes by key, not by epoch, whatever SQLite's planner guesses.)"""
_LOG = {
    False: ("SELECT epoch " + _RANGE + " ORDER BY epoch", "SELECT epoch, body " + _RANGE),
    True: (
        "SELECT epoch " + _RANGE + _CAN_WITHDRAW + " ORDER BY epoch",
        "SELECT epoch, body " + _RANGE + _CAN_WITHDRAW,
    ),
}
"""`logged_events`' statements (epochs in order, then bodies), by ``withdrawing``."""


def item_of(item_id: str, body: str) -> Item:
    """A stored item body decoded (the shape `BodyCache.fetch` takes; damaged: `decoded_item`)."""
    return decoded_item(body, item_id)


event_of = decoded_event
"""A logged event body parsed (the shape `BodyCache.fetch` takes)."""


def items_by(
    db: Connection, cache: BodyCache[str, Item], workspace: str, column: str, values: list[str]
) -> list[Item]:
    """The items (any status) whose ``column`` (``id`` or ``key``) is one of ``values``.

    Bodies the cache already decoded are not decoded again.
    """
    rows = _rows_by(db, workspace, column, values)
    held = cache.get(workspace, [item_id for item_id, _ in rows])
    if len(held) < len(rows):
        fresh = {item_id: item_of(item_id, body) for item_id, body in rows if item_id not in held}
        cache.keep(workspace, fresh)
        held |= fresh
    return [held[item_id] for item_id, _ in rows]


def _rows_by(
    db: Connection, workspace: str, column: str, values: list[str]
) -> list[tuple[str, str]]:
    """The (id, body) rows of the items (any status) whose ``column`` is one of ``values``.

    In the order of their ids: PostgreSQL gave them in its plan's order, so that two
    processes held one checkpoint's left-out items in different orders (a review).
    """
    rows: list[tuple[str, str]] = []
    for start in range(0, len(values), 500):
        chunk = values[start : start + 500]
        marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
        rows += db.execute(_ITEMS_BY[column] + f" IN ({marks})", (workspace, *chunk)).fetchall()
    rows.sort(key=_FIRST)
    return rows
