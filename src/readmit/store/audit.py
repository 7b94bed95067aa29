"""The audit log of decisions, and agent keys: the rows behind ``readmit audit`` and auth.

Decisions are numbered per workspace (1, 2, 3…) under the workspace's write lock;
their bodies are the decision records of `readmit.report`, kept as JSON in the record's
own key order (nothing digests or signs a body; `record` reads it back whole).
An issued view lists the same exclusions the record does, less what the agent may not
see (`readmit.admission.view.redact` of the record's): where they are exactly that, the
body leaves them out of the view and says so (`VIEW_EXCLUDED_REDACTED`), and `record`
puts them back, so a large return's exclusions are serialised and written once, not
twice. On SQLite a body is stored compressed (`packed`; PostgreSQL compresses the column
itself), and `record` reads either form. An agent key is stored only as its hash.
"""

import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from itertools import filterfalse
from typing import Any, TypeGuard

from pydantic_core import PydanticSerializationError, to_json

from readmit.admission.hidden import RULE, redact, seen_by_agent
from readmit.errors import DepartedMeanwhile, InvalidInput, StoreError
from readmit.reasons import Reason
from readmit.store.absence import last_departure
from readmit.store.base import DecisionSummary
from readmit.store.bodies import Departures
from readmit.store.connection import Connection, stamp
from readmit.store.deadline import LOOK_UP_WAIT, UNKNOWN

VIEW_EXCLUDED_REDACTED = "view_excluded_redacted"
"""A stored body's flag: its view's ``excluded`` is `redact` of its own, left out, by the
rule it names (`readmit.admission.hidden.RULE`; ``true`` before stop 58, for rule 1): its
views are rebuilt by the rule they were signed under."""
REST_OF_CHECKPOINT = "rest_of_checkpoint"
"""A stored body's ``not_selected`` when it is `rest_of` the candidates of a return to a
checkpoint: ``{"rest_of_checkpoint": <checkpoint id>}``, not the ids."""

Candidates = Callable[[str, int, int], list[str]]
"""The ids of C's items (workspace, checkpoint id, epoch), in the context's order."""


def body(record: dict[str, Any], rest_of_checkpoint: int | None = None) -> str:
    """The stored text of ``record``: its JSON, without what `restored` rebuilds.

    With ``rest_of_checkpoint``, the caller has found ``not_selected`` to be `rest_of` the
    candidates of a return to that checkpoint, and the body names the checkpoint instead:
    in a large workspace nearly every candidate is not selected, and their ids made the
    log grow with the store (2.3 MB a return at 100k items) rather than with what changed.
    """
    if rest_of_checkpoint is not None:
        record = {**record, "not_selected": {REST_OF_CHECKPOINT: rest_of_checkpoint}}
    view = record.get("view")
    if _rebuildable(view, record):
        slim = {k: v for k, v in view.items() if k != "excluded"}
        return _json({**record, "view": slim, VIEW_EXCLUDED_REDACTED: RULE})
    return _json(record)


def _json(value: dict[str, Any]) -> str:
    """``value`` as JSON, written by pydantic's serializer where it can.

    A busy workspace's record holds hundreds of exclusions and texts: 3.9 ms a return with
    the standard library's encoder, 1.4 ms with pydantic's. What that one refuses (a lone
    surrogate), or may have written as no JSON parser reads it (NaN, Infinity), gets the
    standard encoder, strict.

    Raises:
        InvalidInput: if ``value`` is not JSON (a number that is none, an object, a lone
            surrogate, nesting too deep).
    """
    try:
        text = to_json(value).decode()
    except (PydanticSerializationError, ValueError, RecursionError):
        text = None
    if text is None or "NaN" in text or "Infinity" in text:  # its own checks, or a text's word
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            text.encode("utf-8")  # a lone surrogate has no UTF-8
        except (ValueError, TypeError, RecursionError) as exc:  # a library caller's record
            raise InvalidInput(f"decision record is not JSON: {str(exc)[:200]}") from None
    return text


def packed(text: str, dialect: str) -> str | bytes:
    """``text`` as the ``decisions.body`` of a store of ``dialect`` keeps it.

    SQLite compresses nothing itself, and a record repeats its shapes (an exclusion's
    reason, stage and detail; an item's text beside its id): zlib at its fastest level
    made a 10k-item return's record of 153 kB 24 kB in 1 ms. PostgreSQL's column is
    compressed by the server (lz4, migration m007): it gets the text.
    """
    return zlib.compress(text.encode(), 1) if dialect == "sqlite" else text


def unpacked(stored: str | bytes) -> str | bytes:
    """A stored body as JSON: `packed`'s bytes inflated, a text (any store's) as it is.

    Raises:
        StoreError: if compressed bytes do not inflate (the store is damaged).
    """
    if isinstance(stored, str):
        return stored
    try:
        return zlib.decompress(stored)
    except zlib.error as exc:
        raise StoreError(f"a decision record in the audit log is damaged: {exc}") from exc


def _rebuildable(view: Any, record: dict[str, Any]) -> TypeGuard[dict[str, Any]]:
    """Whether ``view``'s exclusions are exactly what `restored` makes of ``record``'s."""
    return (
        isinstance(view, dict)
        and "excluded" in view
        and {"excluded", "hidden"} <= record.keys()
        and redacts(view["excluded"], record["excluded"], frozenset(record["hidden"]))
    )


def redacts(shown: Any, excluded: Sequence[Mapping[str, Any]], hidden: frozenset[str]) -> bool:
    """``shown == redact(excluded, hidden)``, without copying every exclusion to find out.

    `redact` shows an entry whose evidence names nothing hidden as a copy of it: a dict with
    list evidence is compared in place (its copy equals it). An entry it changes is redacted
    on its own, and one it leaves out is skipped by the same test `redact` makes. A busy
    workspace's record has hundreds of exclusions, and this runs on every issued return.
    """
    if not isinstance(shown, list):
        return False  # redact answers a list, which equals no other sequence
    if not hidden:  # the common case: redact copies every entry it shows, as it is
        seen = [e for e in excluded if e["reason"] != Reason.NOT_SELECTED]
        if all(type(e) is dict and type(e["evidence"]) is list for e in seen):
            return shown == seen
    kept = (e for e in excluded if seen_by_agent(e, hidden))
    count = 0
    for entry in kept:
        if count == len(shown):
            return False
        evidence = entry["evidence"]
        plain = type(entry) is dict and type(evidence) is list and hidden.isdisjoint(evidence)
        if not (shown[count] == entry if plain else [shown[count]] == redact([entry], hidden)):
            return False
        count += 1
    return count == len(shown)


def rest_of(record: Mapping[str, Any], candidates: Iterable[str]) -> list[str]:
    """The ``candidates`` that neither ``record``'s ``selected`` nor its ``excluded`` names."""
    named = set(record["selected"])
    named.update(e["item"] for e in record["excluded"])
    return list(filterfalse(named.__contains__, candidates))


def checkpoint_rest(
    read: Callable[[], AbstractContextManager[Connection]],
    departures: Departures,
    workspace: str,
    agent: str,
    at: datetime,
    record: dict[str, Any],
) -> int | None:
    """The checkpoint ``record``'s ``not_selected`` is the rest of (`rest_of`), if any.

    ``record`` is a return's to ``agent``'s latest checkpoint at ``at``; its candidates
    are C's items at its epoch, whose rows never change once committed.
    """
    epoch, rest = record.get("epoch"), record.get("not_selected")
    if record.get("workspace") != workspace or not isinstance(epoch, int) or not rest:
        return None
    # The context this process made for the return names its checkpoint and C's ids.
    known: tuple[int, Sequence[str]] | None
    known = departures.return_candidates((workspace, agent, at, epoch))
    if known is None:
        with read() as db:
            row = last_departure(db, workspace, agent, at)
            if row is None or row[1] != record.get("departure_epoch"):
                return None
            known = int(row[0]), departures.candidate_ids(db, workspace, row[0], epoch)
    checkpoint, ids = known
    return checkpoint if rest_of(record, ids) == rest else None


def restored(value: dict[str, Any], candidates: Candidates) -> dict[str, Any]:
    """A record as `body` was given it, from the stored body's parsed JSON."""
    rest = value.get("not_selected")
    if isinstance(rest, dict):
        ids = candidates(value["workspace"], rest[REST_OF_CHECKPOINT], value["epoch"])
        value["not_selected"] = rest_of(value, ids)
    if rule := value.pop(VIEW_EXCLUDED_REDACTED, False):
        number = rule if type(rule) is int else 1  # ``true`` before stop 58
        excluded = redact(value["excluded"], frozenset(value["hidden"]), number)
        view = {**value["view"], "excluded": excluded}
        value["view"] = {k: view[k] for k in sorted(view)}  # canonical order, as it is signed
    return value


def insert_decision(
    db: Connection,
    workspace: str,
    agent: str,
    at: datetime,
    epoch: int,
    outcome: str,
    text: str | bytes,
    departed: tuple[object, datetime | None] = (None, None),
) -> tuple[int, int]:
    """Log one decision (inside the caller's transaction): its row's id, and its number.

    ``text`` is the record as `body` and `packed` store it, made before the workspace's
    lock is taken. ``departed``: the epoch and, if known, the time of the departure it was
    decided on, which must still be the agent's latest (by ``at``) now that the
    workspace's lock is held (two departures with no event between share an epoch).

    Raises:
        DepartedMeanwhile: if a later departure was recorded while it was decided.
    """
    latest = last_departure(db, workspace, agent, at)
    of, when = departed
    if (
        latest is not None
        and of is not None
        and (latest[1] != of or (when is not None and latest[2] != stamp(when)))
    ):
        raise DepartedMeanwhile(
            f"{agent} departed again (at {latest[2]}) while its return was decided on an "
            "earlier departure: decide the return again"
        )
    row, number = db.execute(  # numbered per workspace, under its lock
        "INSERT INTO decisions (workspace, agent, at, epoch, outcome, body, number) "
        "SELECT ?, ?, ?, ?, ?, ?, COALESCE(MAX(number), 0) + 1 FROM decisions "
        "WHERE workspace = ? RETURNING id, number",
        (workspace, agent, stamp(at), epoch, outcome, text, workspace),
    ).fetchone()
    return int(row), int(number)


def decided_anyway(
    transaction: Callable[[str, float], AbstractContextManager[Connection]],
    workspace: str,
    inserted: tuple[int, int],
    row: tuple[str, datetime, int, str, str | bytes],
    failed: StoreError,
) -> int | None:
    """The own number of the decision whose recording ``failed``, if it is logged.

    Only where its COMMIT got no answer (`readmit.store.deadline.UNKNOWN`): read under the
    workspace's write lock (waited on `LOOK_UP_WAIT` at most), so that a COMMIT the server
    still finishes ends first. ``inserted`` is the row id and number its insert was given,
    ``row`` the agent, time, epoch, outcome and stored body sent: logged so, it is that
    decision. Not another with the same five (the same request decided again, a review),
    even under the same number (given again once this one rolled back: PostgreSQL never
    gives a row id again, and SQLite never leaves a COMMIT's outcome unknown). None where
    it is not, or where the log cannot be read (noted).
    """
    if UNKNOWN not in str(failed):
        return None
    (made, number), (agent, at, epoch, outcome, text) = inserted, row
    try:
        with transaction(workspace, LOOK_UP_WAIT) as db:
            found = db.execute(
                "SELECT 1 FROM decisions WHERE id = ? AND workspace = ? AND number = ? "
                "AND agent = ? AND at = ? AND epoch = ? AND outcome = ? AND body = ?",
                (made, workspace, number, agent, stamp(at), epoch, outcome, text),
            ).fetchone()
            return None if found is None else own_number(db, workspace, agent, number)
    except StoreError as unread:
        failed.add_note(f"whether the decision was logged could not be read: {unread}")
        return None


def own_number(db: Connection, workspace: str, agent: str, number: int) -> int:
    """How many of ``agent``'s decisions in ``workspace`` are numbered ``number`` or less."""
    (count,) = db.execute(
        "SELECT COUNT(*) FROM decisions WHERE workspace = ? AND agent = ? AND number <= ?",
        (workspace, agent, number),
    ).fetchone()
    return int(count)


def summaries(
    db: Connection,
    workspace: str | None,
    agent: str | None,
    after: int = 0,
    limit: int | None = None,
) -> list[DecisionSummary]:
    """The logged decisions, oldest first, of one workspace or agent if named.

    Past the first ``after``, ``limit`` at most, read off an index (`decisions_by_agent`,
    `decisions_by_number`): the rows before ``after`` are not decoded.

    Raises:
        InvalidInput: if ``after`` or ``limit`` is negative.
    """
    if after < 0 or (limit is not None and limit < 0):  # SQLite reads -1 as no limit at all
        raise InvalidInput(f"after ({after}) and limit ({limit}) may not be negative")
    query = "SELECT number, workspace, agent, at, epoch, outcome FROM decisions"
    filters = [(c, v) for c, v in (("workspace", workspace), ("agent", agent)) if v is not None]
    if filters:
        query += " WHERE " + " AND ".join(f"{c} = ?" for c, _ in filters)
    # In a workspace, numbers are given in the order of ids: `decisions_by_agent` reads it.
    query += " ORDER BY number" if workspace is not None else " ORDER BY id"
    params: list[object] = [v for _, v in filters]
    if limit is not None or after:
        query += " LIMIT ? OFFSET ?"
        params += [_ALL if limit is None else min(limit, _ALL), min(after, _ALL)]
    return [
        DecisionSummary(
            id=r[0],
            workspace=r[1],
            agent=r[2],
            at=datetime.fromisoformat(r[3]),
            epoch=r[4],
            outcome=r[5],
        )
        for r in db.execute(query, params).fetchall()
    ]


_ALL = 1 << 62
"""A limit no table reaches (SQLite takes ``OFFSET`` only after a ``LIMIT``), and the most a
limit or an offset is given as: a larger one reads the same, and neither database takes one
past 2**63."""


def count(db: Connection, workspace: str, agent: str) -> int:
    """How many decisions ``agent`` has in ``workspace`` (counted on the index)."""
    (n,) = db.execute(
        "SELECT COUNT(*) FROM decisions WHERE workspace = ? AND agent = ?", (workspace, agent)
    ).fetchone()
    return int(n)


def record(
    db: Connection, number: int, workspace: str | None, candidates: Candidates
) -> dict[str, Any]:
    """One logged decision record, by its number in ``workspace``.

    ``candidates`` lists the ids a ``not_selected`` kept as the rest of a checkpoint's.

    Raises:
        StoreError: if there is no such decision.
        InvalidInput: if there are several, in several workspaces, and none was named.
    """
    query = "SELECT body FROM decisions WHERE number = ?"
    params: list[object] = [number]
    if workspace is not None:
        query, params = query + " AND workspace = ?", [number, workspace]
    rows = db.execute(query + " LIMIT 2", params).fetchall()
    if not rows:
        raise StoreError(f"no decision {number} in the audit log (see `readmit audit`)")
    if len(rows) > 1:
        found = db.execute("SELECT workspace FROM decisions WHERE number = ?", [number])
        spaces = ", ".join(sorted(w for (w,) in found.fetchall()))
        raise InvalidInput(
            f"decision {number} is in several workspaces ({spaces}): name its workspace"
        )
    return restored(json.loads(unpacked(rows[0][0])), candidates)
