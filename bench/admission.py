"""Benchmark: the whole return and ingestion, as ratios to baselines measured in the same run.

For each cell of a growth grid (items before the departure x a delta of that many
events after it) on SQLite and, given a server, on PostgreSQL, it reports

(a) the time of a return against a plain indexed read of the same rows (the same
    SELECTs admission's context makes, rows fetched, nothing decoded):
    - ``explicit``: the context plus ``admit()`` with the explicit stages only
      (no verifier);
    - ``whole``: what an agent waits on in ``readmit serve`` (`readmit.decide.decide`,
      the cyclic collector paused as it does there: `readmit.collector`): the context,
      ``admit()`` with the implicit stage run by the built-in verifier under the
      policy's judgment bounds (``Policy.max_judgments``, by default four calls per
      item the view can hold), and recording the decision with its judgment
      (standing verdicts and screening watermarks).
    "cold" is the first return on a freshly opened store (no decoded item or parsed
    event in memory, no standing verdict; ``explicit`` in a process of its own, so that
    ``whole`` is the first in this one to decode a store); "warm" a later return on the
    same store at the same epoch; "next" a later return on the same store after ``NEXT`` new events
    (new facts sharing names with the store's, and replacements of the previous batch's):
    what a running service does most, with every stage's earlier pass at an older epoch;
(b) the ingestion rate of ``store.append`` in 1000-event batches (checks,
    projections, receipts, log) against a raw batched INSERT of the same event rows
    into a plain table of the same database (departure not included), each row
    encoded once with the store's own encoder and one ``executemany`` a batch;
(c) p50 of the warm and of the next whole return (``--samples`` returns at 10k items,
    ``--repeat`` elsewhere; "next" is given as its p50's ratio to the read), and the
    peak Python memory of a cold whole return per 100k items (tracemalloc, on a
    store opened only for that, so the timings are not slowed by tracing);
(d) the store's size on disk per 100k events appended (the SQLite file; PostgreSQL's
    tables with their indexes and TOAST), and the audit log's growth: the mean stored size
    of a whole return's decision record (SQLite's compressed body; PostgreSQL's column as
    the server keeps it, ``pg_column_size``);
(e) with ``--workspaces``, instead, next returns in one process serving W workspaces
    against one workspace: W workspaces of ``history(items, 0.1)`` in one SQLite store
    (``items`` the grid's first cell's), a cold and a warm return in each, then
    ``--samples`` rounds of a next return in each workspace in turn; the median next
    return of each W (in a process of its own) and its ratio to W = 1, so that a memo
    that forgets one workspace's passes at another's return shows.

Usage:
    python bench/admission.py                         # default grid, SQLite
    python bench/admission.py --postgres URL          # and PostgreSQL (fresh schema per cell)
    python bench/admission.py --grid full --repeat 3  # 1k/10k/100k x 1%/10%/50%
    python bench/admission.py --grid 100000:0.1       # one cell
    python bench/admission.py --grid 10000:0.1 --workspaces 1,8,16 --samples 8

Progress goes to stderr; the table (or ``--json``) to stdout.
"""

import argparse
import gc
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from readmit.admission import admit
from readmit.admission.invalidation.cache import with_cache
from readmit.admission.invalidation.implicit import Verifier
from readmit.bench.schemas import fresh_schema
from readmit.bench.timing import best
from readmit.canonical import digest_text
from readmit.collector import paused
from readmit.decide import decide
from readmit.events import (
    Assert,
    Event,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    ReturnRequest,
    Revoke,
    Supersede,
)
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store
from readmit.store.encoding import encode

T0 = datetime(2026, 1, 1, tzinfo=UTC)
AGENTS = [Agent(id="A1", principal="org", role="ops"), Agent(id="A2", principal="org", role="dev")]
BATCH = 1000
NEXT = 10
"""Events appended before each "next" return."""
SIGNER = HmacSha256Signer(b"bench-key-0123456789")
DEFAULT_GRID = "1000:0.01,1000:0.1,1000:0.5,10000:0.01,10000:0.1,10000:0.5,100000:0.1"
FULL_GRID = ",".join(f"{n}:{d}" for n in (1000, 10000, 100000) for d in (0.01, 0.1, 0.5))
TEXTS = [
    "Service {s} runs version {i} in region eu-{r}.",
    "Ticket T-{i} for {s} is owned by the platform team.",
    "Deploys of {s} go through the Atlas pipeline, build {i}.",
    "The {s} database is backed up nightly to bucket b{r}.",
]


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def history(n: int, fraction: float) -> tuple[list[Event], list[Event]]:
    """``n`` items before departure, then ``round(n * fraction)`` events of every kind.

    The delta revokes and supersedes earlier items, replaces keyed ones and asserts new
    facts; its texts share names with earlier ones, so the built-in verifier has
    (later, earlier) pairs to judge.
    """
    at = iter(T0 + timedelta(seconds=i) for i in range(10 * n + 10))
    before: list[Event] = [
        OpenObligation(
            id="ob",
            at=next(at),
            author="A2",
            obligation=ObligationDraft(
                id="o",
                text="Keep the service up.",
                role="ops",
                requires=frozenset({"d0", "d1"}),
                critical=frozenset({"d0"}),
                frontier_id="f",
                frontier_text="Nothing open.",
            ),
        )
    ]
    for i in range(n):
        supporter = n // 2 <= i < n // 2 + 4  # what the open obligation needs
        draft = ItemDraft(
            id=f"i{i}",
            text=f"Pager rotation {i} is covered by Quill."
            if supporter
            else TEXTS[i % 4].format(s=f"svc{i % 97}", i=i, r=i % 5),
            key=f"k{i}" if i % 3 == 0 else None,
            supports=frozenset({f"d{i % 2}"}) if supporter else frozenset(),
        )
        before.append(Assert(id=f"a{i}", at=next(at), author="A2", item=draft))
    delta: list[Event] = []
    for j in range(round(n * fraction)):
        target = (j * 7919) % n
        svc = f"svc{target % 97}"
        match j % 4:
            case 0:
                delta.append(
                    Revoke(id=f"r{j}", at=next(at), author="A2", target=f"i{target}", why="gone")
                )
            case 1:
                text = f"Service {svc} moved to region us-{j % 5}, version {j}."
                delta.append(
                    Supersede(
                        id=f"s{j}",
                        at=next(at),
                        author="A2",
                        target=f"i{target}",
                        item=ItemDraft(id=f"s{j}", text=text),
                    )
                )
            case 2:
                key = f"k{(j * 3) % n}"
                text = f"Service {svc} now runs version {j} in region ap-{j % 5}."
                delta.append(
                    Assert(
                        id=f"k{j}",
                        at=next(at),
                        author="A2",
                        item=ItemDraft(id=f"n{j}", text=text, key=key),
                    )
                )
            case _:
                text = f"Ticket T-{j} for {svc} was reassigned to the Borealis team."
                delta.append(
                    Assert(
                        id=f"x{j}",
                        at=next(at),
                        author="A2",
                        item=ItemDraft(id=f"x{j}", text=text),
                    )
                )
    return before, _unique_targets(delta)


def _unique_targets(delta: list[Event]) -> list[Event]:
    """Drop events that would withdraw an item twice (the store rejects those, rightly)."""
    seen: set[str] = set()
    kept: list[Event] = []
    for event in delta:
        target = getattr(event, "target", None)
        if target is not None:
            if target in seen:
                continue
            seen.add(target)
        kept.append(event)
    return kept


@dataclass
class Backend:
    """Where one cell's store lives: a SQLite file or a fresh PostgreSQL schema."""

    name: str
    tmp: Path
    postgres: str | None = None

    @contextmanager
    def url(self) -> Iterator[str]:
        """A URL for an empty store, removed afterwards."""
        if self.postgres is None:
            yield f"sqlite:///{self.tmp}/{uuid.uuid4().hex}.db"
            return
        with fresh_schema(self.postgres) as url:
            yield url


def raw_rows(events: list[Event], start: int) -> list[tuple[object, ...]]:
    """The log rows of ``events``, as a careful hand-written loader would build them.

    Each event encoded once, by the encoder the store itself uses (byte for byte
    ``canonical_json(event_to_wire(event))``), its digest taken from that text, its
    time stamped as the store stamps it.
    """
    rows: list[tuple[object, ...]] = []
    for epoch, event in enumerate(events, start=start):
        text, stamped, _ = encode(event)
        row = ("ws", epoch, event.id, stamped, event.author, event.op, text, digest_text(text))
        rows.append(row)
    return rows


_RAW_TABLE = (
    "CREATE TABLE raw_events (workspace TEXT, epoch BIGINT, id TEXT, at TEXT, "
    "author TEXT, op TEXT, body TEXT, digest TEXT, PRIMARY KEY (workspace, epoch))"
)


def raw_insert(backend: Backend, url: str, events: list[Event]) -> float:
    """The baseline: the same event rows, one batched INSERT per 1000, no checks or projections.

    Into a plain table of an empty database of the same backend (SQLite: a WAL file of
    its own; PostgreSQL: a table in the cell's fresh schema). Returns the seconds taken.
    """
    if backend.postgres is None:
        db = sqlite3.connect(backend.tmp / f"raw-{uuid.uuid4().hex}.db", isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(_RAW_TABLE)
        start = time.perf_counter()
        for i in range(0, len(events), BATCH):
            rows = raw_rows(events[i : i + BATCH], i + 1)
            db.execute("BEGIN")
            db.executemany("INSERT INTO raw_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            db.execute("COMMIT")
        elapsed = time.perf_counter() - start
        db.close()
        return elapsed
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute("DROP TABLE IF EXISTS raw_events")
        pg.execute(_RAW_TABLE)
        start = time.perf_counter()
        for i in range(0, len(events), BATCH):
            rows = raw_rows(events[i : i + BATCH], i + 1)
            with pg.transaction(), pg.cursor() as cur:
                cur.executemany(
                    "INSERT INTO raw_events VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows
                )
        elapsed = time.perf_counter() - start
        pg.execute("DROP TABLE raw_events")
    return elapsed


def departed(url: str, before: list[Event], delta: list[Event], label: str) -> SqlStore:
    """A store at ``url`` holding ``before``, A1's departure, then ``delta`` (open)."""
    store = open_store(url)
    store.create_workspace("ws", AGENTS)
    progress(f"{label}: appending {len(before)} + {len(delta)} events")
    ingest(store, before, label)
    store.depart("ws", "A1", before[-1].at)
    ingest(store, delta, label)
    return store


def ingest(store: SqlStore, events: list[Event], label: str, workspace: str = "ws") -> float:
    """Append ``events`` in 1000-event batches; the seconds taken."""
    start = time.perf_counter()
    for i in range(0, len(events), BATCH):
        store.append(workspace, events[i : i + BATCH])
        if i and i % (20 * BATCH) == 0:
            progress(f"{label}: appended {i}/{len(events)}")
    return time.perf_counter() - start


def plain_read(store: SqlStore, checkpoint: int, epoch: int) -> int:
    """The baseline: the same rows admission reads, fetched by their indexes, not decoded."""
    db = store.conn
    rows = db.execute(
        "SELECT i.body FROM checkpoint_items c JOIN items i ON i.workspace = ? AND i.id = c.item "
        "WHERE c.checkpoint = ? UNION ALL SELECT body FROM items WHERE workspace = ? AND epoch > ?",
        ("ws", checkpoint, "ws", epoch),
    ).fetchall()
    events = db.execute(
        "SELECT epoch, body FROM events WHERE workspace = ? AND epoch > ?", ("ws", epoch)
    ).fetchall()
    obligations = db.execute(
        "SELECT body FROM obligations WHERE workspace = ? AND resolved_epoch IS NULL", ("ws",)
    ).fetchall()
    return len(rows) + len(events) + len(obligations)


class Returns:
    """Returns of agent A1 to one workspace of a store, each a little later than the last."""

    def __init__(
        self, store: SqlStore, at: datetime, verifier: Verifier | None, workspace: str = "ws"
    ) -> None:
        self.store = store
        self.workspace = workspace
        self.at = at
        self.n = 0
        self.verifier = None if verifier is None else with_cache(verifier, store)
        self.policy = Policy() if verifier is not None else Policy(implicit=False)
        self.last: dict[str, Any] = {}
        self.made: set[str] = set()

    def explicit(self) -> None:
        """The context and ``admit()`` with the explicit stages only (collector paused, as
        `decide` runs a return)."""
        with paused():
            ctx = self.store.return_context(self.workspace, self._request())
            admit(ctx, policy=Policy(implicit=False), verifier=None, signer=SIGNER)

    def whole(self) -> None:
        """A return as ``readmit serve`` decides it (`decide`): the context, ``admit()`` with
        the implicit stage, and the decision recorded."""
        decision = decide(
            self.store, self.workspace, self._request(), policy=self.policy,
            verifier=self.verifier, signer=SIGNER,
        ).decision  # fmt: skip
        j = decision.judgment
        self.last = {
            "outcome": decision.outcome,
            "calls": j.calls,
            "pairs": j.pairs,
            "standing": j.standing,
            "unscreened": j.unscreened,
        }

    def next(self) -> float:
        """Seconds of a ``whole`` return after ``NEXT`` new events, dated between the last
        return and this one: new facts, two of which replace the previous batch's."""
        base = self.at + timedelta(seconds=self.n)
        events: list[Event] = []
        for i in range(NEXT):
            n = self.n * NEXT + i
            at = base + timedelta(milliseconds=10 * (i + 1))
            draft = ItemDraft(id=f"z{n}", text=f"Ticket Z-{n} for svc{n % 97} is open.")
            earlier = f"z{n - NEXT}"
            if i < 2 and self.n > 0 and earlier in self.made:
                events.append(
                    Supersede(id=f"zs{n}", at=at, author="A2", target=earlier, item=draft)
                )
            else:
                events.append(Assert(id=f"za{n}", at=at, author="A2", item=draft))
            self.made.add(draft.id)
        self.store.append(self.workspace, events)
        return timed(self.whole)

    def _request(self) -> ReturnRequest:
        self.n += 1
        return ReturnRequest(
            id=f"r{self.n}",
            at=self.at + timedelta(seconds=self.n),
            agent="A1",
            task="keep the service up",
            purpose="operations",
        )


def explicit_times(url: str, at: datetime, repeat: int) -> tuple[float, float]:
    """The explicit return cold and warm (best of ``repeat``), timed in a process of its own.

    So the whole return timed in this one is the first to decode the store, as a server's
    first return is: a process that decoded another store's items first (and still holds
    what the memos keep of them) collects all it holds at a later cold return, once memory
    grew by a quarter (`readmit.collector`), about 0.4 s at 100k items (stop 75).
    """
    child = [sys.executable, __file__, "--explicit", url, at.isoformat(), str(repeat)]
    done = subprocess.run(child, capture_output=True, text=True, check=True)
    cold, warm = json.loads(done.stdout)
    return float(cold), float(warm)


def explicit_child(url: str, at: datetime, repeat: int) -> list[float]:
    """`explicit_times`, in the child: cold, then the best warm."""
    store = open_store(url)
    explicit = Returns(store, at, None)
    cold = timed(explicit.explicit)
    warm = best(explicit.explicit, repeat)
    store.close()
    return [cold, warm]


def timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def ingestion_times(
    backend: Backend, url: str, before: list[Event], delta: list[Event], label: str
) -> tuple[float, float, int]:
    """Seconds for the raw INSERT of every event, and for appending them to an empty store
    (``before``, A1's departure, ``delta``; the departure not counted); the store's bytes."""
    progress(f"{label}: raw INSERT of {len(before) + len(delta)} events")
    raw_s = raw_insert(backend, url, before + delta)
    store = open_store(url)
    store.create_workspace("ws", AGENTS)
    progress(f"{label}: appending {len(before)} + {len(delta)} events")
    append_s = ingest(store, before, label)
    store.depart("ws", "A1", before[-1].at)
    append_s += ingest(store, delta, label)
    store.close()
    return raw_s, append_s, store_bytes(backend, url)


def store_bytes(backend: Backend, url: str) -> int:
    """The store's size: the SQLite file (its log written back at close), or PostgreSQL's
    tables in the cell's schema with their indexes and TOAST."""
    if backend.postgres is None:
        path = Path(url.removeprefix("sqlite:///"))
        wal = path.with_name(path.name + "-wal")
        return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    import psycopg

    with psycopg.connect(url) as pg:
        row = pg.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind = 'r'"
        ).fetchone()
    return int(row[0]) if row else 0


def record_size(store: SqlStore) -> float:
    """The mean bytes of a stored decision record, as the store keeps it."""
    size = "length(body)" if store.conn.dialect == "sqlite" else "pg_column_size(body)"
    (mean,) = store.conn.execute(f"SELECT AVG({size}) FROM decisions").fetchone()
    return float(mean or 0)


def run_cell(backend: Backend, n: int, fraction: float, args: argparse.Namespace) -> dict[str, Any]:
    label = f"{backend.name} {n} items, delta {fraction:.0%}"
    before, delta = history(n, fraction)
    verifier = make_verifier("builtin")
    with backend.url() as url:
        raw_s, append_s, size = ingestion_times(backend, url, before, delta, label)
        for _ in range(1, args.repeat if args.ingest_only else 1):
            with backend.url() as again:  # best of interleaved runs: the least disturbed
                raw, append, _ = ingestion_times(backend, again, before, delta, label)
                raw_s, append_s = min(raw_s, raw), min(append_s, append)
        ingestion = {
            "backend": backend.name,
            "items": n,
            "delta_fraction": fraction,
            "delta": len(delta),
            "raw_insert_ev_s": (len(before) + len(delta)) / raw_s,
            "append_ev_s": (len(before) + len(delta)) / append_s,
            "append_share_of_raw": raw_s / append_s,
            "store_mib_per_100k_events": size / (len(before) + len(delta)) * 100_000 / 2**20,
        }
        if args.ingest_only:
            return ingestion
        at = (delta[-1] if delta else before[-1]).at + timedelta(minutes=1)
        del before, delta  # the history's events, no longer needed: a server holds none
        gc.collect()

        store = open_store(url)  # cold: nothing decoded, parsed or judged in this process
        checkpoint, cp_epoch = store.conn.execute("SELECT id, epoch FROM checkpoints").fetchone()
        rows = plain_read(store, checkpoint, cp_epoch)
        read_s = best(lambda: plain_read(store, checkpoint, cp_epoch), args.repeat)
        progress(f"{label}: returns (plain read {read_s * 1e3:.1f} ms, {rows} rows)")
        store.close()
        explicit_cold, explicit_warm = explicit_times(url, at, args.repeat)

        store = open_store(url)
        whole = Returns(store, at + timedelta(hours=1), verifier)
        whole_cold = timed(whole.whole)
        cold_judgment = dict(whole.last)
        samples = args.samples if n == 10_000 else args.repeat
        warm = [timed(whole.whole) for _ in range(samples)]
        following = [whole.next() for _ in range(samples)]
        record_bytes = record_size(store)
        store.close()

        memory = None
        if args.memory and n == max(size for size, _ in args.cells):
            store = open_store(url)
            traced = Returns(store, at + timedelta(hours=2), verifier)
            tracemalloc.start()
            traced.whole()
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            store.close()
            memory = peak / n * 100_000 / 2**20
    return {
        **ingestion,
        "rows_read": rows,
        "plain_read_s": read_s,
        "explicit_cold_s": explicit_cold,
        "explicit_cold_ratio": explicit_cold / read_s,
        "explicit_warm_s": explicit_warm,
        "explicit_warm_ratio": explicit_warm / read_s,
        "whole_cold_s": whole_cold,
        "whole_cold_ratio": whole_cold / read_s,
        "whole_warm_s": min(warm),
        "whole_warm_ratio": min(warm) / read_s,
        "whole_warm_p50_s": statistics.median(warm),
        "whole_next_p50_s": statistics.median(following),
        "whole_next_ratio": statistics.median(following) / read_s,
        "record_kib_per_return": record_bytes / 2**10,
        "cold_judgment": cold_judgment,
        "warm_judgment": whole.last,
        "cold_peak_mib_per_100k_items": memory,
    }


HEADER = (
    "backend  items  delta | read ms | explicit cold  warm | whole cold     warm   p50 ms "
    "  next   p50 ms | judged calls/pairs/unscreened | append ev/s  raw ev/s  share"
)


def row(r: dict[str, Any]) -> str:
    if "rows_read" not in r:
        return (
            f"{r['backend']:8} {r['items']:>6} {r['delta']:>6} | append "
            f"{r['append_ev_s']:9.0f} ev/s, raw INSERT {r['raw_insert_ev_s']:9.0f} ev/s: "
            f"{r['append_share_of_raw']:.0%}; store {r['store_mib_per_100k_events']:.0f} MiB "
            "per 100k events"
        )
    j = r["cold_judgment"]
    return (
        f"{r['backend']:8} {r['items']:>6} {r['delta']:>6} | {r['plain_read_s'] * 1e3:7.1f} | "
        f"x{r['explicit_cold_ratio']:5.1f}  x{r['explicit_warm_ratio']:5.1f} | "
        f"x{r['whole_cold_ratio']:5.1f} ({r['whole_cold_s'] * 1e3:6.0f} ms) "
        f"x{r['whole_warm_ratio']:5.1f} {r['whole_warm_p50_s'] * 1e3:7.1f}  "
        f"x{r['whole_next_ratio']:5.1f} {r['whole_next_p50_s'] * 1e3:7.1f} | "
        f"{j['calls']:>4}/{j['pairs']:>4}/{j['unscreened']:>3} {j['outcome']:8} | "
        f"{r['append_ev_s']:9.0f} {r['raw_insert_ev_s']:9.0f} {r['append_share_of_raw']:5.0%}"
    )


def footer(results: list[dict[str, Any]]) -> list[str]:
    """The lines under the table: each cell's store size, and the peak memory where measured."""
    lines = []
    for r in results:
        if "rows_read" in r:  # with --ingest-only, in its row
            lines.append(
                f"{r['backend']}: store {r['store_mib_per_100k_events']:.0f} MiB per 100k "
                f"events (at {r['items']} items, delta {r['delta']})"
            )
        if "record_kib_per_return" in r:
            lines.append(
                f"{r['backend']}: a decision record {r['record_kib_per_return']:.0f} KiB stored "
                f"a return (at {r['items']} items, delta {r['delta']})"
            )
        if r.get("cold_peak_mib_per_100k_items") is not None:
            lines.append(
                f"{r['backend']}: cold whole return, peak Python memory "
                f"{r['cold_peak_mib_per_100k_items']:.0f} MiB per 100k items "
                f"(at {r['items']} items)"
            )
    return lines


def rotation(workspaces: int, items: int, rounds: int) -> list[float]:
    """Seconds of each next return, ``rounds`` in each of ``workspaces`` taken in turn."""
    before, delta = history(items, 0.1)
    at = delta[-1].at + timedelta(minutes=1)
    verifier = make_verifier("builtin")
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/workspaces.db")
        returns = []
        for w in range(workspaces):
            name, label = f"ws{w}", f"{workspaces} workspaces: ws{w}"
            store.create_workspace(name, AGENTS)
            ingest(store, before, label, name)
            store.depart(name, "A1", before[-1].at)
            ingest(store, delta, label, name)
            returns.append(Returns(store, at, verifier, name))
        for each in returns:
            each.whole()  # cold
            each.whole()  # warm
        progress(f"{workspaces} workspaces: {rounds} rounds of next returns")
        seconds = [each.next() for _ in range(rounds) for each in returns]
        store.close()
    return seconds


def rotations(counts: list[int], items: int, rounds: int) -> None:
    """Print `rotation`'s median for each count, each in a process of its own, against one."""
    medians: dict[int, float] = {}
    for count in sorted({1, *counts}):
        child = [sys.executable, __file__, "--rotation", f"{count}:{items}:{rounds}"]
        done = subprocess.run(child, check=True, stdout=subprocess.PIPE)
        medians[count] = statistics.median(json.loads(done.stdout))
    print(f"next return rotating over W workspaces of {items} items, {rounds} rounds (SQLite)")
    print("workspaces | p50 ms | x one workspace")
    for count, median in medians.items():
        print(f"{count:10d} | {median * 1e3:6.1f} | x{median / medians[1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--grid",
        default=DEFAULT_GRID,
        help="items:delta_fraction cells, comma-separated, or 'full' (1k-100k x 1%%-50%%)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="warm returns and reads (best of)")
    parser.add_argument("--samples", type=int, default=15, help="warm returns for p50 at 10k")
    parser.add_argument("--postgres", metavar="URL", help="also run on this PostgreSQL server")
    parser.add_argument("--only-postgres", action="store_true", help="skip SQLite")
    parser.add_argument("--no-memory", dest="memory", action="store_false")
    parser.add_argument("--ingest-only", action="store_true", help="append vs raw INSERT only")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    parser.add_argument("--workspaces", help="W counts, comma-separated: see (e)")
    parser.add_argument("--rotation", help=argparse.SUPPRESS)  # a child of --workspaces
    parser.add_argument("--explicit", nargs=3, help=argparse.SUPPRESS)  # `explicit_times`
    args = parser.parse_args()
    if args.explicit:
        url, at, repeat = args.explicit
        print(json.dumps(explicit_child(url, datetime.fromisoformat(at), int(repeat))))
        return
    grid = FULL_GRID if args.grid == "full" else args.grid
    args.cells = [(int(c.split(":")[0]), float(c.split(":")[1])) for c in grid.split(",")]
    if args.rotation:
        count, items, rounds = map(int, args.rotation.split(":"))
        print(json.dumps(rotation(count, items, rounds)))
        return
    if args.workspaces:
        counts = [int(c) for c in args.workspaces.split(",")]
        rotations(counts, args.cells[0][0], args.samples)
        return
    run_grid(args)


def run_grid(args: argparse.Namespace) -> None:
    """Every cell of the grid on each backend: the table (or JSON) to stdout."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        backends = [] if args.only_postgres else [Backend("sqlite", Path(tmp))]
        if args.postgres:
            backends.append(Backend("postgres", Path(tmp), args.postgres))
        if not args.json and not args.ingest_only:
            print(HEADER, flush=True)
        for backend in backends:
            for n, fraction in args.cells:
                results.append(run_cell(backend, n, fraction, args))
                if not args.json:
                    print(row(results[-1]), flush=True)
        if not args.json:
            for line in footer(results):
                print(line)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
