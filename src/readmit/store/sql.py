"""The work-state store over SQL: one implementation for SQLite and PostgreSQL.

Events go to the append-only ``events`` log; the ``items``, ``evidence``, ``obligations``
and ``names`` projections are kept in the same transaction (see `readmit.store.writer`).
Writers to one workspace are serialized, so epochs are strictly increasing and gap-free;
a batch is stored whole or not at all.

One store object may be shared between threads. Each transaction has a connection of its own
(`readmit.store.pool`): reads run in read-only snapshots and never wait for a writer; writers
are serialized per workspace (by a lock in this process, by the database across processes), so
a write to one workspace never holds up reads, nor on PostgreSQL writes, of another.

The SQL itself lives with what it is for, in modules of `readmit.store`: `bodies` (decoding
items and events once; `decoded` keeps them), `absence` (departures and what a return reads),
`audit` (decisions, recorded by `records`), `agent_keys` (API keys), `held` (a key's newest
item), `judgments` (the verdict cache), `verdicts` (standing invalidations) and `premises`
(premises C does not hold).
"""

import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime
from functools import partial
from operator import attrgetter
from typing import Any, TypeVar

from readmit.admission.context import ReturnContext, items_by_id
from readmit.admission.invalidation.judgment import Judgment
from readmit.clock import now
from readmit.collector import paused
from readmit.errors import InvalidEvent, InvalidInput, StoreError
from readmit.events import Event, Recorded, RecordExperience, ReturnRequest
from readmit.model import Agent, Checkpoint, Experience, Item, Obligation, Returner
from readmit.store import absence, left_out, premises, quoted, restoring, verdicts
from readmit.store.agent_keys import AgentKeys
from readmit.store.base import Returning
from readmit.store.bodies import LAST_EPOCH, Departures, active_items, logged_events
from readmit.store.buckets import Buckets
from readmit.store.clock import database_time
from readmit.store.connection import Conflict, Connection
from readmit.store.deadline import patiently
from readmit.store.decoded import BodyCache
from readmit.store.held import Held
from readmit.store.history import history, named
from readmit.store.judgments import Judgments
from readmit.store.leases import Leases
from readmit.store.let_back import readmitted
from readmit.store.migrations import missing
from readmit.store.obligations import over_cap
from readmit.store.pool import Pool
from readmit.store.records import Records
from readmit.store.resent import answered
from readmit.store.state import State
from readmit.store.turns import WriterTurns
from readmit.store.upgrade import lacking, upgrade
from readmit.store.writer import Clock, Writer
from readmit.wire import domain

_ID = attrgetter("id")
_NO_WORKSPACE = "no workspace {!r} in this store"
T = TypeVar("T")


class SqlStore(AgentKeys, Buckets, Held, Judgments, Leases, Records, State):
    """A `WorkStateStore` over a pool of SQL connections (SQLite or PostgreSQL).

    Opening it applies the migrations its schema lacks, unless ``migrate`` is false
    (`readmit migrate --check`, which only reads what it lacks).

    Raises:
        StoreError: at open, if the database is damaged or cannot be migrated.
    """

    def __init__(self, pool: Pool, url: str, *, migrate: bool = True) -> None:
        self._pool = pool
        self.conn = pool.first
        """A connection for ad-hoc statements; the store's own work uses its pool."""
        self.url = url
        self._local = threading.local()
        postgres = self.conn.dialect == "postgres"
        self.now: Clock = self._database_now if postgres else now
        """The store's clock, by which servers over it date (`readmit.store.clock`)."""
        self._turns = WriterTurns()
        self._decoded: BodyCache[str, Item] = BodyCache()
        self._parsed: BodyCache[int, Recorded] = BodyCache()
        self._obligations: BodyCache[str, Obligation] = BodyCache()
        self._departures = Departures()
        self._readable: dict[tuple[str, str, str, int], list[Item]] = {}  # `State`
        self._own: dict[tuple[str, int], tuple[str, int]] = {}  # `Records.own_number`
        self.generation = 0  # write transactions committed through this object: readers poll it
        self._commits = itertools.count(1)  # next() on it is atomic: no increment is lost
        try:
            self.conn.check()  # a damaged file is neither migrated nor written to
            # A store up to date is opened by reads alone, within the deadline: no write, no
            # lock (a role that may only read and write rows opens it). Migrating can take
            # minutes on a large store, once: it waits as long as it takes.
            if migrate and lacking(self.conn):
                with patiently(self.conn.deadline):
                    upgrade(self.conn)
                if lacking(self.conn):
                    self.check()  # names what is still missing (integrity was checked above)
        except BaseException:
            pool.close()
            raise

    def check(self) -> None:
        """Check that the database is intact and its schema up to date (for ``/health``).

        Once more if a pooled connection the server dropped failed it (``/health`` said 503
        while every route answered, a review).

        Raises:
            StoreError: if it is damaged, unreachable or not fully migrated.
        """
        drained = self._pool.drained
        try:
            self._check()
        except StoreError:
            if self._pool.drained == drained:  # not a lost connection, whose idle ones went
                raise
            self._check()

    def _check(self) -> None:
        with self._read() as db:
            db.check()
            done = {r[0] for r in db.execute("SELECT name FROM _readmit_migrations")}
        absent = missing(done)
        if absent:
            raise StoreError(f"store schema is missing migrations {', '.join(absent)}")

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
    def _transaction(self, lock: str, wait: float | None = None) -> Iterator[Connection]:
        """A write transaction, serialized with every other writer of ``lock``.

        ``wait``: at most so many seconds for another session's hold of it (PostgreSQL), and
        not in turn behind this process's other writers (a look-up, `deadline.LOOK_UP_WAIT`).
        """
        if getattr(self._local, "db", None) is not None:
            raise StoreError("a write cannot start inside another transaction")
        try:
            with (
                self._turns.turn(lock, self.conn.deadline) if wait is None else nullcontext(),
                self._pool.connection() as db,
                db.transaction(lock=lock, wait=wait),
            ):
                self._local.db = db
                try:
                    yield db
                finally:
                    self._local.db = None
        except StoreError:  # perhaps committed (a COMMIT cut by its deadline): readers look again
            self.generation = next(self._commits)
            raise
        self.generation = next(self._commits)  # committed

    def create_workspace(self, workspace: str, agents: Sequence[Agent]) -> None:
        agents = domain.checked_workspace(workspace, agents)
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
                    problem = f"agent {agent.id!r} already exists in {workspace!r}"
                    raise InvalidInput(problem) from None

    def agents(self, workspace: str) -> dict[str, Agent]:
        with self._read() as db:
            rows = db.execute(
                "SELECT id, principal, role FROM agents WHERE workspace = ?", (workspace,)
            ).fetchall()
        return {r[0]: Agent(id=r[0], principal=r[1], role=r[2]) for r in rows}

    def _agent(self, workspace: str, agent: str, step_id: str) -> Agent:
        agents = self.agents(workspace)
        found = agents.get(agent)
        if found is None:  # no agents at all: no such workspace, as `_append` says
            problem = f"unknown agent {agent!r} in workspace {workspace!r}"
            raise InvalidEvent(step_id, problem if agents else _NO_WORKSPACE.format(workspace))
        return found

    def append(
        self,
        workspace: str,
        events: Sequence[Event],
        *,
        clock: Clock | None = None,
        max_open: int | None = None,
        own: bool = False,
    ) -> list[Recorded]:
        with paused():
            try:
                with self._transaction(lock=workspace) as db:
                    recorded = self._append(db, workspace, events, clock, own)
                    if max_open is not None:  # counted after the batch, under the lock
                        over_cap(db, workspace, recorded, max_open)
            except (InvalidEvent, StoreError) as failed:  # sent again, or its COMMIT unanswered
                if not (recorded := answered(self, workspace, events, clock, failed)):
                    raise
            # Committed, the log append-only: kept parsed for the next return (tested per op).
            self._parsed.keep(workspace, {r.epoch: r for r in recorded})
        return recorded

    def _append(
        self,
        db: Connection,
        workspace: str,
        events: Sequence[Event],
        clock: Clock | None,
        own: bool = False,
    ) -> list[Recorded]:
        domain.checked_events(events)
        agents = self.agents(workspace)
        if not agents:  # not each author unknown: the workspace is
            if not events:  # nothing to blame it on, but an empty batch is no answer either
                raise InvalidInput(_NO_WORKSPACE.format(workspace))
            raise InvalidEvent(events[0].id, _NO_WORKSPACE.format(workspace))
        known = partial(self._decoded.get, workspace)
        # Most batches claim only new ids: the unique indexes check those as the rows go
        # in, with no lookup first. A batch refused that way (or any other) is rolled back
        # and checked again event by event, so the refusal names the event it always did.
        db.execute("SAVEPOINT batch")
        try:
            writer = Writer(db, workspace, agents, optimistic=True, known=known, own=own)
            return writer.append(events, clock)
        except (InvalidEvent, Conflict):
            db.execute("ROLLBACK TO SAVEPOINT batch")
        return Writer(db, workspace, agents, known=known, own=own).append(events, clock)

    def _epoch(self, db: Connection, workspace: str) -> int:
        row = db.execute("SELECT MAX(epoch) FROM events WHERE workspace = ?", (workspace,))
        return int(row.fetchone()[0] or 0)

    def record_experience(self, workspace: str, step: RecordExperience) -> Experience:
        domain.checked_experience(step)
        with self._transaction(lock=workspace) as db:
            who = self._agent(workspace, step.agent, step.id)
            if not Writer(db, workspace, {}).source_readable(step.source, who):
                problem = f"experience source {step.source!r} is no known item"
                raise InvalidEvent(step.id, problem, unknown=step.source)
            experience = Experience(
                id=step.experience_id,
                agent=step.agent,
                text=step.text,
                source_item_id=step.source,
                epoch=self._epoch(db, workspace),
            )
            absence.insert_experience(db, workspace, step, experience.epoch)
        return experience

    def depart(
        self, workspace: str, agent: str, at: datetime, returning_to: Returning | None = None
    ) -> Checkpoint:
        """Checkpoint what ``agent`` can see now and is still valid (D_a, `absence.checkpoint`)."""
        domain.checked_departure(agent, at, returning_to)
        with self._transaction(lock=workspace) as db:
            who = self._agent(workspace, agent, f"depart {agent}")
            absence.check_after_return(db, workspace, agent, at)
            active = active_items(db, self._decoded, workspace)
            standing, _ = verdicts.load(db, workspace, set(map(_ID, active)), None, at)
            epoch = self._epoch(db, workspace)
            made, left_out = absence.checkpoint(who, active, standing.keys(), epoch, at)
            absence.insert_checkpoint(db, workspace, made, returning_to, left_out)
        return made

    def departed_for(
        self, workspace: str, agent: str, at: datetime | None = None
    ) -> Returning | None:
        """The task and purpose ``agent``'s latest departure (by ``at``) said it returns to."""
        domain.checked_time(at, f"departed_for {agent}")
        return self._reading(absence.departed_for, workspace, agent, at)

    def has_departed(self, workspace: str, agent: str, at: datetime) -> bool:
        """Whether ``agent`` has a departure at or before ``at`` (a return can be decided)."""
        domain.checked_time(at, f"has_departed {agent}")
        return self._reading(absence.last_departure, workspace, agent, at) is not None

    def return_context(self, workspace: str, request: ReturnRequest) -> ReturnContext:
        domain.checked_return(request)
        with self._read() as db:
            who = self._agent(workspace, request.agent, request.id)
            row = absence.last_departure(db, workspace, request.agent, request.at)
            if row is None:
                raise InvalidEvent(request.id, f"agent {request.agent!r} has not departed")
            cp_id, cp_epoch = row[0], row[1]
            epoch = self._epoch(db, workspace)
            self._departures.returned((workspace, request.agent, request.at, epoch), cp_id)
            kept, items = self._departures.context(
                db, self._decoded, workspace, (cp_id, cp_epoch), epoch
            )
            departure = Checkpoint(
                agent=request.agent, epoch=cp_epoch, at=datetime.fromisoformat(row[2]),
                digest=row[3], item_ids=tuple(map(_ID, kept)),
            )  # fmt: skip
            span = range(cp_epoch + 1, epoch + 1)
            delta = self._departures.delta(db, self._parsed, workspace, span)
            unrecorded = None
            if row[4] is None:  # made before m013 (`readmit.store.left_out`)
                unrecorded = partial(
                    left_out.unrecorded, db, self._decoded, workspace, (cp_id, cp_epoch), who,
                    delta, partial(self.agents, workspace),
                )  # fmt: skip
            left = self._departures.left_out(db, self._decoded, workspace, cp_id, unrecorded)
            items, left = readmitted(db, workspace, items, left, request.at, row[:2])
            outside = premises.outside(db, self._decoded, workspace, items, who, request.at)
            standing, screened = verdicts.load(
                db, workspace, items_by_id(items), who, request.at, outside
            )
            noted = verdicts.last_noted(db, workspace)
            obligations = absence.open_obligations(db, workspace, who, self._obligations)
            evidence = absence.evidence_ids(db, workspace, items, obligations)
            experiences = tuple(absence.bank(db, workspace, request.agent, request.at))
        bodies = (self._parsed, self._decoded)
        returner = Returner(
            agent=who.id, principal=who.principal, role=who.role,
            task=request.task, purpose=request.purpose, at=request.at,
        )  # fmt: skip
        return ReturnContext(
            workspace=workspace,
            cycle=f"{workspace}:{request.agent}:{request.id}@{epoch}",
            returner=returner,
            departure=departure,
            epoch=epoch,
            items=items,
            delta=delta,
            obligations=obligations,
            evidence=evidence,
            experiences=experiences,
            standing=standing,
            noted=noted,
            screened=screened,
            agents=self.agents(workspace),
            history=partial(self._reading, history, *bodies, workspace, cp_epoch),
            named=partial(self._reading, named, *bodies, workspace, cp_epoch),
            keys_before=partial(self._reading, absence.keys_before, workspace, cp_epoch),
            restoration=partial(self._reading, restoring.Rules().restoration, workspace),
            quote=partial(self._reading, quoted.held_at, self._decoded, workspace, cp_epoch),
            left_out=left,
            outside=outside,
        )

    def _database_now(self) -> datetime:
        """The database's time: in this thread's transaction, else in one statement alone."""
        current: Connection | None = getattr(self._local, "db", None)
        if current is not None:
            return database_time(current)
        with self._pool.connection() as db:  # autocommit: no transaction for one reading
            return database_time(db)

    def _reading(self, read: Callable[..., T], *args: Any) -> T:
        """``read(db, *args)`` in a read snapshot of its own."""
        with self._read() as db:
            return read(db, *args)

    def events(
        self, workspace: str, after_epoch: int = 0, upto: int | None = None
    ) -> list[Recorded]:
        """The events after ``after_epoch`` (up to ``upto``), each body parsed once per store."""
        with self._read() as db:
            last = LAST_EPOCH if upto is None else upto
            return logged_events(db, self._parsed, workspace, after_epoch, last)

    def remember_judgment(self, workspace: str, agent: str, epoch: int, judgment: Judgment) -> None:
        """Keep ``judgment`` with no decision (judging ahead of a return, `readmit.ahead`)."""
        with self._transaction(lock=workspace) as db:
            self._keep(db, workspace, agent, epoch, judgment)

    def _keep(self, db: Connection, workspace: str, agent: str, epoch: int, j: Judgment) -> None:
        who = self._agent(workspace, agent, f"judgment of {agent}")
        verdicts.remember(db, workspace, epoch, j, partial(self.events, workspace), who)

    def away(self, workspace: str) -> list[str]:
        """The agents of ``workspace`` that departed and have not returned since."""
        return self._reading(absence.away, workspace)

    def close(self) -> None:
        self._pool.close()
