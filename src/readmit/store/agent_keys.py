"""Agents' API keys, kept only as hashes: made, looked up, listed and revoked.

A key is checked against the store at every request (nothing caches it), so a revoked
key is refused at once by every server over the store.
"""

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

from readmit.errors import InvalidInput, NotFound
from readmit.model import Agent
from readmit.store.connection import Conflict, Connection, stamp
from readmit.wire.decisions import checked_key

FINGERPRINT = 19
"""Characters of a key's hash shown to name it (``sha256:`` and 12 hex digits)."""


@dataclass(frozen=True, slots=True)
class KeyRow:
    """One stored key, named by its hash's start (the key itself is never stored)."""

    workspace: str
    agent: str
    fingerprint: str
    created_at: str


class AgentKeys:
    """The part of `readmit.store.SqlStore` that keeps agents' API keys."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _transaction(self, lock: str) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def agents(self, workspace: str) -> Mapping[str, Agent]:
        raise NotImplementedError

    def add_agent_key(self, workspace: str, agent: str, key_hash: str, at: datetime) -> None:
        """Store the hash of a new API key for ``agent``.

        Raises:
            NotFound: if there is no such workspace, or no such agent in it (naming its agents).
            InvalidInput: if ``key_hash`` is not `readmit.service.keys.key_hash`'s form, or
                that key is stored already.
            InvalidEvent: if ``at`` has no time zone.
        """
        checked_key(key_hash, at)
        known = self.agents(workspace)
        if agent not in known:
            if not known:
                raise NotFound(f"no workspace {workspace!r} (readmit workspace create makes one)")
            raise NotFound(
                f"no agent {agent!r} in workspace {workspace!r} (its agents: "
                f"{', '.join(sorted(known))})"
            )
        try:
            with self._transaction(lock=workspace) as db:
                db.execute(
                    "INSERT INTO agent_keys (key_hash, workspace, agent, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (key_hash, workspace, agent, stamp(at)),
                )
        except Conflict:
            raise InvalidInput("that key is already stored (make a new one)") from None

    def agent_for_key(self, key_hash: str) -> tuple[str, Agent] | None:
        """The (workspace, agent) an API key hash belongs to, if any."""
        with self._read() as db:
            row = db.execute(
                "SELECT k.workspace, a.id, a.principal, a.role FROM agent_keys k JOIN agents a "
                "ON a.workspace = k.workspace AND a.id = k.agent WHERE k.key_hash = ?",
                (key_hash,),
            ).fetchone()
        return None if row is None else (row[0], Agent(id=row[1], principal=row[2], role=row[3]))

    def agent_keys(self, workspace: str | None = None) -> list[KeyRow]:
        """The stored keys (of ``workspace``), by workspace, agent and age."""
        query = "SELECT workspace, agent, key_hash, created_at FROM agent_keys"
        if workspace is not None:
            query += " WHERE workspace = ?"
        with self._read() as db:
            rows = db.execute(
                query + " ORDER BY workspace, agent, created_at",
                () if workspace is None else (workspace,),
            ).fetchall()
        return [KeyRow(w, a, h[:FINGERPRINT], c) for w, a, h, c in rows]

    def revoke_agent_keys(self, workspace: str, agent: str, fingerprint: str | None) -> int:
        """Delete ``agent``'s keys, or the one whose hash starts with ``fingerprint``.

        Returns how many were deleted.

        Raises:
            InvalidInput: if ``fingerprint`` starts more than one of the agent's keys.
        """
        with self._transaction(lock=workspace) as db:
            hashes = [
                h
                for (h,) in db.execute(
                    "SELECT key_hash FROM agent_keys WHERE workspace = ? AND agent = ?",
                    (workspace, agent),
                ).fetchall()
                if fingerprint is None or h.startswith(fingerprint)
            ]
            if fingerprint is not None and len(hashes) > 1:
                raise InvalidInput(
                    f"{fingerprint!r} starts {len(hashes)} of {agent}'s keys: give more of it"
                )
            for h in hashes:
                db.execute("DELETE FROM agent_keys WHERE key_hash = ?", (h,))
        return len(hashes)
