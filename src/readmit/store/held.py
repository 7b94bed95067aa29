"""What an integration must know of items whoever may read them: keys' newest, and owners.

An integration whose store keeps one value a path, with the path as the readmit key
(LangGraph), shows an admitted item's path only while the newest item written there says
what the admitted one says: a later write of the path by an agent whose item the reader
may not read (another principal's), or by hearsay (which replaces nothing in readmit),
put its own value in the application's store, which no view of the reader judged.

An integration whose application store lets any agent change any entry by id (Mem0)
refuses to change one whose active item its agent may not read (`Held.unreadable`), or
to remove many where one is such (`Held.unreadable_under`), before it touches the
application's store: readmit would refuse to record the change,
and the two would disagree. The writer itself reports such an item as unknown, so that
writes over HTTP cannot probe for hidden ids; a library caller holds the store, and may
ask.
"""

from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime

from readmit.admission.context import Standing
from readmit.errors import InvalidInput
from readmit.model import Agent, Item
from readmit.store import premises as premises_rule
from readmit.store import verdicts
from readmit.store.connection import Connection
from readmit.store.damaged import decoded_item
from readmit.store.decoded import BodyCache
from readmit.store.rows import ACTIVE, CHUNK, select_in

_BODIES = "SELECT i.id, i.body FROM items i"
_KEYED = "SELECT i.key, i.body FROM items i"
_EVENTS = "SELECT e.id, e.epoch FROM events e"
_WITHDRAWN_SINCE = "SELECT id FROM withdrawn WHERE workspace = ? AND epoch > ? AND epoch <= ?"
_LAST = 1 << 62
"""An epoch past any a workspace reaches (``withdrawn_since`` with no ``upto``)."""


class Held:
    """The part of `readmit.store.SqlStore` that tells integrations of items, any reader."""

    _decoded: BodyCache[str, Item]

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _transaction(
        self, lock: str, wait: float | None = None
    ) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def agents(self, workspace: str) -> dict[str, Agent]:
        raise NotImplementedError

    def unreadable(self, workspace: str, agent: str, ids: Sequence[str]) -> set[str]:
        """Of ``ids``, the active items ``agent`` may not read.

        Raises:
            InvalidInput: if the workspace has no such agent.
        """
        who = self._reader(workspace, agent)
        with self._read() as db:
            rows = list(
                select_in(db, workspace, _BODIES, "i.id", set(ids), f"AND {ACTIVE}", "i.workspace")
            )
        return _unreadable(rows, who)

    def unreadable_under(self, workspace: str, agent: str, prefix: str) -> set[str]:
        """The active items ``agent`` may not read whose ids start with ``prefix``.

        For a bulk change of another store (Mem0's ``delete_all``, ``reset``): one read of
        the workspace's items, as ``substr`` compares ids exactly on both dialects.

        Raises:
            InvalidInput: if the workspace has no such agent.
        """
        who = self._reader(workspace, agent)
        with self._read() as db:
            rows = db.execute(
                f"{_BODIES} WHERE i.workspace = ? AND substr(i.id, 1, ?) = ? AND {ACTIVE}",
                (workspace, len(prefix), prefix),
            ).fetchall()
        return _unreadable(rows, who)

    def unreadable_keys(self, workspace: str, agent: str, keys: Sequence[str]) -> set[str]:
        """Of ``keys``, those an active item ``agent`` may not read holds.

        For an integration whose store keeps one value a path, the path being the key
        (LangGraph): a write there would replace another principal's value in that store.

        Raises:
            InvalidInput: if the workspace has no such agent.
        """
        who = self._reader(workspace, agent)
        with self._read() as db:
            rows = list(  # fetched here: the connection goes back to the pool after
                select_in(db, workspace, _KEYED, "i.key", set(keys), f"AND {ACTIVE}", "i.workspace")
            )
        return {key for key, body in rows if not _readable(body, who)}

    def logged(
        self, workspace: str, event_ids: Sequence[str], wait: float | None = None
    ) -> dict[str, int]:
        """The epochs of those of ``event_ids`` the log holds, by id (an indexed read).

        For a caller whose `append` raised: a commit whose answer was lost (a connection
        cut as it committed) recorded the batch all the same. Read under the workspace's
        write lock, so that a COMMIT the deadline cut, which the server may still finish,
        has ended first (a review: read at once, it was not there yet, then it landed).
        ``wait``: at most so many seconds for the lock, for a write of unknown outcome (a
        session whose client is gone holds it for hours: `LOOK_UP_WAIT`); None for a batch
        sent again, which waits its turn as a writer does (a review: bounded, it was refused
        behind a long write of the same process).
        """
        with self._transaction(lock=workspace, wait=wait) as db:
            rows = list(
                select_in(db, workspace, _EVENTS, "e.id", set(event_ids), "", "e.workspace")
            )
        return {str(event_id): int(epoch) for event_id, epoch in rows}

    def newest_under(self, workspace: str, agent: str, prefix: str) -> Item | None:
        """The newest item (any status) whose id starts with ``prefix``, if ``agent`` may read it.

        For an integration whose application store forgot an entry readmit still holds
        items of (a Mem0 memory deleted, its revocation not recorded): what it said.

        Raises:
            InvalidInput: if the workspace has no such agent.
        """
        who = self._reader(workspace, agent)
        with self._read() as db:
            row = db.execute(
                f"{_BODIES} WHERE i.workspace = ? AND substr(i.id, 1, ?) = ? "
                "ORDER BY i.epoch DESC LIMIT 1",
                (workspace, len(prefix), prefix),
            ).fetchone()
        if row is None or not _readable(row[1], who):
            return None
        return decoded_item(row[1])

    def recorded_under(self, workspace: str, prefix: str) -> set[str]:
        """The ids of the items (any status, any reader) that start with ``prefix``.

        What a bulk change of another store may remove knowing readmit holds it: a memory
        with none is one added outside readmit, or one whose add is being recorded now.
        """
        with self._read() as db:
            rows = db.execute(
                "SELECT id FROM items WHERE workspace = ? AND substr(id, 1, ?) = ?",
                (workspace, len(prefix), prefix),
            ).fetchall()
        return {str(r[0]) for r in rows}

    def withdrawn_since(self, workspace: str, epoch: int, upto: int | None = None) -> set[str]:
        """The items (any reader) withdrawn by an event after ``epoch``, whatever withdrew them.

        What an integration that shows items resting on others hides with them: a keyed
        statement replaces an item without naming it (LangGraph's overwrite of a path).
        Only by events up to ``upto``: those of the log it read, not what came after it (a
        review: an item stated and withdrawn after them was put out before the layer met
        it, and then served). Those withdrawn before migration m012 kept no epoch, and are
        not among them.
        """
        bound = _LAST if upto is None else upto
        with self._read() as db:
            rows = db.execute(_WITHDRAWN_SINCE, (workspace, epoch, bound)).fetchall()
        return {str(r[0]) for r in rows}

    def judged_since(self, workspace: str, since: int, at: datetime) -> tuple[int, list[Standing]]:
        """The number of the last store of verdicts, and the verdicts stored after ``since``.

        Those that stand at ``at``, in the order stored (`readmit.store.verdicts.last_noted`:
        each store of a return's verdicts, or of judging ahead's, is numbered). What a
        memory layer serving between returns hides: a return stores its verdicts after
        reading its context, and judging ahead at any time; ``since``, at first, is the
        number its return's context read (`ReturnContext.noted`). Verdicts stored before
        migration m031, or by a readmit from before it still running, have no number and
        are not among them.
        """
        with self._read() as db:
            return verdicts.stored_since(db, workspace, since, at)

    def chains(
        self, workspace: str, premises: Collection[str], at: datetime
    ) -> tuple[dict[str, frozenset[str]], set[str], dict[str, datetime]]:
        """The chains of ``premises``, which of their items no longer stand at ``at``, their ends.

        Each item on the chains (any reader) with the ids it rests on, and the items of
        the chains that are withdrawn, ended, under a standing verdict, or rest on one that is
        (`readmit.store.premises.chains_of`): a return excludes what rests on those. And when
        the validity of each that has an end ends: what rests on it falls then.
        """
        with self._read() as db:
            return premises_rule.chains_of(db, self._decoded, workspace, frozenset(premises), at)

    def _reader(self, workspace: str, agent: str) -> Agent:
        who = self.agents(workspace).get(agent)
        if who is None:
            raise InvalidInput(f"no agent {agent!r} in workspace {workspace!r}")
        return who

    def newest_texts(self, workspace: str, keys: Sequence[str], upto: int) -> dict[str, str]:
        """What the newest item (any status, any reader) of each of ``keys`` says, up to ``upto``.

        Only items asserted at or before epoch ``upto`` count.
        """
        bodies: dict[str, str] = {}
        unique = sorted(set(keys))
        with self._read() as db:
            for start in range(0, len(unique), CHUNK):
                chunk = unique[start : start + CHUNK]
                marks = ", ".join("?" * len(chunk))  # placeholders only: no data in the SQL
                rows = db.execute(
                    f"SELECT key, body FROM items WHERE workspace = ? AND key IN ({marks}) "  # noqa: S608
                    "AND epoch <= ? ORDER BY epoch",
                    (workspace, *chunk, upto),
                ).fetchall()
                bodies.update(rows)  # in epoch order: the last of each key stays
        return {key: decoded_item(body).text for key, body in bodies.items()}


def _unreadable(rows: Iterable[Sequence[str]], who: Agent) -> set[str]:
    """The ids of ``rows`` (id, body) whose items ``who`` may not read."""
    return {i for i, body in rows if not _readable(body, who)}


def _readable(body: str, who: Agent) -> bool:
    """Whether ``who`` may read the item stored as ``body``."""
    return decoded_item(body).scope.readable_by(who.principal, who.role)
