"""Recording events: consistency checks and the state projection, in one transaction.

The ``events`` table is the append-only log; ``items``, ``withdrawn``, ``evidence``,
``obligations`` and ``names`` are projections kept in the same transaction, so they never
disagree with it. An item's row is never rewritten (its withdrawal is a row of
``withdrawn``). Items, evidence sources, obligations and frontiers share one namespace:
``items`` holds items' ids, ``names`` the others' (and items' in older stores).

A batch is checked event by event, in order, exactly as if each were appended alone,
but against the stored state plus what the batch itself wrote so far (`Writer.append`):
the rows the batch refers to are read with a few set-based queries up front, and its
rows are written together at the end (``executemany``). Nothing is written if any event
is refused (the caller's transaction rolls back).
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from readmit.canonical import digest_text, json_string
from readmit.clock import aware
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
from readmit.store.connection import Conflict, Connection
from readmit.store.damaged import decoded_obligation
from readmit.store.encoding import encode, item_body, receipt_digest
from readmit.store.lapses import Lapses
from readmit.store.obligations import bound_item
from readmit.store.rows import ACTIVE, ItemRow, Known, References, Row, insert, select_in
from readmit.wire.codec import obligation_to_json

Clock = Callable[[], datetime]
_NAMES = ("workspace", "id", "kind")
_ITEMS = ("workspace", "id", "epoch", "key", "body")
_WITHDRAWN = ("workspace", "id", "status", "epoch")
_EVIDENCE = ("workspace", "id", "epoch", "digest")
_EVENTS = ("workspace", "epoch", "id", "at", "author", "op", "body", "digest")

_WITH_STATUS = (
    "SELECT i.id, i.body, w.status FROM items i "
    "LEFT JOIN withdrawn w ON w.workspace = i.workspace AND w.id = i.id"
)
"""Items with their withdrawal's status (``None``: active)."""
_KEYED, _AND_ACTIVE = "SELECT id, body, key FROM items i", "AND " + ACTIVE
_STATUS_SAID = {"replaced": "superseded or replaced", "superseded": "superseded or replaced"}
"""A refused target's status as told: "replaced" told its writer that an item it may not read
holds the key, where a return shows both as stale_or_superseded with no evidence."""


class Writer:
    """Applies batches of events to one workspace inside an open transaction."""

    def __init__(
        self,
        db: Connection,
        workspace: str,
        agents: dict[str, Agent],
        optimistic: bool = False,
        known: Known | None = None,
        own: bool = False,
    ) -> None:
        # optimistic: new ids and names left to the unique indexes (`sql`); own: `SqlStore.append`
        self.optimistic, self.own = optimistic, own
        self.known = known  # stored items the batch reads are not parsed again
        self.db, self.ws, self.agents = db, workspace, agents
        # Times never go backwards, so the last epoch holds the latest time (an index lookup).
        row = db.execute(
            "SELECT epoch, at FROM events WHERE workspace = ? ORDER BY epoch DESC LIMIT 1",
            (workspace,),
        ).fetchone()
        self.epoch: int = row[0] if row else 0
        self.last_at: datetime | None = datetime.fromisoformat(row[1]) if row else None
        self._items: dict[str, ItemRow | None] = {}
        self._by_key: dict[str, list[str]] = {}
        self._names: dict[str, bool | str] = {}  # stored (True), or "batch": taken in it
        self._event_ids: dict[str, bool] = {}
        self._evidence: dict[str, str | None] = {}
        self._lapses = Lapses(db, workspace, known)
        self._rows: dict[str, list[Row]] = {"names": [], "evidence": [], "withdrawn": []}
        self._events: list[Row] = []

    def append(self, events: Sequence[Event], clock: Clock | None = None) -> list[Recorded]:
        """Check, project and log ``events`` in order; write their rows together.

        Raises:
            InvalidEvent: for the first event the store refuses (nothing is written).
        """
        self._prefetch(events)
        at = None if clock is None else clock()  # once: the database's is a round trip
        recorded = [self._write(event, at) for event in events]
        self._flush()
        return recorded

    def _write(self, event: Event, at: datetime | None) -> Recorded:
        """Check ``event`` against the state so far, project it and queue its log row.

        With ``at`` (the clock's time, at commit), the event is recorded then instead of at
        its own ``at`` (never earlier than the last event), so concurrent writers that let
        the server keep time are never told their time goes backwards.
        """
        if at is not None:
            event = replace(event, at=max(at, self.last_at or at))
        aware(event.at, event.id)
        author = self.agents.get(event.author)
        if author is None:
            raise InvalidEvent(event.id, f"unknown author {event.author!r}", fields=("author",))
        if self.last_at is not None and event.at < self.last_at:
            problem = "time goes backwards (events must be in time order)"
            raise InvalidEvent(event.id, problem, fields=("at",))
        self.epoch += 1
        text, stamped, item = encode(event)
        withdrawn, before = self._rows["withdrawn"], len(self._rows["withdrawn"])
        self._project(event, author, item)
        if self._event_ids[event.id]:  # prefetched for the batch's own ids
            raise InvalidEvent(event.id, "an event with this id already exists", fields=("id",))
        self._event_ids[event.id] = True
        head = (self.ws, self.epoch, event.id, stamped, event.author, event.op)
        self._events.append((*head, text, digest_text(text)))
        self.last_at = event.at
        recorded = Recorded(epoch=self.epoch, event=event)
        self._lapses.after(recorded, withdrawn[before:])
        return recorded

    def _prefetch(self, events: Sequence[Event]) -> None:
        """Read what the batch refers to (ids, names, keys, evidence) in a few queries."""
        refs = References.of(events)
        ids = {e.id for e in events}
        names, targets, keys, cites = refs.names, refs.targets, refs.keys, refs.cites
        # Optimistic, an item's id clashing with another item is left to the items' primary
        # key; a clash with another kind is not, as no index spans both tables.
        held = refs.others if self.optimistic else names
        taken = {r[0] for r in select_in(self.db, self.ws, "SELECT id FROM names", "id", names)}
        taken.update(r[0] for r in select_in(self.db, self.ws, "SELECT id FROM items", "id", held))
        used: set[str] = set()
        if not self.optimistic:
            used = {r[0] for r in select_in(self.db, self.ws, "SELECT id FROM events", "id", ids)}
        self._event_ids.update((i, i in used) for i in ids)
        self._names.update((n, n in taken) for n in names)
        self._items.update((t, None) for t in targets)
        found = select_in(self.db, self.ws, _WITH_STATUS, "i.id", targets, where="i.workspace")
        stored = [(item_id, body, status or "active") for item_id, body, status in found]
        self._by_key.update((k, []) for k in keys)
        for item_id, body, key in select_in(self.db, self.ws, _KEYED, "key", keys, _AND_ACTIVE):
            self._by_key[key].append(item_id)
            stored.append((item_id, body, "active"))
        self._stored(stored)
        self._evidence.update((c, None) for c in cites)
        for source, principal in select_in(
            self.db,
            self.ws,
            "SELECT v.id, a.principal FROM evidence v JOIN events e "
            "ON e.workspace = v.workspace AND e.epoch = v.epoch "
            "JOIN agents a ON a.workspace = e.workspace AND a.id = e.author",
            "v.id",
            cites,
            where="v.workspace",
        ):
            self._evidence[source] = principal

    def _stored(self, rows: list[tuple[str, str, str]]) -> None:
        """Hold stored items' rows (id, body, status), with what the store decoded of them."""
        known = self.known([r[0] for r in rows]) if self.known and rows else {}
        for item_id, body, status in rows:
            if self._items.get(item_id) is None:
                self._items[item_id] = ItemRow(body, status, False, known.get(item_id))

    def _flush(self) -> None:
        """Write the batch's queued rows (items, and the withdrawals of any item)."""
        insert(self.db, "names", _NAMES, self._rows["names"])
        insert(
            self.db,
            "items",
            _ITEMS,
            [
                (self.ws, item_id, row.epoch, row.key, row.body)
                for item_id, row in self._items.items()
                if row is not None and row.new
            ],
        )
        insert(self.db, "withdrawn", _WITHDRAWN, self._rows["withdrawn"])
        insert(self.db, "evidence", _EVIDENCE, self._rows["evidence"])
        try:
            insert(self.db, "events", _EVENTS, self._events)
        except Conflict:  # checked above under the workspace's lock: a bug, not bad input
            raise InvalidEvent("batch", "an event with this id already exists") from None

    def _project(self, event: Event, author: Agent, item: tuple[str, str] | None) -> None:
        """Check and project ``event``; ``item``: its item's id and text as JSON strings."""
        match event:  # the commonest first
            case Assert():
                self._add_item(event.id, event.item, author, item)
            case Evidence():
                self._claim(event.id, event.source_id, "evidence", "source.id")
                self._evidence[event.source_id] = author.principal
                digest = text_digest(event.source_id, event.text)
                self._rows["evidence"].append((self.ws, event.source_id, self.epoch, digest))
            case Supersede():
                self._withdraw(event.id, event.target, "superseded", author)
                self._add_item(event.id, event.item, author, item)
            case Revoke():
                self._withdraw(event.id, event.target, "revoked", author)
            case Close():
                self._withdraw(event.id, event.target, "closed", author)
            case OpenObligation():
                self._open(event, author)
            case Resolve():
                self._resolve(event, author)

    def _claim(self, event_id: str, name: str, kind: str, field: str) -> None:
        if taken := self._names[name]:  # prefetched for the batch's own names
            where = "in this workspace" if taken is True else "earlier in this batch"
            problem = f"id {name!r} is already used {where}"
            raise InvalidEvent(event_id, problem, fields=(field,))
        self._names[name] = "batch"
        if kind != "item":  # an item's row holds its id
            self._rows["names"].append((self.ws, name, kind))

    def _add_item(
        self, event_id: str, draft: ItemDraft, author: Agent, encoded: tuple[str, str] | None
    ) -> None:
        if draft.depends_on:
            for premise in sorted(draft.depends_on):
                if self.readable(premise, author) is None:
                    problem = f"depends_on names unknown item {premise!r}"
                    raise InvalidEvent(
                        event_id, problem, unknown=premise, fields=("item.depends_on",)
                    )
        if draft.cites:
            for source in sorted(draft.cites):
                if not self.evidence_readable(source, author):
                    problem = f"cites missing evidence {source!r}"
                    raise InvalidEvent(event_id, problem, unknown=source, fields=("item.cites",))
        self._claim(event_id, draft.id, "item", "item.id")
        if draft.key is not None:
            if not draft.unconfirmed:  # hearsay (no receipt) replaces nothing
                self._replace(draft.key, author)
            self._with_key(draft.key).append(draft.id)
        if encoded is None:
            encoded = (json_string(draft.id), json_string(draft.text))
        # The row is built from the draft, not from a materialized `Item`: most are never
        # read again in the batch, and one that is is decoded from this body, as stored.
        body = item_body(
            draft,
            encoded,
            event_id=event_id,
            author=author.id,
            principal=author.principal,
            epoch=self.epoch,
            receipt=receipt_digest(encoded),
        )
        self._items[draft.id] = ItemRow(body, "active", True, None, self.epoch, draft.key)

    def _with_key(self, key: str) -> list[str]:
        """The ids of items with ``key`` that were active when the batch began or since."""
        if key not in self._by_key:
            rows = self.db.execute(
                "SELECT id, body FROM items i WHERE workspace = ? AND key = ? AND " + ACTIVE,  # noqa: S608
                (self.ws, key),
            ).fetchall()
            self._by_key[key] = [item_id for item_id, _ in rows]
            self._stored([(item_id, body, "active") for item_id, body in rows])
        return self._by_key[key]

    def _replace(self, key: str, author: Agent) -> None:
        """Mark replaced the active items with ``key`` that ``author`` may read.

        Keys are scoped to what the author may read: an item it may not read is
        neither replaced nor hinted at, so it stays in its readers' state.
        """
        for item_id in self._with_key(key):
            row = self._items[item_id]
            if row is None or row.status != "active":
                continue
            if row.item().scope.readable_by(author.principal, author.role):
                self._set_status(item_id, row, "replaced")

    def _set_status(self, item_id: str, row: ItemRow, status: str) -> None:
        row.status = status  # only an active item is withdrawn: at most once
        self._rows["withdrawn"].append((self.ws, item_id, status, self.epoch))

    def evidence_readable(self, source: str, agent: Agent) -> bool:
        """Whether ``source`` is evidence ``agent`` may cite: recorded by its own principal.

        Evidence has no readers of its own, so it is read like an item with the
        default readers (its author's principal); any other is reported as missing.
        """
        if source not in self._evidence:
            row = self.db.execute(
                "SELECT a.principal FROM evidence v JOIN events e "
                "ON e.workspace = v.workspace AND e.epoch = v.epoch "
                "JOIN agents a ON a.workspace = e.workspace AND a.id = e.author "
                "WHERE v.workspace = ? AND v.id = ?",
                (self.ws, source),
            ).fetchone()
            self._evidence[source] = None if row is None else row[0]
        return self._evidence[source] == agent.principal

    def _row(self, item_id: str) -> ItemRow | None:
        """The item as the batch sees it (read from the store once if not read yet)."""
        if item_id not in self._items:
            row = self.db.execute(
                _WITH_STATUS + " WHERE i.workspace = ? AND i.id = ?", (self.ws, item_id)
            ).fetchone()
            self._items[item_id] = None
            self._stored([] if row is None else [(item_id, row[1], row[2] or "active")])
        return self._items[item_id]

    def readable(self, item_id: str, agent: Agent) -> tuple[Item, str] | None:
        """The stored item and its status, if it exists and ``agent`` may read it.

        An item the agent may not read is reported exactly like one that does not
        exist, so writes cannot be used to probe for hidden ids.
        """
        row = self._readable_row(item_id, agent)
        return None if row is None else (row.item(), row.status)

    def _readable_row(self, item_id: str, agent: Agent, own: bool = False) -> ItemRow | None:
        row = self._row(item_id)
        if row is None or (own and row.item().author == agent.id):
            return row
        return row if row.item().scope.readable_by(agent.principal, agent.role) else None

    def source_readable(self, source: str, agent: Agent) -> bool:
        """Whether ``agent`` may bind a private memory to ``source``.

        The source must be an item, obligation or frontier the agent can read.
        """
        if self.readable(source, agent) is not None:
            return True
        found = bound_item(self.db, self.ws, source)
        return found is not None and found.scope.readable_by(agent.principal, agent.role)

    def _withdraw(self, event_id: str, target: str, status: str, author: Agent) -> None:
        row = self._readable_row(target, author, own=self.own)
        if row is None:
            problem = f"unknown target item {target!r}"
            raise InvalidEvent(event_id, problem, unknown=target, fields=("target",))
        if row.status != "active":
            said = _STATUS_SAID.get(row.status, row.status)
            problem = f"target {target!r} is no longer active ({said})"
            raise InvalidEvent(event_id, problem, fields=("target",))
        self._set_status(target, row, status)

    def _open(self, event: OpenObligation, author: Agent) -> None:
        draft = event.obligation
        # Only for a role of the author's own principal: an obligation binds returns, and
        # one planted on another principal's role (which could never read it) would block
        # them. A role held only by another principal is refused like a role nobody holds.
        own = {a.role for a in self.agents.values() if a.principal == author.principal}
        if draft.role not in own:
            problem = f"obligation role {draft.role!r} is no role of your principal's agents"
            raise InvalidEvent(event.id, problem, fields=("obligation.role",))
        self._claim(event.id, draft.id, "obligation", "obligation.id")
        self._claim(event.id, draft.frontier_id, "frontier", "obligation.frontier.id")
        obligation = draft.materialize(
            event_id=event.id, author=author.id, principal=author.principal, epoch=self.epoch
        )
        self.db.execute(  # written at once (rare): a later resolve in the batch reads it
            "INSERT INTO obligations (workspace, id, epoch, frontier, body) VALUES (?, ?, ?, ?, ?)",
            (
                self.ws,
                obligation.id,
                self.epoch,
                obligation.frontier.id,
                json.dumps(obligation_to_json(obligation)),
            ),
        )

    def _resolve(self, event: Resolve, author: Agent) -> None:
        """Resolve an open obligation the author may read (any agent of its principal).

        One answer for absent, already resolved and unreadable: no probing for others'.
        """
        row = self.db.execute(
            "SELECT body FROM obligations WHERE workspace = ? AND id = ? "
            "AND resolved_epoch IS NULL",
            (self.ws, event.target),
        ).fetchone()
        item = None if row is None else decoded_obligation(row[0]).item
        if item is None or not item.scope.readable_by(author.principal, author.role):
            problem = f"no open obligation {event.target!r}"
            raise InvalidEvent(event.id, problem, unknown=event.target, fields=("target",))
        self.db.execute(
            "UPDATE obligations SET resolved_epoch = ? WHERE workspace = ? AND id = ?",
            (self.epoch, self.ws, event.target),
        )
