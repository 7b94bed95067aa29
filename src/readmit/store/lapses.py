"""The verdicts an appended event lapses, as the writer records it (`readmit.store.verdicts`).

An event that states a withdrawn statement again lapses the verdicts resting on its
withdrawal (where every reader of the invalidated item may read it, and its author the
statement); one that withdraws an item lapses those resting on it as news, and moves or
lapses those whose stand-in it replaced (`readmit.store.stand_ins`). One indexed update an
event, none while the workspace has no standing verdict.
"""

from collections.abc import Sequence

from readmit.canonical import digest_text
from readmit.events import Assert, Recorded, Supersede, restates
from readmit.store import stand_ins
from readmit.store.connection import Connection
from readmit.store.readers import draft_readers, knew
from readmit.store.restoring import Rules
from readmit.store.rows import Known, stored_item


def restore_digests(db: Connection) -> None:
    """Give each verdict the digest of the text whose restatement lapses it (m033).

    Verdicts are found by it: PostgreSQL's B-tree index refuses a row over about 2.7 KB,
    so one on the text failed every return storing a verdict on a longer text's withdrawal.
    """
    rows = db.execute(
        "SELECT workspace, item, restore_text FROM invalidations WHERE restore_text IS NOT NULL"
    ).fetchall()
    db.executemany(
        "UPDATE invalidations SET restore_digest = ? WHERE workspace = ? AND item = ?",
        [(digest_text(text), workspace, item) for workspace, item, text in rows],
    )


def any_standing(db: Connection, workspace: str) -> bool:
    """Whether ``workspace`` has a verdict that has not lapsed (else no event can lapse one)."""
    row = db.execute(
        "SELECT 1 FROM invalidations WHERE workspace = ? AND lapsed_epoch IS NULL LIMIT 1",
        (workspace,),
    ).fetchone()
    return row is not None


class Lapses:
    """The verdicts a batch's events lapse, as the writer records each (`after`)."""

    def __init__(self, db: Connection, workspace: str, known: Known | None = None) -> None:
        self.db, self.workspace = db, workspace
        self._standing: bool | None = None
        self._rules = Rules()  # what restores the verdicts the batch moves, read once
        self._known = known  # the items the store has decoded: their readers, not parsed

    def after(self, recorded: Recorded, withdrawals: Sequence[Sequence[object]]) -> None:
        """Lapse the standing verdicts whose premise ``recorded`` restores (as it is written).

        ``withdrawals``: its rows of ``withdrawn`` (its target, and what its key replaced).
        What restores a verdict is read once for the batch (`readmit.store.restoring.Rules`),
        and the invalidated items, whose readers decide, come from what the store has
        decoded: a restatement that restored none of 3,000 verdicts parsed each item, 13.6
        ms an append.
        """
        if self._standing is None:
            self._standing = any_standing(self.db, self.workspace)
        if not self._standing:  # with no standing verdict there is nothing to lapse
            return
        db, workspace, event = self.db, self.workspace, recorded.event
        if isinstance(event, Assert | Supersede) and restates(event):
            self._restated(recorded, event)
        withdrew = [str(r[1]) for r in withdrawals]
        if withdrew:
            db.executemany(
                "UPDATE invalidations SET lapsed_epoch = ? WHERE workspace = ? "
                "AND lapsed_epoch IS NULL AND restore_item = ?",
                [(recorded.epoch, workspace, item) for item in withdrew],
            )
            stand_ins.lapse(db, workspace, recorded, withdrew, self._rules, self._known)

    def _restated(self, recorded: Recorded, event: Assert | Supersede) -> None:
        """Lapse the verdicts resting on a withdrawal of what ``event`` states again."""
        db, workspace, rules = self.db, self.workspace, self._rules
        restored = db.execute(
            "SELECT v.item, i.body, v.event, v.premise FROM invalidations v JOIN items i "
            "ON i.workspace = v.workspace AND i.id = v.item WHERE v.workspace = ? "
            "AND v.lapsed_epoch IS NULL AND v.restore_digest = ? AND v.restore_text = ?",
            (workspace, digest_text(event.item.text), event.item.text),
        ).fetchall()
        if not restored:
            return
        found = self._known([r[0] for r in restored]) if self._known else {}
        readers = draft_readers(db, workspace, event.author, event.item)
        said_by: dict[tuple[str, str | None], bool] = {}  # many verdicts rest on one event
        for _, _, evidence, premise in restored:
            if (evidence, premise) not in said_by:
                said = rules.restoration(db, workspace, evidence, premise).said
                said_by[evidence, premise] = knew(db, workspace, event.author, said)
        db.executemany(
            "UPDATE invalidations SET lapsed_epoch = ? WHERE workspace = ? AND item = ?",
            [
                (recorded.epoch, workspace, item)
                for item, body, evidence, premise in restored
                if said_by[evidence, premise]
                and stored_item(found, item, body).scope.read_within(*readers)
            ],
        )
