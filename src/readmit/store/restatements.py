"""Migrations m016, m017, m019, m021, m023 and m024: verdicts lapse as restorations go today."""

from collections import defaultdict
from collections.abc import Iterator
from typing import NamedTuple

from readmit.events import Assert, Supersede
from readmit.model import Scope
from readmit.store.bodies import event_of, item_of
from readmit.store.connection import Connection
from readmit.store.readers import readers_of, scope_of, seen_by_all
from readmit.store.restoring import restoration
from readmit.store.verdicts import restores

_Lapsed = tuple[int, str, Scope | None, Scope | None]
"""The epoch a verdict lapsed at, its item, who reads that, who read what its evidence
withdrew (and so may state it again)."""


def lapses_restated_today(db: Connection) -> None:
    """Lapse each verdict a restatement lapsed by the first that restores today, if any.

    Before m016, a restatement bounded in time, task or purpose (`readmit.events.restates`)
    lapsed a verdict, which then stayed lapsed once the statement ended; before m017, so
    did one resting on other items, which stayed lapsed once they fell; before m019, one
    whose author may not read the statement it seemed to restate. Each verdict
    lapsed by a restatement is now lapsed by the first that restores under today's rule,
    at or after the one that lapsed it (the rule only narrowed), or stands. The log of a
    workspace is read once, from its earliest such lapse, for all of its verdicts.
    """
    lapsed: dict[str, dict[str, list[_Lapsed]]] = defaultdict(lambda: defaultdict(list))
    for workspace, item, text, epoch, event in db.execute(
        "SELECT workspace, item, restore_text, lapsed_epoch, event FROM invalidations "
        "WHERE lapsed_epoch IS NOT NULL AND restore_text IS NOT NULL"
    ).fetchall():
        said = restoration(db, workspace, event)[2]
        lapsed[workspace][text].append((int(epoch), item, scope_of(db, workspace, item), said))
    for workspace, by_text in lapsed.items():
        first = _first_restorations(db, workspace, by_text)
        for verdicts in by_text.values():
            for epoch, item, _, _ in verdicts:
                if first.get(item) != epoch:
                    db.execute(
                        "UPDATE invalidations SET lapsed_epoch = ? "
                        "WHERE workspace = ? AND item = ?",
                        (first.get(item), workspace, item),
                    )


def restated_by_their_evidence(db: Connection) -> None:
    """Lapse each verdict whose evidence itself stated again what it withdrew (m021).

    It did so for fewer readers than the withdrawn statement had, all of them readers of
    the invalidated item. Such a replacement in the same words is shown to the verifier as
    a withdrawal (`readmit.admission.invalidation.observations`); before m021 nothing
    counted its own statement, so the verdict stood, where a return now takes it as a
    restoration (`readmit.admission.invalidation.restored`).
    """
    for workspace, item, text, event in db.execute(
        "SELECT workspace, item, restore_text, event FROM invalidations "
        "WHERE lapsed_epoch IS NULL AND restore_text IS NOT NULL"
    ).fetchall():
        row = db.execute(
            "SELECT epoch, body FROM events WHERE workspace = ? AND id = ?", (workspace, event)
        ).fetchone()
        said = restoration(db, workspace, event)[2]
        if row is None or said is None:
            continue
        recorded = event_of(int(row[0]), str(row[1]))
        if (
            restores(recorded, text, None)
            and not said.read_within(*readers_of(db, workspace, recorded))  # shown withdrawn
            and seen_by_all(db, workspace, recorded, scope_of(db, workspace, item), said)
        ):
            db.execute(
                "UPDATE invalidations SET lapsed_epoch = ? WHERE workspace = ? AND item = ?",
                (recorded.epoch, workspace, item),
            )


def in_own_words_again(db: Connection) -> None:
    """Lapse what `judged_again` lapses, and verdicts on what stated the item's own words (m024).

    An observation whose item states the judged item's very words (news, or in the place
    of what it replaced) is no longer judged against it
    (`readmit.admission.invalidation.restored.Restorations.kept`); a verdict a store kept on
    one would bind for good. Each lapses at its evidence, to be judged again, as in m023
    (a verdict on the same event's withdrawal of the item's statement is confirmed again).
    """
    for verdict in _standing(db):
        if _unsaid(verdict) or verdict.stated.item.text == item_of("", verdict.body).text:
            _lapse(db, verdict)


def judged_again(db: Connection) -> None:
    """Lapse the standing verdicts that rest on what a store before m022 could not tell (m023).

    Again at m024 (`in_own_words_again`): a refiling in the same words for fewer readers,
    a withdrawal to every item before, is news filed again to an item whose readers of the
    first filing may all read it, and is judged so.

    One whose evidence states the very text that restores it: its event replaced an item
    in that item's own words, news filed again, which the verdict was taken to rest on as
    a withdrawal, so that only the news itself stated again would restore it and
    withdrawing the news never did. One whose keyed evidence replaced several items: it
    did not say which it rests on, and nothing restored it. Which item the verifier's pair
    rested on (`readmit.admission.invalidation.restored.rests_on`) the store cannot tell
    without the readers of the time: each lapses at its evidence, and the next return
    judges the item again, and keeps what it rests on.
    """
    for verdict in _standing(db):
        if _unsaid(verdict):
            _lapse(db, verdict)


class _Standing(NamedTuple):
    """A standing verdict whose evidence asserted an item, with that event and its item."""

    workspace: str
    item: str
    body: str
    """The invalidated item's stored body."""
    text: str | None
    restoring: str | None
    epoch: int
    stated: Assert | Supersede


def _standing(db: Connection) -> Iterator[_Standing]:
    for workspace, item, body, text, restoring, event, epoch in db.execute(
        "SELECT v.workspace, v.item, i.body, v.restore_text, v.restore_item, v.event, "
        "v.event_epoch FROM invalidations v JOIN items i ON i.workspace = v.workspace "
        "AND i.id = v.item WHERE v.lapsed_epoch IS NULL"
    ).fetchall():
        row = db.execute(
            "SELECT body FROM events WHERE workspace = ? AND id = ?", (workspace, event)
        ).fetchone()
        stated = None if row is None else event_of(int(epoch), str(row[0])).event
        if isinstance(stated, Assert | Supersede):
            yield _Standing(workspace, item, body, text, restoring, int(epoch), stated)


def _unsaid(verdict: _Standing) -> bool:
    """Whether it rests on news filed again in its words, or on one of several replaced."""
    several = verdict.text is None and verdict.restoring is None
    return (several and verdict.stated.item.key is not None) or (
        verdict.stated.item.text == verdict.text
    )


def _lapse(db: Connection, verdict: _Standing) -> None:
    db.execute(
        "UPDATE invalidations SET lapsed_epoch = ? WHERE workspace = ? AND item = ?",
        (verdict.epoch, verdict.workspace, verdict.item),
    )


def _first_restorations(
    db: Connection, workspace: str, by_text: dict[str, list[_Lapsed]]
) -> dict[str, int]:
    """The epoch of the first event restoring each item of ``by_text``, at or after its lapse."""
    left = sum(len(v) for v in by_text.values())
    start = min(epoch for verdicts in by_text.values() for epoch, *_ in verdicts)
    first: dict[str, int] = {}
    for n, body in _statements(db, workspace, start):
        recorded = event_of(n, body)
        event = recorded.event
        if not isinstance(event, Assert | Supersede) or event.item.text not in by_text:
            continue
        for epoch, item, scope, said in by_text[event.item.text]:
            if (
                item not in first
                and epoch <= n
                and restores(recorded, event.item.text, None)
                and seen_by_all(db, workspace, recorded, scope, said)
            ):
                first[item] = n
                left -= 1
        if not left:
            break
    return first


def _statements(db: Connection, workspace: str, start: int) -> Iterator[tuple[int, str]]:
    """The asserts and supersessions of ``workspace`` from epoch ``start``, a page a query."""
    while True:
        rows = db.execute(
            "SELECT epoch, body FROM events WHERE workspace = ? AND epoch >= ? "
            "AND op IN ('assert', 'supersede') ORDER BY epoch LIMIT ?",
            (workspace, start, _PAGE),
        ).fetchall()
        yield from ((int(n), str(b)) for n, b in rows)
        if len(rows) < _PAGE:
            return
        start = int(rows[-1][0]) + 1


_PAGE = 2000
