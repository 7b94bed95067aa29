"""What restores a verdict: read from the event its evidence names (`readmit.store.verdicts`).

A verdict whose evidence withdrew or replaced a statement is restored by that statement's
text stated again (by one who may read it); one whose evidence only asserted a new item,
or filed news again in its own words, by that item's withdrawal. One whose keyed evidence
replaced several items rests on the one its judged observation withdrew (its premise,
kept with the verdict since m022); one kept before, which does not say, is restored by
nothing (m023 lapsed those, to be judged again).
"""

from functools import partial

from readmit.admission.context import Restoring, StandIn
from readmit.events import Assert, Close, Event, Recorded, Revoke, Supersede
from readmit.model import Item
from readmit.store.connection import Connection
from readmit.store.damaged import decoded_event, decoded_item


def restoration(
    db: Connection, workspace: str, event_id: str, premise: str | None = None
) -> Restoring:
    """What restores a verdict resting on ``event_id`` (and its ``premise``, `Rules`).

    Neither a text nor an item where nothing does, or no such event is stored.
    """
    return Rules().restoration(db, workspace, event_id, premise)


class Rules:
    """What restores verdicts, each stored row read once for all the verdicts asked about.

    For one return, one return's verdicts kept, or one batch's appends: what an event
    withdrew and the items it names never change once written, and many verdicts rest on
    one event (each replaced item a premise of its own) or on the items of one chain. Read
    again for each verdict, a keyed event that replaced 900 items was parsed 900 times a
    verdict (an append moving 384 verdicts resting on it took 1.1 s).
    """

    def __init__(self) -> None:
        self._events: dict[tuple[str, str], Recorded | None] = {}
        self._replaced: dict[tuple[str, int], list[Item] | None] = {}
        self._items: dict[tuple[str, str], Item | None] = {}
        self._undated: dict[str, bool] = {}

    def restoration(
        self, db: Connection, workspace: str, event_id: str, premise: str | None = None
    ) -> Restoring:
        """`restoration`, from the rows read once (`restoration_of` of the stored event)."""
        if (workspace, event_id) not in self._events:
            row = db.execute(
                "SELECT epoch, body FROM events WHERE workspace = ? AND id = ?",
                (workspace, event_id),
            ).fetchone()
            self._events[workspace, event_id] = (
                None if row is None else decoded_event(row[0], row[1])
            )
        recorded = self._events[workspace, event_id]
        if recorded is None:
            return Restoring()
        return self.restoration_of(db, workspace, recorded, premise)

    def restoration_of(
        self, db: Connection, workspace: str, later: Recorded, premise: str | None = None
    ) -> Restoring:
        """(text whose return restores the premise, item whose withdrawal does, who may say it).

        The last: who may read the statement withdrawn, so may state it again
        (`seen_by_all`). ``premise``: the item the verdict rests on (`Judgment.premises`): of
        several items a keyed event replaced, the one its judged observation withdrew; or
        the event's own item, where that was judged as news
        (`readmit.admission.invalidation.restored.rests_on`).
        """
        event = later.event
        if (
            isinstance(event, Assert | Supersede)
            and premise is not None
            and premise == event.item.id
        ):
            return Restoring(news=premise)  # news, or news filed again in its own words
        item = partial(self.item, db, workspace)
        placed = partial(self._in_place, db, workspace, event)  # read only where text restores
        match event:
            case Supersede() if (
                event.item.key is not None
                and (replaced := self._replaced_by(db, workspace, later)) != []
            ):
                # It withdrew its target and what held its key (or, from before m012, may
                # have): the premise says which the verdict rests on; without one, none does.
                if premise == event.target:
                    return _stated(item(premise), placed())
                return _stated(_named(replaced, premise), placed())
            case Revoke() | Close() | Supersede():  # only a supersession put an item in place
                return _stated(item(event.target), placed())
            case Assert() if event.item.key is not None:
                replaced = self._replaced_by(db, workspace, later)
                if replaced is None:  # from before m012: the key's newest earlier item
                    held = _key_held(db, workspace, later)
                    replaced = [] if held is None else [held]
                if len(replaced) == 1:
                    return _stated(replaced[0], placed())
                # None replaced: withdrawing the new item restores; several: the premise says
                # which the verdict rests on (without one, nothing restores it).
                if not replaced:
                    return Restoring(news=event.item.id)
                return _stated(_named(replaced, premise), placed())
            case Assert():
                return Restoring(news=event.item.id)
        return Restoring()

    def item(self, db: Connection, workspace: str, item: str) -> Item | None:
        """`item_at`, read once."""
        if (workspace, item) not in self._items:
            self._items[workspace, item] = item_at(db, workspace, item)
        return self._items[workspace, item]

    def _in_place(self, db: Connection, workspace: str, event: Event) -> StandIn | None:
        """The item ``event`` brought, as a stand-in for what it withdrew (``None``: none)."""
        if not isinstance(event, Assert | Supersede):
            return None
        placed = self.item(db, workspace, event.item.id)
        return None if placed is None else (placed.id, placed.key, placed.scope)

    def _replaced_by(self, db: Connection, workspace: str, later: Recorded) -> list[Item] | None:
        """`_replaced`, read once an event."""
        if (workspace, later.epoch) not in self._replaced:
            if workspace not in self._undated:
                self._undated[workspace] = _undated(db, workspace)
            found = _replaced(db, workspace, later, self._undated[workspace])
            self._replaced[workspace, later.epoch] = found
        return self._replaced[workspace, later.epoch]


def _stated(item: Item | None, placed: StandIn | None = None) -> Restoring:
    """What restores a verdict resting on ``item``'s withdrawal: its text stated again.

    Or, where an item was put in its place (``placed``), that item replaced by one that
    holds wherever ``item`` held (`readmit.admission.invalidation.narrowed`).
    """
    if item is None:
        return Restoring()
    return Restoring(item.text, None, item.scope, placed, item if placed else None)


def _named(replaced: list[Item] | None, premise: str | None) -> Item | None:
    """Of ``replaced``, the item ``premise`` names (``None``: not one of them, or unknown)."""
    return next((i for i in replaced or () if i.id == premise), None)


def _replaced(db: Connection, workspace: str, later: Recorded, undated: bool) -> list[Item] | None:
    """The items ``later``'s keyed item replaced by its key (not its target).

    ``None`` where the store cannot tell: an earlier item of the key was replaced by an
    event stored before migration ``m012``, which kept no epoch (``undated``: the workspace
    holds such a replacement).
    """
    event = later.event
    if not isinstance(event, Assert | Supersede) or event.item.key is None:
        return []
    if undated:  # probed by key: only it tells whether one of them has no epoch
        rows = db.execute(
            "SELECT i.body, w.epoch FROM items i JOIN withdrawn w "
            "ON w.workspace = i.workspace AND w.id = i.id WHERE i.workspace = ? AND i.key = ? "
            "AND i.epoch + 0 < ? AND w.status = 'replaced' AND (w.epoch = ? OR w.epoch IS NULL)",
            (workspace, event.item.key, later.epoch, later.epoch),
        ).fetchall()
        if any(epoch is None for _, epoch in rows):
            return None
        return [decoded_item(body) for body, _ in rows]
    # Probed by the replacement's epoch (m027): by the key, each call read every item the
    # key ever held (a chain of L replacements: L rows a verdict); by the items' epoch
    # index, every earlier item (25 ms a call at 100k items).
    rows = db.execute(
        "SELECT i.body FROM withdrawn w JOIN items i ON i.workspace = w.workspace "
        "AND i.id = w.id WHERE w.workspace = ? AND w.epoch = ? AND w.status = 'replaced' "
        "AND i.key = ? AND i.epoch + 0 < ?",
        (workspace, later.epoch, event.item.key, later.epoch),
    ).fetchall()
    return [decoded_item(body) for (body,) in rows]


def _undated(db: Connection, workspace: str) -> bool:
    """Whether ``workspace`` holds a replacement stored before m012 (with no epoch)."""
    row = db.execute(
        "SELECT 1 FROM withdrawn WHERE workspace = ? AND epoch IS NULL AND status = 'replaced' "
        "LIMIT 1",
        (workspace,),
    ).fetchone()
    return row is not None


def _key_held(db: Connection, workspace: str, later: Recorded) -> Item | None:
    """The item that held the key of ``later``'s new item before it (if it has a key)."""
    if not isinstance(later.event, Assert) or later.event.item.key is None:
        return None
    row = db.execute(
        "SELECT body FROM items WHERE workspace = ? AND key = ? AND epoch + 0 < ? "
        "ORDER BY epoch DESC LIMIT 1",
        (workspace, later.event.item.key, later.epoch),
    ).fetchone()
    return None if row is None else decoded_item(row[0])


def withdrawn_at(db: Connection, workspace: str, item: str) -> int | None:
    """The epoch ``item`` was withdrawn at (``None``: it is not, or before m012, unknown)."""
    row = db.execute(
        "SELECT epoch FROM withdrawn WHERE workspace = ? AND id = ?", (workspace, item)
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def item_at(db: Connection, workspace: str, item: str) -> Item | None:
    """Stored ``item`` (``None``: no such item)."""
    row = db.execute(
        "SELECT body FROM items WHERE workspace = ? AND id = ?", (workspace, item)
    ).fetchone()
    return None if row is None else decoded_item(row[0])
