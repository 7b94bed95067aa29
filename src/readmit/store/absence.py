"""Both ends of an absence: the checkpoint an agent leaves, and what its return reads.

A departure checkpoints D_a, what the agent can read and is still valid; a return
reads that checkpoint back with the open obligations, the evidence ids and the
agent's private bank as of the return.
"""

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from readmit.admission.invalidation.propagation import propagate
from readmit.canonical import digest
from readmit.clock import format_time
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import RecordExperience
from readmit.model import Agent, Checkpoint, Experience, Item, Obligation
from readmit.reasons import Exclusion, Reason, Stage
from readmit.store.connection import Conflict, Connection, stamp
from readmit.store.damaged import decoded_obligation
from readmit.store.decoded import BodyCache
from readmit.store.rows import CHUNK, select_in


def checkpoint(
    agent: Agent, active: Sequence[Item], invalid: Collection[str], epoch: int, at: datetime
) -> tuple[Checkpoint, tuple[str, ...]]:
    """D_a, the active items ``agent`` may read that are still valid at ``at``; the rest.

    The rest: the ids of the active items it may read that D_a leaves out.

    Left out: items a standing verdict invalidated (``invalid``), items whose
    validity has ended, and items whose premise (``depends_on``, transitively) is
    one of those or is no longer active.
    """
    readable = [i for i in active if i.scope.readable_by(agent.principal, agent.role)]
    valid = {i.id for i in _valid(active, invalid, at)}  # premises it may not read count
    visible = sorted((i for i in readable if i.id in valid), key=lambda i: i.id)
    receipts = [[i.id, i.receipt.digest if i.receipt else None] for i in visible]
    kept = {i.id for i in visible}
    rest = tuple(sorted(i.id for i in readable if i.id not in kept))
    made = Checkpoint(
        agent=agent.id,
        epoch=epoch,
        at=at,
        digest=digest(receipts),
        item_ids=tuple(i.id for i in visible),
        left_out=len(rest),
    )
    return made, rest


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


def check_after_return(db: Connection, workspace: str, agent: str, at: datetime) -> None:
    """Refuse a departure dated before ``agent``'s latest return (it would never be away).

    Raises:
        InvalidEvent: naming both times.
    """
    (returned,) = db.execute(
        "SELECT MAX(at) FROM decisions WHERE workspace = ? AND agent = ?", (workspace, agent)
    ).fetchone()
    if returned is not None and stamp(at) < returned:
        raise InvalidEvent(
            f"depart {agent}",
            f"departure at {format_time(at)} is before its latest return, at "
            f"{format_time(datetime.fromisoformat(returned))}",
        )


def insert_checkpoint(
    db: Connection,
    workspace: str,
    checkpoint: Checkpoint,
    returning_to: tuple[str, str] | None = None,
    left_out: Sequence[str] = (),
) -> None:
    """Store ``checkpoint`` and its items (inside the caller's transaction).

    With what its agent returns to, if said, and the ids of the items it left out as no
    longer valid that the agent may read, each with the verdict that stood on it (m030).
    """
    task, purpose = returning_to or (None, None)
    (checkpoint_id,) = db.execute(
        "INSERT INTO checkpoints (workspace, agent, epoch, at, digest, task, purpose, "
        "left_out_recorded) VALUES (?, ?, ?, ?, ?, ?, ?, 1) RETURNING id",
        (
            workspace,
            checkpoint.agent,
            checkpoint.epoch,
            stamp(checkpoint.at),
            checkpoint.digest,
            task,
            purpose,
        ),
    ).fetchone()
    db.executemany(
        "INSERT INTO checkpoint_items (checkpoint, item) VALUES (?, ?)",
        ((checkpoint_id, i) for i in checkpoint.item_ids),
    )
    if left_out:
        when = stamp(checkpoint.at)
        db.executemany(_LEFT_OUT, ((checkpoint_id, i, workspace, i, when) for i in left_out))


_LEFT_OUT = (
    "INSERT INTO checkpoint_left_out (checkpoint, item, verdict) VALUES (?, ?, COALESCE(("
    "SELECT verdict FROM invalidations WHERE workspace = ? AND item = ? AND lapsed_epoch IS NULL "
    "AND (restore_until IS NULL OR restore_until > ?)), 0))"
)
"""A left-out item, with the number of the verdict standing on it then (0: none)."""


def last_departure(db: Connection, workspace: str, agent: str, at: datetime) -> Any:
    """The row (id, epoch, at, digest, left_out_recorded) of ``agent``'s latest checkpoint.

    The latest at or before ``at``; ``left_out_recorded`` is NULL for one made before m013.
    """
    return db.execute(
        "SELECT id, epoch, at, digest, left_out_recorded FROM checkpoints "
        "WHERE workspace = ? AND agent = ? "
        "AND at <= ? ORDER BY at DESC, id DESC LIMIT 1",
        (workspace, agent, stamp(at)),
    ).fetchone()


def departed_for(
    db: Connection, workspace: str, agent: str, at: datetime | None = None
) -> tuple[str, str] | None:
    """The task and purpose ``agent``'s latest departure (by ``at``) said it returns to."""
    query = "SELECT task, purpose FROM checkpoints WHERE workspace = ? AND agent = ?"
    bound = () if at is None else (stamp(at),)
    row = db.execute(
        query + (" AND at <= ?" if bound else "") + " ORDER BY at DESC, id DESC LIMIT 1",
        (workspace, agent, *bound),
    ).fetchone()
    return None if row is None or row[0] is None else (row[0], row[1])


def insert_experience(db: Connection, workspace: str, step: RecordExperience, epoch: int) -> None:
    """Store the private memory ``step`` records (inside the caller's transaction).

    Raises:
        InvalidEvent: if the agent already has a memory with its id.
    """
    try:
        db.execute(
            "INSERT INTO experiences (workspace, agent, id, epoch, at, source_item, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (workspace, step.agent, step.experience_id, epoch, stamp(step.at), step.source,
             step.text),
        )  # fmt: skip
    except Conflict:
        raise InvalidEvent(step.id, f"experience {step.experience_id!r} already exists") from None


def away(db: Connection, workspace: str) -> list[str]:
    """The agents of ``workspace`` whose latest departure is later than their latest return."""
    departed = db.execute(
        "SELECT agent, MAX(at) FROM checkpoints WHERE workspace = ? GROUP BY agent ORDER BY agent",
        (workspace,),
    ).fetchall()
    returned = dict(
        db.execute(
            "SELECT agent, MAX(at) FROM decisions WHERE workspace = ? GROUP BY agent", (workspace,)
        ).fetchall()
    )
    return [agent for agent, at in departed if agent not in returned or at > returned[agent]]


def keys_before(db: Connection, workspace: str, upto: int, keys: Sequence[str]) -> set[str]:
    """Of ``keys``, those some item held at or before epoch ``upto``."""
    found: set[str] = set()
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
        rows = db.execute(_KEYS_BEFORE + f" IN ({marks})", (workspace, upto, *chunk))
        found.update(r[0] for r in rows.fetchall())
    return found


_KEYS_BEFORE = (
    "SELECT DISTINCT key FROM items WHERE workspace = ? AND key IS NOT NULL AND epoch + 0 <= ? "
    "AND key"
)
"""(``+ 0``: probed by key, as `readmit.store.bodies` does, not by a scan of the epochs.)"""


def open_obligations(
    db: Connection, workspace: str, reader: Agent, decoded: BodyCache[str, Obligation]
) -> tuple[Obligation, ...]:
    """The open obligations ``reader`` may read (one it may not never binds nor shows).

    An obligation's body never changes once written (resolving it sets a column), so each
    is decoded once per store: every return gets the same objects, as it does C's items.
    """
    rows = db.execute(
        "SELECT id, body FROM obligations WHERE workspace = ? AND resolved_epoch IS NULL "
        "ORDER BY epoch, id",
        (workspace,),
    ).fetchall()
    held = decoded.get(workspace, [r[0] for r in rows])
    fresh = {i: decoded_obligation(body, i) for i, body in rows if i not in held}
    if fresh:
        decoded.keep(workspace, fresh)
        held |= fresh
    readable = (held[i] for i, _ in rows)
    return tuple(o for o in readable if o.item.scope.readable_by(reader.principal, reader.role))


def evidence_ids(
    db: Connection, workspace: str, items: Iterable[Item], obligations: Iterable[Obligation]
) -> frozenset[str]:
    """The ids of the evidence sources recorded in ``workspace`` that a return's items cite.

    Only those, all gate P asks about: every source the workspace had was read at each
    return (300k sources took a return from 10 to 210 ms; a security probe's finding).
    """
    structure = [i for o in obligations for i in (o.item, o.frontier)]
    cited = {c for i in (*items, *structure) for c in i.cites}
    rows = select_in(db, workspace, "SELECT id FROM evidence", "id", cited)
    return frozenset(r[0] for r in rows)


def bank(
    db: Connection,
    workspace: str,
    agent: str,
    at: datetime | None = None,
    after: str | None = None,
    limit: int | None = None,
    ids: Collection[str] | None = None,
) -> list[Experience]:
    """``agent``'s private bank, oldest first (only what was recorded by ``at``, if given).

    Past the memory ``after`` (by epoch, then id by code point on either database), ``limit``
    at most; only the memories ``ids`` names, if given.

    Raises:
        InvalidInput: if ``after`` names no memory of the bank, or ``limit`` is negative.
    """
    if limit is not None and limit < 0:  # SQLite reads -1 as no limit at all
        raise InvalidInput(f"limit ({limit}) may not be negative")
    where, params = "workspace = ? AND agent = ?", tuple[object, ...]((workspace, agent))
    by_id = "id" if db.dialect == "sqlite" else 'id COLLATE "C"'  # SQLite's own order
    if at is not None:
        where, params = where + " AND at <= ?", (*params, stamp(at))
    if ids is not None:  # a chunk (`readmit.store.rows.CHUNK`): placeholders, no data
        where += f" AND id IN ({', '.join('?' * len(ids)) or 'NULL'})"
        params = (*params, *ids)
    if after is not None:
        row = db.execute(
            f"SELECT epoch FROM experiences WHERE {where} AND id = ?",  # noqa: S608 (fixed text)
            (*params, after),
        ).fetchone()
        if row is None:
            raise InvalidInput(f"after: you have no memory {after!r}")
        where += f" AND (epoch > ? OR (epoch = ? AND {by_id} > ?))"
        params = (*params, row[0], row[0], after)
    query = f"SELECT id, source_item, text, epoch FROM experiences WHERE {where}"  # noqa: S608
    query += f" ORDER BY epoch, {by_id}"
    if limit is not None:
        query, params = query + " LIMIT ?", (*params, limit)
    return [
        Experience(id=r[0], agent=agent, source_item_id=r[1], text=r[2], epoch=r[3])
        for r in db.execute(query, params).fetchall()
    ]
