"""Recording events: consistency checks and the state projection, in one transaction.

The ``events`` table is the append-only log. ``items``, ``evidence``,
``obligations`` and ``names`` are projections kept in the same transaction, so
they can never disagree with the log.
"""

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from readmit.canonical import canonical_json, digest
from readmit.errors import InvalidEvent
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    OpenObligation,
    Recorded,
    Resolve,
    Revoke,
    Supersede,
    text_digest,
)
from readmit.model import Agent, Item
from readmit.store import verdicts
from readmit.store.connection import Conflict, Connection, stamp
from readmit.wire import (
    event_to_wire,
    item_from_json,
    item_to_json,
    obligation_from_json,
    obligation_to_json,
)

Clock = Callable[[], datetime]


class Writer:
    """Applies one batch of events to one workspace inside an open transaction."""

    def __init__(self, db: Connection, workspace: str, agents: dict[str, Agent]) -> None:
        self.db = db
        self.ws = workspace
        self.agents = agents
        row = db.execute(
            "SELECT MAX(epoch), MAX(at) FROM events WHERE workspace = ?", (workspace,)
        ).fetchone()
        self.epoch: int = row[0] or 0
        self.last_at: datetime | None = datetime.fromisoformat(row[1]) if row[1] else None

    def write(self, event: Event, clock: Clock | None = None) -> Recorded:
        """Check ``event`` against the stored state, project it and log it.

        With ``clock``, the event is recorded at commit time instead of its own
        ``at`` (never earlier than the last event), so concurrent writers that
        let the server keep time are never told their time goes backwards.
        """
        if clock is not None:
            at = clock()
            event = replace(event, at=max(at, self.last_at or at))
        author = self.agents.get(event.author)
        if author is None:
            raise InvalidEvent(event.id, f"unknown author {event.author!r}")
        if self.last_at is not None and event.at < self.last_at:
            raise InvalidEvent(event.id, "time goes backwards (events must be in time order)")
        self.epoch += 1
        self._project(event, author)
        body = event_to_wire(event)
        try:
            self.db.execute(
                "INSERT INTO events (workspace, epoch, id, at, author, op, body, digest) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.ws,
                    self.epoch,
                    event.id,
                    stamp(event.at),
                    event.author,
                    event.op,
                    canonical_json(body),
                    digest(body),
                ),
            )
        except Conflict:
            raise InvalidEvent(event.id, "an event with this id already exists") from None
        self.last_at = event.at
        recorded = Recorded(epoch=self.epoch, event=event)
        verdicts.lapse(self.db, self.ws, recorded)
        return recorded

    def _project(self, event: Event, author: Agent) -> None:
        match event:
            case Evidence():
                self._claim(event.id, event.source_id, "evidence")
                self.db.execute(
                    "INSERT INTO evidence (workspace, id, epoch, digest) VALUES (?, ?, ?, ?)",
                    (
                        self.ws,
                        event.source_id,
                        self.epoch,
                        text_digest(event.source_id, event.text),
                    ),
                )
            case Assert():
                self._add_item(event.id, event.item, author)
            case Supersede():
                self._withdraw(event.id, event.target, "superseded", author)
                self._add_item(event.id, event.item, author)
            case Revoke():
                self._withdraw(event.id, event.target, "revoked", author)
            case Close():
                self._withdraw(event.id, event.target, "closed", author)
            case OpenObligation():
                self._open(event, author)
            case Resolve():
                self._resolve(event, author)

    def _claim(self, event_id: str, name: str, kind: str) -> None:
        try:
            self.db.execute(
                "INSERT INTO names (workspace, id, kind) VALUES (?, ?, ?)", (self.ws, name, kind)
            )
        except Conflict:
            raise InvalidEvent(event_id, f"id {name!r} is already used in this workspace") from None

    def _add_item(self, event_id: str, draft: ItemDraft, author: Agent) -> None:
        for premise in sorted(draft.depends_on):
            if self.readable(premise, author) is None:
                raise InvalidEvent(event_id, f"depends_on names unknown item {premise!r}")
        for source in sorted(draft.cites):
            if not self.evidence_readable(source, author):
                raise InvalidEvent(event_id, f"cites missing evidence {source!r}")
        self._claim(event_id, draft.id, "item")
        item = draft.materialize(
            event_id=event_id, author=author.id, principal=author.principal, epoch=self.epoch
        )
        if item.key is not None and item.receipt is not None:  # hearsay replaces nothing
            self._replace(item.key, author)
        self.db.execute(
            "INSERT INTO items (workspace, id, epoch, key, body) VALUES (?, ?, ?, ?, ?)",
            (self.ws, item.id, item.epoch, item.key, json.dumps(item_to_json(item))),
        )

    def _replace(self, key: str, author: Agent) -> None:
        """Mark replaced the active items with ``key`` that ``author`` may read.

        Keys are scoped to what the author may read: an item it may not read is
        neither replaced nor hinted at, so it stays in its readers' state.
        """
        rows = self.db.execute(
            "SELECT id, body FROM items WHERE workspace = ? AND key = ? AND status = 'active'",
            (self.ws, key),
        ).fetchall()
        for item_id, body in rows:
            if item_from_json(json.loads(body)).scope.readable_by(author.principal, author.role):
                self.db.execute(
                    "UPDATE items SET status = 'replaced' WHERE workspace = ? AND id = ?",
                    (self.ws, item_id),
                )

    def evidence_readable(self, source: str, agent: Agent) -> bool:
        """Whether ``source`` is evidence ``agent`` may cite: recorded by its own principal.

        Evidence has no readers of its own, so it is read like an item with the
        default readers (its author's principal); any other is reported as missing.
        """
        row = self.db.execute(
            "SELECT a.principal FROM evidence v JOIN events e "
            "ON e.workspace = v.workspace AND e.epoch = v.epoch "
            "JOIN agents a ON a.workspace = e.workspace AND a.id = e.author "
            "WHERE v.workspace = ? AND v.id = ?",
            (self.ws, source),
        ).fetchone()
        return row is not None and row[0] == agent.principal

    def readable(self, item_id: str, agent: Agent) -> tuple[Item, str] | None:
        """The stored item and its status, if it exists and ``agent`` may read it.

        An item the agent may not read is reported exactly like one that does not
        exist, so writes cannot be used to probe for hidden ids.
        """
        row = self.db.execute(
            "SELECT body, status FROM items WHERE workspace = ? AND id = ?", (self.ws, item_id)
        ).fetchone()
        if row is None:
            return None
        item = item_from_json(json.loads(row[0]))
        return (item, row[1]) if item.scope.readable_by(agent.principal, agent.role) else None

    def source_readable(self, source: str, agent: Agent) -> bool:
        """Whether ``agent`` may bind a private memory to ``source``.

        The source must be an item, obligation or frontier the agent can read.
        """
        if self.readable(source, agent) is not None:
            return True
        rows = self.db.execute(
            "SELECT body FROM obligations WHERE workspace = ?", (self.ws,)
        ).fetchall()
        structure = (obligation_from_json(json.loads(r[0])) for r in rows)
        return any(
            item.id == source and item.scope.readable_by(agent.principal, agent.role)
            for o in structure
            for item in (o.item, o.frontier)
        )

    def _withdraw(self, event_id: str, target: str, status: str, author: Agent) -> None:
        found = self.readable(target, author)
        if found is None:
            raise InvalidEvent(event_id, f"unknown target item {target!r}")
        if found[1] != "active":
            raise InvalidEvent(event_id, f"target {target!r} is no longer active ({found[1]})")
        self.db.execute(
            "UPDATE items SET status = ? WHERE workspace = ? AND id = ?", (status, self.ws, target)
        )

    def _open(self, event: OpenObligation, author: Agent) -> None:
        draft = event.obligation
        # Only for a role of the author's own principal: an obligation binds returns, and
        # one planted on another principal's role (which could never read it) would block
        # them. A role held only by another principal is refused like a role nobody holds.
        own = {a.role for a in self.agents.values() if a.principal == author.principal}
        if draft.role not in own:
            raise InvalidEvent(
                event.id, f"obligation role {draft.role!r} is no role of your principal's agents"
            )
        self._claim(event.id, draft.id, "obligation")
        self._claim(event.id, draft.frontier_id, "frontier")
        obligation = draft.materialize(
            event_id=event.id, author=author.id, principal=author.principal, epoch=self.epoch
        )
        self.db.execute(
            "INSERT INTO obligations (workspace, id, epoch, body) VALUES (?, ?, ?, ?)",
            (self.ws, obligation.id, self.epoch, json.dumps(obligation_to_json(obligation))),
        )

    def _resolve(self, event: Resolve, author: Agent) -> None:
        """Resolve an open obligation the author may read (any agent of its principal).

        One answer for absent, already resolved and unreadable, so a resolve
        cannot probe for another principal's obligations.
        """
        row = self.db.execute(
            "SELECT body FROM obligations WHERE workspace = ? AND id = ? "
            "AND resolved_epoch IS NULL",
            (self.ws, event.target),
        ).fetchone()
        item = None if row is None else obligation_from_json(json.loads(row[0])).item
        if item is None or not item.scope.readable_by(author.principal, author.role):
            raise InvalidEvent(event.id, f"no open obligation {event.target!r}")
        self.db.execute(
            "UPDATE obligations SET resolved_epoch = ? WHERE workspace = ? AND id = ?",
            (self.epoch, self.ws, event.target),
        )
