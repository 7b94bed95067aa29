"""Token buckets kept in the store, shared by every server process over it.

One row per agent and kind (requests, events, request-body bytes): the tokens it held and
when, in seconds of the database's clock on PostgreSQL (processes on several machines
share it; one machine whose clock ran ahead would otherwise stop every bucket's refill
until the others caught up), of this machine's on SQLite (its processes share a machine).
Each take refills the bucket for the time since and takes from it in one short
transaction. On PostgreSQL it is serialized only with the same agent's other takes (a
lock of its own), so one agent's flood waits on itself; on SQLite every write transaction
takes the whole file, so a take also waits for any writer of any workspace.
"""

import time
from contextlib import AbstractContextManager

from readmit.store.connection import Connection

RATE_BUCKETS = """CREATE TABLE rate_buckets (
    workspace TEXT NOT NULL, agent TEXT NOT NULL, kind TEXT NOT NULL,
    tokens DOUBLE PRECISION NOT NULL, at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (workspace, agent, kind))"""
"""Migration m028's table (`readmit.store.schema`): never edit it; migrate instead."""
_READ = "SELECT tokens, at FROM rate_buckets WHERE workspace = ? AND agent = ? AND kind = ?"
_READ_AT_NOW = (
    "SELECT b.tokens, b.at, EXTRACT(EPOCH FROM clock_timestamp()) FROM (SELECT 1) AS one "
    "LEFT JOIN rate_buckets b ON b.workspace = ? AND b.agent = ? AND b.kind = ?"
)
"""`_READ` with PostgreSQL's clock, in one round trip (a row of NULLs for a new bucket)."""
_WRITE = (
    "INSERT INTO rate_buckets (workspace, agent, kind, tokens, at) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (workspace, agent, kind) DO UPDATE SET tokens = excluded.tokens, "
    "at = excluded.at"
)


class Buckets:
    """The part of `readmit.store.SqlStore` that keeps the shared token buckets."""

    def _transaction(self, lock: str) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def take_tokens(
        self,
        bucket: tuple[str, str, str],
        cost: float,
        refill: tuple[float, float],
        now: float | None = None,
        force: bool = False,
    ) -> float:
        """Take ``cost`` tokens from ``bucket`` (workspace, agent, kind) at ``now``.

        ``now``: seconds since the epoch; by default the database's clock (PostgreSQL) or
        this machine's (SQLite).

        ``refill``: its rate a second and its size; a bucket never seen is full. Returns
        the tokens it lacks, taking none, or 0 once taken. ``force``: take them anyway,
        leaving it below empty (a charge after the fact).
        """
        rate, size = refill
        workspace, agent, _ = bucket
        with self._transaction(lock=f"_readmit_rate {workspace} {agent}") as db:
            if now is None and db.dialect == "postgres":  # the row and the clock at once
                tokens_at, at, clock = db.execute(_READ_AT_NOW, bucket).fetchone()
                row, now = (None if at is None else (tokens_at, at)), float(clock)
            else:
                row = db.execute(_READ, bucket).fetchone()
                now = time.time() if now is None else now
            tokens = size if row is None else min(size, row[0] + max(0.0, now - row[1]) * rate)
            if tokens < cost and not force:
                return cost - tokens
            db.execute(_WRITE, (*bucket, tokens - cost, max(now, row[1]) if row else now))
            return 0.0
