"""The work-state store over SQL: one implementation for SQLite and PostgreSQL.

Events go to the append-only ``events`` log; the ``items``, ``evidence``,
``obligations`` and ``names`` projections are kept in the same transaction (see
`readmit.store.writer`). Writers to one workspace are serialized, so epochs
are strictly increasing and gap-free; a batch is stored whole or not at all.

One store object may be shared between threads. Each transaction has a connection
of its own (`readmit.store.pool`): reads run in read-only snapshots and never wait
for a writer; writers are serialized per workspace (in this process by a lock per
workspace, across processes by the database), so a write to one workspace never
holds up reads, nor on PostgreSQL writes, of another.
"""

import json
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from readmit.admission.context import History, ReturnContext
from readmit.admission.invalidation.implicit import Verdict
from readmit.admission.invalidation.propagation import propagate
from readmit.admission.invalidation.screening import Judgment
from readmit.canonical import canonical_json, digest
from readmit.errors import InvalidEvent, InvalidInput, StoreError
from readmit.events import (
    Assert,
    Close,
    Event,
    Recorded,
    RecordExperience,
    ReturnRequest,
    Revoke,
    Supersede,
)
from readmit.model import Agent, Checkpoint, Experience, Item, Returner
from readmit.reasons import Exclusion, Reason, Stage
from readmit.store import verdicts
from readmit.store.base import DecisionSummary
from readmit.store.connection import Conflict, Connection, stamp
from readmit.store.migrations import MIGRATIONS, migrate
from readmit.store.pool import Pool
from readmit.store.writer import Clock, Writer
from readmit.wire import item_from_json, obligation_from_json, parse_event

_JUDGMENTS = "SELECT key, invalidates, confidence, reason, terms FROM judgments"
_ITEMS_BY = {
    "id": "SELECT body FROM items WHERE workspace = ? AND id",
    "key": "SELECT body FROM items WHERE workspace = ? AND key",
}
K = TypeVar("K")
V = TypeVar("V")
_LAST = 2**62
"""An epoch no log reaches (the open end of `SqlStore.events`)."""
_CACHE_LIMIT = 1_000_000
"""Decoded items (and parsed events) kept per store; past this a cache starts over."""


class SqlStore:
    """A `WorkStateStore` over a pool of SQL connections (SQLite or PostgreSQL).

    Raises:
        StoreError: at open, if the database is damaged or cannot be migrated.
    """

    def __init__(self, pool: Pool, url: str) -> None:
        self._pool = pool
        self.conn = pool.first
        """A connection for ad-hoc statements; the store's own work uses its pool."""
        self.url = url
        self._local = threading.local()
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._decoded: dict[tuple[str, str], Item] = {}
        self._parsed: dict[tuple[str, int], Recorded] = {}
        try:
            self.conn.check()  # a damaged file is neither migrated nor written to
            migrate(self.conn)
            self.check()
        except BaseException:
            pool.close()
            raise

    def check(self) -> None:
        """Check that the database is intact and its schema up to date (for ``/health``).

        Raises:
            StoreError: if it is damaged, unreachable or not fully migrated.
        """
        with self._read() as db:
            db.check()
            done = {r[0] for r in db.execute("SELECT name FROM _readmit_migrations")}
        missing = [name for name, _ in MIGRATIONS if name not in done]
        if missing:
            raise StoreError(f"store schema is missing migrations {', '.join(missing)}")

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """A read-only snapshot, or the transaction this thread is already in."""
        current: Connection | None = getattr(self._local, "db", None)
        if current is not None:
            yield current
            return
        with self._pool.connection() as db, db.snapshot():
            self._local.db = db
            try:
                yield db
            finally:
                self._local.db = None

    @contextmanager
    def _transaction(self, lock: str) -> Iterator[Connection]:
        """A write transaction, serialized with every other writer of ``lock``."""
        if getattr(self._local, "db", None) is not None:
            raise StoreError("a write cannot start inside another transaction")
        with self._writers(lock), self._pool.connection() as db, db.transaction(lock=lock):
            self._local.db = db
            try:
                yield db
            finally:
                self._local.db = None

    def _writers(self, name: str) -> threading.Lock:
        """This process's lock for the writers of workspace ``name``."""
        with self._locks_lock:
            return self._locks.setdefault(name, threading.Lock())

    def create_workspace(self, workspace: str, agents: Sequence[Agent]) -> None:
        with self._transaction(lock=workspace) as db:
            db.execute(
                "INSERT INTO workspaces (id) VALUES (?) ON CONFLICT DO NOTHING", (workspace,)
            )
            for agent in agents:
                try:
                    db.execute(
                        "INSERT INTO agents (workspace, id, principal, role) VALUES (?, ?, ?, ?)",
                        (workspace, agent.id, agent.principal, agent.role),
                    )
                except Conflict:
                    raise InvalidInput(
                        f"agent {agent.id!r} already exists in {workspace!r}"
                    ) from None

    def agents(self, workspace: str) -> dict[str, Agent]:
        with self._read() as db:
            rows = db.execute(
                "SELECT id, principal, role FROM agents WHERE workspace = ?", (workspace,)
            ).fetchall()
        return {r[0]: Agent(id=r[0], principal=r[1], role=r[2]) for r in rows}

    def _agent(self, workspace: str, agent: str, step_id: str) -> Agent:
        found = self.agents(workspace).get(agent)
        if found is None:
            raise InvalidEvent(step_id, f"unknown agent {agent!r} in workspace {workspace!r}")
        return found

    def append(
        self, workspace: str, events: Sequence[Event], *, clock: Clock | None = None
    ) -> list[Recorded]:
        with self._transaction(lock=workspace) as db:
            return Writer(db, workspace, self.agents(workspace)).append(events, clock)

    def _epoch(self, db: Connection, workspace: str) -> int:
        row = db.execute(
            "SELECT MAX(epoch) FROM events WHERE workspace = ?", (workspace,)
        ).fetchone()
        return int(row[0] or 0)

    def record_experience(self, workspace: str, step: RecordExperience) -> Experience:
        with self._transaction(lock=workspace) as db:
            who = self._agent(workspace, step.agent, step.id)
            if not Writer(db, workspace, {}).source_readable(step.source, who):
                raise InvalidEvent(step.id, f"experience source {step.source!r} is no known item")
            experience = Experience(
                id=step.experience_id,
                agent=step.agent,
                text=step.text,
                source_item_id=step.source,
                epoch=self._epoch(db, workspace),
            )
            try:
                db.execute(
                    "INSERT INTO experiences (workspace, agent, id, epoch, at, source_item, text) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        workspace,
                        step.agent,
                        experience.id,
                        experience.epoch,
                        stamp(step.at),
                        step.source,
                        step.text,
                    ),
                )
            except Conflict:
                raise InvalidEvent(
                    step.id, f"experience {experience.id!r} already exists"
                ) from None
        return experience

    def depart(self, workspace: str, agent: str, at: datetime) -> Checkpoint:
        """Checkpoint what ``agent`` can see now and is still valid (D_a).

        Left out: items a standing verdict invalidated, items whose validity has
        ended, and items whose premise (``depends_on``, transitively) is one of
        those or is no longer active.
        """
        with self._transaction(lock=workspace) as db:
            who = self._agent(workspace, agent, f"depart {agent}")
            active = self._active(db, workspace)
            standing, _ = verdicts.load(db, workspace, (i.id for i in active))
            visible = sorted(
                (
                    i
                    for i in _valid(active, standing.keys(), at)
                    if i.scope.readable_by(who.principal, who.role)
                ),
                key=lambda i: i.id,
            )
            receipts = [[i.id, i.receipt.digest if i.receipt else None] for i in visible]
            checkpoint = Checkpoint(
                agent=agent,
                epoch=self._epoch(db, workspace),
                at=at,
                digest=digest(receipts),
                item_ids=tuple(i.id for i in visible),
            )
            (checkpoint_id,) = db.execute(
                "INSERT INTO checkpoints (workspace, agent, epoch, at, digest) "
                "VALUES (?, ?, ?, ?, ?) RETURNING id",
                (workspace, agent, checkpoint.epoch, stamp(at), checkpoint.digest),
            ).fetchone()
            db.executemany(
                "INSERT INTO checkpoint_items (checkpoint, item) VALUES (?, ?)",
                ((checkpoint_id, i) for i in checkpoint.item_ids),
            )
        return checkpoint

    def _active(self, db: Connection, workspace: str) -> list[Item]:
        """The active items, decoding only the bodies no earlier read decoded.

        Status is read fresh every time: only the immutable bodies are reused.
        """
        ids = [
            r[0]
            for r in db.execute(
                "SELECT id FROM items WHERE workspace = ? AND status = 'active'", (workspace,)
            ).fetchall()
        ]
        found = self._cached(self._decoded, workspace, ids)
        if len(found) < len(ids):
            for item_id, body in db.execute(
                "SELECT id, body FROM items WHERE workspace = ? AND status = 'active'",
                (workspace,),
            ).fetchall():
                if item_id not in found:
                    found[item_id] = item_from_json(json.loads(body))
            self._keep(self._decoded, workspace, found)
        return [found[i] for i in ids]

    def visible_state(self, workspace: str, agent: str) -> list[Item]:
        """The active items ``agent`` may read now, by id."""
        with self._read() as db:
            who = self._agent(workspace, agent, f"state of {agent}")
            items = self._active(db, workspace)
        readable = (i for i in items if i.scope.readable_by(who.principal, who.role))
        return sorted(readable, key=lambda i: i.id)

    def experiences(self, workspace: str, agent: str) -> list[Experience]:
        """``agent``'s own private bank, oldest first."""
        with self._read() as db:
            rows = db.execute(
                "SELECT id, source_item, text, epoch FROM experiences WHERE workspace = ? "
                "AND agent = ? ORDER BY epoch, id",
                (workspace, agent),
            ).fetchall()
        return [
            Experience(id=r[0], agent=agent, source_item_id=r[1], text=r[2], epoch=r[3])
            for r in rows
        ]

    def return_context(self, workspace: str, request: ReturnRequest) -> ReturnContext:
        with self._read() as db:
            who = self._agent(workspace, request.agent, request.id)
            row = db.execute(
                "SELECT id, epoch, at, digest FROM checkpoints WHERE workspace = ? AND agent = ? "
                "AND at <= ? ORDER BY at DESC, id DESC LIMIT 1",
                (workspace, request.agent, stamp(request.at)),
            ).fetchone()
            if row is None:
                raise InvalidEvent(request.id, f"agent {request.agent!r} has not departed")
            cp_id, cp_epoch = row[0], row[1]
            items = self._context_items(db, workspace, cp_id, cp_epoch)
            standing, screened = verdicts.load(db, workspace, (i.id for i in items))
            departure = Checkpoint(
                agent=request.agent,
                epoch=cp_epoch,
                at=datetime.fromisoformat(row[2]),
                digest=row[3],
                item_ids=tuple(i.id for i in items if i.epoch <= cp_epoch),
            )
            delta = self.events(workspace, after_epoch=cp_epoch)
            obligations = tuple(  # one the returner may not read never binds nor shows
                o
                for r in db.execute(
                    "SELECT body FROM obligations WHERE workspace = ? AND resolved_epoch IS NULL "
                    "ORDER BY epoch, id",
                    (workspace,),
                ).fetchall()
                if (o := obligation_from_json(json.loads(r[0]))).item.scope.readable_by(
                    who.principal, who.role
                )
            )
            evidence = frozenset(
                r[0]
                for r in db.execute(
                    "SELECT id FROM evidence WHERE workspace = ?", (workspace,)
                ).fetchall()
            )
            experiences = tuple(
                Experience(id=r[0], agent=request.agent, source_item_id=r[1], text=r[2], epoch=r[3])
                for r in db.execute(
                    "SELECT id, source_item, text, epoch FROM experiences WHERE workspace = ? "
                    "AND agent = ? AND at <= ? ORDER BY epoch, id",
                    (workspace, request.agent, stamp(request.at)),
                ).fetchall()
            )
            epoch = self._epoch(db, workspace)
        returner = Returner(
            agent=who.id,
            principal=who.principal,
            role=who.role,
            task=request.task,
            purpose=request.purpose,
            at=request.at,
        )
        return ReturnContext(
            workspace=workspace,
            cycle=f"{workspace}:{request.agent}:{request.id}@{epoch}",
            returner=returner,
            departure=departure,
            epoch=epoch,
            items=items,
            delta=tuple(delta),
            obligations=obligations,
            evidence=evidence,
            experiences=experiences,
            standing=standing,
            screened=screened,
            agents=self.agents(workspace),
            history=partial(self._history, workspace, cp_epoch),
        )

    def _history(self, workspace: str, upto: int, after: int) -> History:
        """The events in (after, upto] and the items they withdrew or replaced."""
        events = tuple(self.events(workspace, after, upto))
        targets = {
            r.event.target for r in events if isinstance(r.event, Revoke | Close | Supersede)
        }
        keys = {
            r.event.item.key for r in events if isinstance(r.event, Assert) and r.event.item.key
        }
        found: list[Item] = []
        with self._read() as db:
            for column, values in (("id", sorted(targets)), ("key", sorted(keys))):
                for start in range(0, len(values), 500):
                    chunk = values[start : start + 500]
                    marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
                    query = _ITEMS_BY[column] + f" IN ({marks})"
                    rows = db.execute(query, (workspace, *chunk)).fetchall()
                    found += [item_from_json(json.loads(r[0])) for r in rows]
        return History(events=events, items=tuple(found))

    def _context_items(
        self, db: Connection, workspace: str, checkpoint: int, epoch: int
    ) -> tuple[Item, ...]:
        """D_a's items and those asserted after ``epoch``, decoding each stored body only once.

        Item bodies are immutable once committed (status lives in its own
        column), so a decoded item can be reused by every later return.
        """
        ids = [
            i
            for (i,) in db.execute(
                "SELECT item FROM checkpoint_items WHERE checkpoint = ? "
                "UNION ALL SELECT id FROM items WHERE workspace = ? AND epoch > ?",
                (checkpoint, workspace, epoch),
            ).fetchall()
        ]
        found = self._cached(self._decoded, workspace, ids)
        if len(found) < len(ids):
            for item_id, body in db.execute(
                "SELECT i.id, i.body FROM checkpoint_items c JOIN items i "
                "ON i.workspace = ? AND i.id = c.item WHERE c.checkpoint = ? "
                "UNION ALL SELECT id, body FROM items WHERE workspace = ? AND epoch > ?",
                (workspace, checkpoint, workspace, epoch),
            ).fetchall():
                if item_id not in found:
                    found[item_id] = item_from_json(json.loads(body))
            self._keep(self._decoded, workspace, found)
        return tuple(found[i] for i in ids)

    def events(
        self, workspace: str, after_epoch: int = 0, upto: int | None = None
    ) -> list[Recorded]:
        """The events after ``after_epoch`` (up to ``upto``), each body parsed once per store.

        The log is append-only, so a parsed event can serve every later return
        (only committed events are read here: nothing appends and reads the log in
        one transaction).
        """
        params = (workspace, after_epoch, _LAST if upto is None else upto)
        with self._read() as db:
            epochs = [
                r[0]
                for r in db.execute(
                    "SELECT epoch FROM events WHERE workspace = ? AND epoch > ? AND epoch <= ? "
                    "ORDER BY epoch",
                    params,
                ).fetchall()
            ]
            found = self._cached(self._parsed, workspace, epochs)
            if len(found) < len(epochs):
                for epoch, body in db.execute(
                    "SELECT epoch, body FROM events WHERE workspace = ? AND epoch > ? "
                    "AND epoch <= ?",
                    params,
                ).fetchall():
                    if epoch not in found:
                        found[epoch] = Recorded(
                            epoch=epoch, event=parse_event(json.loads(body), epoch)
                        )
                self._keep(self._parsed, workspace, found)
        return [found[e] for e in epochs]

    def _cached(self, cache: dict[tuple[str, K], V], workspace: str, keys: list[K]) -> dict[K, V]:
        """What ``cache`` already holds of ``keys`` in ``workspace``."""
        with self._cache_lock:
            return {k: cache[workspace, k] for k in keys if (workspace, k) in cache}

    def _keep(self, cache: dict[tuple[str, K], V], workspace: str, values: dict[K, V]) -> None:
        """Add ``values`` to ``cache`` (starting it over past `_CACHE_LIMIT`)."""
        with self._cache_lock:
            if len(cache) + len(values) > _CACHE_LIMIT:
                cache.clear()
            cache.update(((workspace, k), v) for k, v in values.items())

    def record_decision(
        self,
        workspace: str,
        agent: str,
        at: datetime,
        epoch: int,
        outcome: str,
        record: dict[str, Any],
        judgment: Judgment | None = None,
    ) -> int:
        with self._transaction(lock=workspace) as db:
            (decision_id,) = db.execute(  # numbered per workspace, under its lock
                "INSERT INTO decisions (workspace, agent, at, epoch, outcome, body, number) "
                "SELECT ?, ?, ?, ?, ?, ?, COALESCE(MAX(number), 0) + 1 FROM decisions "
                "WHERE workspace = ? RETURNING number",
                (workspace, agent, stamp(at), epoch, outcome, canonical_json(record), workspace),
            ).fetchone()
            if judgment is not None and judgment.verifier:
                verdicts.remember(db, workspace, epoch, judgment, partial(self.events, workspace))
        return int(decision_id)

    def decisions(
        self, workspace: str | None = None, agent: str | None = None
    ) -> list[DecisionSummary]:
        query = "SELECT number, workspace, agent, at, epoch, outcome FROM decisions"
        filters = [(c, v) for c, v in (("workspace", workspace), ("agent", agent)) if v is not None]
        if filters:
            query += " WHERE " + " AND ".join(f"{c} = ?" for c, _ in filters)
        with self._read() as db:
            rows = db.execute(query + " ORDER BY id", [v for _, v in filters]).fetchall()
        return [
            DecisionSummary(
                id=r[0],
                workspace=r[1],
                agent=r[2],
                at=datetime.fromisoformat(r[3]),
                epoch=r[4],
                outcome=r[5],
            )
            for r in rows
        ]

    def decision(self, decision_id: int, workspace: str | None = None) -> dict[str, Any]:
        """One stored decision record, by its number in ``workspace``.

        Without ``workspace`` the number must name a decision in only one workspace.

        Raises:
            StoreError: if there is no such decision, or several without a workspace.
        """
        query = "SELECT body FROM decisions WHERE number = ?"
        params: list[object] = [decision_id]
        if workspace is not None:
            query, params = query + " AND workspace = ?", [decision_id, workspace]
        with self._read() as db:
            rows = db.execute(query + " LIMIT 2", params).fetchall()
        if not rows:
            raise StoreError(f"no decision {decision_id} in the audit log (see `readmit audit`)")
        if len(rows) > 1:
            raise StoreError(
                f"decision {decision_id} is in several workspaces: name one (see `readmit audit`)"
            )
        value: dict[str, Any] = json.loads(rows[0][0])
        return value

    def add_agent_key(self, workspace: str, agent: str, key_hash: str, at: datetime) -> None:
        """Store the hash of a new API key for ``agent``."""
        with self._transaction(lock=workspace) as db:
            self._agent(workspace, agent, f"key for {agent}")
            db.execute(
                "INSERT INTO agent_keys (key_hash, workspace, agent, created_at) "
                "VALUES (?, ?, ?, ?)",
                (key_hash, workspace, agent, stamp(at)),
            )

    def agent_for_key(self, key_hash: str) -> tuple[str, Agent] | None:
        """The (workspace, agent) an API key hash belongs to, if any."""
        with self._read() as db:
            row = db.execute(
                "SELECT k.workspace, a.id, a.principal, a.role FROM agent_keys k JOIN agents a "
                "ON a.workspace = k.workspace AND a.id = k.agent WHERE k.key_hash = ?",
                (key_hash,),
            ).fetchone()
        return None if row is None else (row[0], Agent(id=row[1], principal=row[2], role=row[3]))

    def judgments(self, keys: Sequence[str]) -> dict[str, Verdict]:
        """Cached verdicts (`readmit.admission.invalidation.cache.JudgmentCache`)."""
        found: dict[str, Verdict] = {}
        with self._read() as db:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
                query = _JUDGMENTS + f" WHERE key IN ({marks})"
                rows = db.execute(query, chunk).fetchall()
                for key, invalidates, confidence, reason, terms in rows:
                    found[key] = Verdict(
                        invalidates=bool(invalidates),
                        confidence=confidence,
                        reason=reason,
                        terms=tuple(json.loads(terms)),
                    )
        return found

    def remember_judgments(self, verifier: str, verdicts: Mapping[str, Verdict]) -> None:
        """Store verdicts; a key already judged keeps its first verdict."""
        with self._transaction(lock="_readmit_judgments") as db:
            db.executemany(
                "INSERT INTO judgments (key, verifier, invalidates, confidence, reason, terms) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [
                    (k, verifier, int(v.invalidates), v.confidence, v.reason, json.dumps(v.terms))
                    for k, v in verdicts.items()
                ],
            )

    def close(self) -> None:
        self._pool.close()


def _valid(active: Sequence[Item], invalid: Collection[str], at: datetime) -> list[Item]:
    """The active items no standing verdict, ended validity or fallen premise rules out."""
    present = {i.id for i in active}
    fallen = {i.id for i in active if i.id in invalid or i.validity.ended(at)}
    fallen |= {p for i in active for p in i.depends_on if p not in present}  # withdrawn
    kept, _ = propagate(  # truth maintenance, as at a return (it reads only the ids)
        [i for i in active if i.id not in fallen],
        excluded=(Exclusion(item=f, reason=Reason.EXPIRED, stage=Stage.EXPLICIT) for f in fallen),
    )
    return kept
