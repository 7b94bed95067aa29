"""Stored judgments: confirmed implicit invalidations and how far each item was screened.

A confirmed invalidation is kept with its evidence and applies at every later
return, to every agent, until something restores its premise:

- when its evidence withdrew or replaced a statement X, it lapses once a later
  item states X's text again (the withdrawn statement came back) where every
  reader of the invalidated item can read it: a restatement only some of them
  can see (another principal's private note) restores nothing for the others.
  Its author must be one who may read X: another principal's note in the same words
  about something of its own restates nothing it knew (before, any author's did); hearsay
  (an ``unconfirmed`` item, with no receipt) restates nothing, as it replaces nothing,
  nor does a statement bounded in time, task or purpose, or resting on other items
  (`readmit.events.restates`);
- when its evidence only asserted a new item N, it lapses once N is withdrawn
  (revoked, closed, superseded, or replaced by a later item of its key: the news
  no longer stands, and what replaced it is judged in its turn);
- either way, for every return or departure dated at or after the end of the observation
  it rests on (`readmit.admission.invalidation.implicit.ended`: news at its item's end, an
  item in another's place once both have ended): what has ended is no evidence. That
  lapse is read by time (``restore_until``), not written by an event.

The writer of each event lapses the verdicts it restores (`readmit.store.lapses`, one indexed
update an event, none while the workspace has no standing verdict), so a return
reads standing verdicts without scanning the log.
An item whose verdict lapsed is screened again from where the returning reader's own
screening of it reached (`load`), never only after the restoring event or the evidence:
the screening stopped at its first confirmation, so what came between, and what it had
not yet reached before the evidence, was never judged. Evidence from a raw source (an
``evidence`` event) is never withdrawn, so its verdicts stand. Screening watermarks are
kept per screening (`readmit.admission.invalidation.cache.screening_key`: the verifier,
its cut-off, the threshold, the scanner's settings) and per reader (principal and role):
a return need not judge an item again against events a return of a reader like its own
already screened it against with the same verifier, if that screening is dated at or
before the return (m032): one dated after news ended passed over the news, which a
return dated while it held must judge (a library caller dates its returns; each server,
and each judge ahead, by its own clock). A reader's screening quotes what
that reader's context holds (the premises it may read, the items a withdrawal or a keyed
replacement names, the pool embedding proposals rank in), so it binds only returns that
would quote the same; a return's watermarks also stop before any withdrawal its own
checkpoint could not quote (`readmit.admission.invalidation.unquoted`).
"""

import json
from collections.abc import Callable, Container, Iterator, Sequence
from datetime import datetime
from heapq import merge
from operator import attrgetter
from typing import Any

from readmit.admission.context import Restoring, Standing
from readmit.admission.invalidation.implicit import ends
from readmit.admission.invalidation.judgment import Judgment
from readmit.admission.invalidation.narrowed import Handles, Paths, after
from readmit.canonical import canonical_json, digest_text
from readmit.events import Assert, Close, Recorded, Revoke, Supersede, restates
from readmit.model import Agent, Scope
from readmit.store import stand_ins
from readmit.store.connection import Connection, stamp
from readmit.store.damaged import decoded_event, decoded_ids
from readmit.store.readers import scope_of, seen_by_all
from readmit.store.restoring import Rules, item_at, withdrawn_at

Events = Callable[[int], list[Recorded]]
"""The events after an epoch, in epoch order."""
_EPOCH = attrgetter("epoch")


def remember(
    db: Connection, workspace: str, epoch: int, judgment: Judgment, events: Events, reader: Agent
) -> None:
    """Keep what one return confirmed and screened (inside the caller's transaction).

    A premise restored between the evidence and this return is found here, once;
    one restored later is marked by the writer of the restoring event
    (`readmit.store.lapses`).
    """
    found = []
    for exclusion in judgment.confirmed:
        row = db.execute(
            "SELECT epoch, body FROM events WHERE workspace = ? AND id = ?",
            (workspace, exclusion.evidence[0]),
        ).fetchone()
        if row is not None:
            found.append((exclusion, int(row[0]), str(row[1])))
    # Read once, from the earliest evidence: each verdict then walks only what may restore it.
    log = _Log(events(min(e for _, e, _ in found)) if found else [])
    noted = last_noted(db, workspace) + 1 if found else None  # under the workspace's lock
    rules, laters = Rules(), dict[int, Recorded]()
    lapses: dict[tuple[int, str | None, Scope | None], tuple[int | None, str | None]] = {}
    for exclusion, evidence, body in found:  # many verdicts may rest on one event: once each
        premise = judgment.premises.get(exclusion.item)
        if evidence not in laters:
            laters[evidence] = decoded_event(evidence, body)
        restoring = rules.restoration_of(db, workspace, laters[evidence], premise)
        restore_text, restore_item = restoring.text, restoring.news
        # Under the workspace lock: nothing is written between this scan and the insert. A
        # verdict standing there stays: this return's, decided beside the one that stored
        # it, may rest on a premise restored since (its context read before that verdict).
        scope = None if restore_text is None else scope_of(db, workspace, exclusion.item)
        until = None if (end := judgment.ends.get(exclusion.item)) is None else stamp(end)
        if (key := (evidence, premise, scope)) not in lapses:
            lapses[key] = log.lapsed(db, workspace, evidence, restoring, scope)
        lapsed, placed = lapses[key]
        db.execute(
            "INSERT INTO invalidations (workspace, item, event, event_epoch, evidence, verifier, "
            "confidence, detail, decided_epoch, restore_text, restore_digest, restore_item, "
            "lapsed_epoch, principal, role, premise, restore_until, restore_in_place, noted) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (workspace, item) DO UPDATE "
            "SET event = excluded.event, event_epoch = excluded.event_epoch, "
            "evidence = excluded.evidence, verifier = excluded.verifier, "
            "confidence = excluded.confidence, detail = excluded.detail, "
            "decided_epoch = excluded.decided_epoch, restore_text = excluded.restore_text, "
            "restore_digest = excluded.restore_digest, "
            "restore_item = excluded.restore_item, lapsed_epoch = excluded.lapsed_epoch, "
            "principal = excluded.principal, role = excluded.role, premise = excluded.premise, "
            "restore_until = excluded.restore_until, "
            "restore_in_place = excluded.restore_in_place, noted = excluded.noted, "
            "verdict = invalidations.verdict + 1 "
            "WHERE invalidations.lapsed_epoch IS NOT NULL "
            "OR invalidations.restore_until <= ?",
            (
                workspace,
                exclusion.item,
                exclusion.evidence[0],
                evidence,
                json.dumps(list(exclusion.evidence)),
                judgment.verifier,
                exclusion.confidence if exclusion.confidence is not None else 1.0,
                exclusion.detail,
                epoch,
                restore_text,
                None if restore_text is None else digest_text(restore_text),
                restore_item,
                lapsed,
                reader.principal,
                reader.role,
                premise,
                until,
                placed,
                noted,
                None if judgment.at is None else stamp(judgment.at),
            ),
        )
    if judgment.at is None:  # undated, it would bind no return: not kept
        return
    screened_as, dated = judgment.screened_as or judgment.verifier, stamp(judgment.at)
    who, which = reader_digest(reader), digest_text(screened_as)
    db.executemany(_SCREENED, [
        (workspace, who, screened_as, which, item, through, dated)
        for item, through in judgment.screened.items()
    ])  # fmt: skip


def reader_digest(reader: Agent) -> str:
    """The digest of ``reader``'s principal and role, by which its screenings are kept (m034).

    Their names, up to 200 characters each, and a verifier's overflowed PostgreSQL's index
    row of 2,704 bytes: every return of such a reader failed (a review).
    """
    return digest_text(canonical_json([reader.principal, reader.role]))


_SCREENED = (
    "INSERT INTO screenings (workspace, reader, verifier, verifier_digest, item, through, at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (workspace, reader, verifier_digest, item) DO UPDATE SET "
    "through = excluded.through, at = excluded.at "
    # One row binds as the one screening it holds: the further reach (the earlier date of
    # two as far). Combined, the two bound no return dated between their dates (a review).
    "WHERE excluded.through > screenings.through "
    "OR (excluded.through = screenings.through AND excluded.at < screenings.at)"
)
"""A reader's screening kept with its date (`remember`)."""


def ends_of_evidence(db: Connection) -> None:
    """Keep with each verdict when the observation it rests on ends (migration m025).

    As a return now finds it (`readmit.admission.invalidation.implicit.ends`): news, when
    its item ends; an item in another's place, once both have ended.
    """
    rows = db.execute(
        "SELECT v.workspace, v.item, v.restore_item, v.premise, e.epoch, e.body "
        "FROM invalidations v JOIN events e ON e.workspace = v.workspace AND e.id = v.event"
    ).fetchall()
    kept = []
    for workspace, item, news, premise, epoch, body in rows:
        event = decoded_event(epoch, body).event
        if not isinstance(event, Assert | Supersede):
            continue  # a withdrawal, or evidence: they never end
        replaced = premise or (event.target if isinstance(event, Supersede) else None)
        withdrawn = None if news or replaced is None else item_at(db, workspace, replaced)
        end = None if withdrawn is None else withdrawn.validity.valid_to
        until = ends(event.item.validity.valid_to, end, replaced=news is None)
        if until is not None:
            kept.append((stamp(until), workspace, item))
    db.executemany(
        "UPDATE invalidations SET restore_until = ? WHERE workspace = ? AND item = ?", kept
    )


def load(
    db: Connection,
    workspace: str,
    wanted: Container[str],
    reader: Agent | None,
    at: datetime,
    outside: Container[str] = (),
) -> tuple[dict[str, Standing], dict[str, dict[str, int]]]:
    """The verdicts of the items ``wanted`` holds standing at ``at``, and their watermarks.

    Watermarks are by verifier, those ``reader``'s principal and role earned (none
    without a reader); also those of ``outside``, the premises outside C a return
    screens (`readmit.store.premises`), whose verdicts the premises' rule reads. A
    lapsed verdict is left out: its item is screened again from
    where the reader's own screening of it reached. Not from the verdict's evidence:
    events before it may never have been judged (screening proposes withdrawals and
    the best-ranked events first and stops at the first confirmation, and another
    reader may have been shown them without their text). The evidence itself is not
    judged again, its premise restored (`readmit.admission.invalidation.restored`).
    """
    screened: dict[str, dict[str, int]] = {}
    found = db.execute(_STANDING, (workspace, stamp(at))).fetchall()
    standing = {r[0]: _standing(r) for r in found if r[0] in wanted}
    rows = (
        []
        if reader is None
        else db.execute(
            "SELECT verifier, item, through FROM screenings WHERE workspace = ? "
            "AND reader = ? AND at <= ?",
            (workspace, reader_digest(reader), stamp(at)),
        ).fetchall()
    )
    for verifier, item, through in rows:
        if item in wanted or item in outside:
            screened.setdefault(verifier, {})[item] = through
    return standing, screened


def last_noted(db: Connection, workspace: str) -> int:
    """The number of the last store of verdicts in ``workspace`` (m031; 0: none since).

    Each store of a return's verdicts (or of judging ahead's) takes the next, under the
    workspace's lock: a read that finds ``n`` has seen every store numbered up to ``n``.
    """
    found = db.execute(_LAST_NOTED, (workspace,)).fetchone()
    return 0 if found is None or found[0] is None else int(found[0])


def stored_since(
    db: Connection, workspace: str, since: int, at: datetime
) -> tuple[int, list[Standing]]:
    """The last store's number (`last_noted`), and the verdicts stored after store ``since``.

    Those that stand at ``at``, in the order stored (inside the caller's read snapshot).
    """
    last = last_noted(db, workspace)
    if last <= since:
        return since, []
    rows = db.execute(
        _STANDING + " AND noted > ? ORDER BY noted, item", (workspace, stamp(at), since)
    )
    return last, [_standing(r) for r in rows.fetchall()]


def _standing(row: Sequence[Any]) -> Standing:
    item, evidence, verifier, confidence, detail, decided, premise, principal, role = row
    return Standing(
        item=item, evidence=decoded_ids(evidence, "verdict evidence"), verifier=verifier,
        confidence=confidence, detail=detail, decided_epoch=decided,
        reader=None if principal is None else (principal, role), premise=premise,
    )  # fmt: skip


_STANDING = (
    "SELECT item, evidence, verifier, confidence, detail, decided_epoch, premise, principal, "
    "role FROM invalidations WHERE workspace = ? AND lapsed_epoch IS NULL "
    "AND (restore_until IS NULL OR restore_until > ?)"
)
_LAST_NOTED = "SELECT MAX(noted) FROM invalidations WHERE workspace = ?"


def restores(recorded: Recorded, text: str | None, withdrawn: str | None) -> bool:
    """Whether ``recorded`` states ``text`` again, or withdraws item ``withdrawn``."""
    event = recorded.event
    match event:
        case Assert() | Supersede() if event.item.text == text and restates(event):
            return True
        case Revoke() | Close() | Supersede() if withdrawn is not None:
            return event.target == withdrawn
    return False


class _Log:
    """The events after an epoch, read once, by what may restore a verdict resting there."""

    def __init__(self, events: list[Recorded]) -> None:
        self.handles = Handles([events])
        self._events = events
        self._paths: Paths | None = None  # the stand-ins' walks, shared by the verdicts
        self._stated: dict[str, list[Recorded]] | None = None
        self._seen: dict[tuple[Scope | None, Scope | None], dict[tuple[object, ...], bool]] = {}
        """`_seen_by_all`'s answers, by the invalidated item's readers and the withdrawn
        statement's."""

    def restoring(self, start: int, text: str | None, withdrawn: str | None) -> Iterator[Recorded]:
        """The events after ``start`` that may state ``text`` again or withdraw ``withdrawn``.

        In epoch order: items in those words, and what names it as its target (a superset
        of what `restores` says, which each verdict still asks).
        """
        if self._stated is None and text is not None:
            self._stated = {}
            for r in self._events:
                if isinstance(r.event, Assert | Supersede):
                    self._stated.setdefault(r.event.item.text, []).append(r)
        found = [] if text is None or self._stated is None else self._stated.get(text, [])
        targeting = iter(()) if withdrawn is None else self.handles.targeting(withdrawn, start)
        return merge(after(found, start), targeting, key=_EPOCH)

    def lapsed(
        self,
        db: Connection,
        workspace: str,
        evidence: int,
        restoring: Restoring,
        scope: Scope | None,
    ) -> tuple[int | None, str | None]:
        """(the epoch a verdict on ``evidence`` lapsed at, or ``None``; its stand-in if not).

        The first of a restatement, a stand-in replaced by one that holds as the statement
        did, and the withdrawal of the news it rests on (a keyed item replaced it too).
        ``scope``: who may read the invalidated item.
        """
        text, news, said = restoring.text, restoring.news, restoring.said
        seen = self._seen.setdefault((scope, said), {})
        if self._paths is None:
            self._paths = stand_ins.paths(db, workspace, self.handles)
        stood_in, placed = stand_ins.placed_now(
            db, workspace, self._paths, evidence, restoring, scope
        )
        restored = next(
            (
                r.epoch
                for r in self.restoring(evidence, text, news)
                if restores(r, text, news)
                and (text is None or self._seen_by_all(db, workspace, r, scope, said, seen))
            ),
            None,
        )
        replaced = None if news is None else withdrawn_at(db, workspace, news)
        lapsed = min((e for e in (restored, stood_in, replaced) if e), default=None)
        return lapsed, None if lapsed is not None else placed

    @staticmethod
    def _seen_by_all(
        db: Connection,
        workspace: str,
        r: Recorded,
        scope: Scope | None,
        said: Scope | None,
        seen: dict[tuple[object, ...], bool],
    ) -> bool:
        """`seen_by_all`, asked once for each author and readers a statement has (``seen``).

        It reads nothing else of ``r``. A probe's shape: a text restated 5,000 times in
        the same words for the same readers sent two queries a statement for each verdict
        kept (1.5 s a return keeping 128).
        """
        event = r.event
        if not isinstance(event, Assert | Supersede):
            return False
        key = (event.author, event.item.principals, event.item.roles)
        if (found := seen.get(key)) is None:
            found = seen[key] = seen_by_all(db, workspace, r, scope, said)
        return found
