"""Benchmark: admission (explicit stages) and ingestion, as ratios to baselines from the same run.

For workspaces of 1k, 10k and 100k items with a delta of a tenth of that, it reports

(a) the time to build the return context and run ``admit()`` with the explicit
    stages only (no verifier), against a plain indexed read of the same rows
    (the same SELECTs, rows fetched, nothing decoded). "cold" is the first
    return on a freshly opened store (every item body decoded); "warm" is a
    later return on the same store, which reuses decoded items;
(b) the event ingestion rate of ``store.append`` (validation, projections,
    receipts, log) against a raw batched INSERT of the same event rows.

Usage: python bench/admission.py [--sizes 1000,10000,100000] [--repeat 3]
"""

import argparse
import json
import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from readmit.admission import admit
from readmit.bench.timing import best
from readmit.canonical import canonical_json, digest
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
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store.sqlite import SQLiteStore
from readmit.wire import event_to_wire

T0 = datetime(2026, 1, 1, tzinfo=UTC)
AGENTS = [Agent(id="A1", principal="org", role="ops"), Agent(id="A2", principal="org", role="dev")]
BATCH = 1000


def history(n: int) -> tuple[list[Event], list[Event]]:
    """``n`` items before departure, then a delta of ``n // 10`` events of every kind."""
    at = iter(T0 + timedelta(seconds=i) for i in range(10 * n))
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
        draft = ItemDraft(
            id=f"i{i}",
            text=f"Service s{i % 97} runs version {i}.",
            key=f"k{i}" if i % 3 == 0 else None,
            supports=frozenset({f"d{i % 2}"}) if i < 4 else frozenset(),
        )
        before.append(Assert(id=f"a{i}", at=next(at), author="A2", item=draft))
    delta: list[Event] = []
    for j in range(n // 10):
        target = (j * 7919) % n
        match j % 4:
            case 0:
                delta.append(
                    Revoke(
                        id=f"r{j}",
                        at=next(at),
                        author="A2",
                        target=f"i{target}",
                        why="decommissioned",
                    )
                )
            case 1:
                delta.append(
                    Supersede(
                        id=f"s{j}",
                        at=next(at),
                        author="A2",
                        target=f"i{target}",
                        item=ItemDraft(id=f"s{j}", text=f"Service moved {j}."),
                    )
                )
            case 2:
                delta.append(
                    Assert(
                        id=f"k{j}",
                        at=next(at),
                        author="A2",
                        item=ItemDraft(
                            id=f"n{j}", text=f"Service rekeyed {j}.", key=f"k{(j * 3) % n}"
                        ),
                    )
                )
            case _:
                delta.append(
                    Assert(
                        id=f"x{j}",
                        at=next(at),
                        author="A2",
                        item=ItemDraft(id=f"x{j}", text=f"New fact {j}."),
                    )
                )
    return before, _unique_targets(delta)


def _unique_targets(delta: list[Event]) -> list[Event]:
    """Drop events that would withdraw an item twice (the store rejects those, rightly)."""
    seen: set[str] = set()
    kept: list[Event] = []
    for event in delta:
        target = getattr(event, "target", None)
        if target is not None and target in seen:
            continue
        if target is not None:
            seen.add(target)
        kept.append(event)
    return kept


def ingest(store: SQLiteStore, events: list[Event]) -> None:
    for i in range(0, len(events), BATCH):
        store.append("ws", events[i : i + BATCH])


def raw_insert(path: Path, events: list[Event]) -> None:
    """The baseline: the same event rows, one batched INSERT per 1000, no checks or projections."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(
        "CREATE TABLE events (workspace TEXT, epoch INTEGER, id TEXT, at TEXT, "
        "author TEXT, op TEXT, body TEXT, digest TEXT, PRIMARY KEY (workspace, epoch))"
    )
    for i in range(0, len(events), BATCH):
        rows = []
        for epoch, event in enumerate(events[i : i + BATCH], start=i + 1):
            body = event_to_wire(event)
            rows.append(
                (
                    "ws",
                    epoch,
                    event.id,
                    event.at.isoformat(),
                    event.author,
                    event.op,
                    canonical_json(body),
                    digest(body),
                )
            )
        db.execute("BEGIN")
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.execute("COMMIT")
    db.close()


def plain_read(store: SQLiteStore, checkpoint: int, epoch: int) -> int:
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


def run_size(n: int, repeat: int, tmp: Path) -> dict[str, float]:
    before, delta = history(n)
    events = before + delta
    signer = HmacSha256Signer(b"bench-key-0123456789")
    raw_s = best(lambda: raw_insert(tmp / f"raw-{n}-{time.monotonic_ns()}.db", events), repeat)
    ingest_times = []
    path = ""
    for r in range(repeat):
        path = str(tmp / f"store-{n}-{r}.db")
        writer = SQLiteStore(path)
        writer.create_workspace("ws", AGENTS)
        start = time.perf_counter()
        ingest(writer, before)
        writer.depart("ws", "A1", before[-1].at)
        ingest(writer, delta)
        ingest_times.append(time.perf_counter() - start)
        writer.close()
    ingest_s = min(ingest_times)
    store = SQLiteStore(path)
    checkpoint, cp_epoch = store.conn.execute("SELECT id, epoch FROM checkpoints").fetchone()
    request = ReturnRequest(
        id="r", at=delta[-1].at + timedelta(minutes=1), agent="A1", task="t", purpose="p"
    )
    policy = Policy(gamma=0.0, rho=0.0)

    def admission() -> None:
        ctx = store.return_context("ws", request)
        admit(ctx, policy=policy, verifier=None, signer=signer)

    read_s = best(lambda: plain_read(store, checkpoint, cp_epoch), repeat)
    cold_s = best(admission, 1)
    warm_s = best(admission, repeat)
    rows = plain_read(store, checkpoint, cp_epoch)
    store.close()
    return {
        "items": n,
        "delta": len(delta),
        "rows_read": rows,
        "plain_read_s": read_s,
        "cold_s": cold_s,
        "cold_ratio": cold_s / read_s,
        "warm_s": warm_s,
        "warm_ratio": warm_s / read_s,
        "raw_insert_ev_s": len(events) / raw_s,
        "append_ev_s": len(events) / ingest_s,
        "ingest_ratio": ingest_s / raw_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            results.append(run_size(n, args.repeat, Path(tmp)))
            r = results[-1]
            if not args.json:
                print(
                    f"{r['items']:>7} items, delta {r['delta']:>6}: plain read "
                    f"{r['plain_read_s'] * 1e3:7.1f} ms; admission cold "
                    f"{r['cold_s'] * 1e3:7.1f} ms (x{r['cold_ratio']:.1f}), warm "
                    f"{r['warm_s'] * 1e3:7.1f} ms (x{r['warm_ratio']:.1f}); ingest "
                    f"{r['append_ev_s']:6.0f} ev/s vs raw INSERT {r['raw_insert_ev_s']:6.0f} ev/s "
                    f"(time x{r['ingest_ratio']:.2f})",
                    flush=True,
                )
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
