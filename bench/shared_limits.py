"""Benchmark: what ``readmit serve --shared-limits`` costs a request, against per-process limits.

Per-agent limits kept in the store (`readmit.service.shared_limits`) cost each request a
write transaction (two with a body). Measured in the same run, on SQLite and, given a
server, on PostgreSQL:

(a) in-process, one agent's request-bucket take (`Throttle.admit_request`), kept in the
    process and kept in the store: microseconds a take, best of ``--repeat``;
(b) over HTTP, ``--threads`` agents each sending ``--requests`` keyed reads
    (``GET /v1/decisions``) to one ``readmit serve`` on loopback, with and without
    ``--shared-limits`` (limits opened wide, so nothing is refused): requests/s and p50.

Usage: python bench/shared_limits.py [--postgres URL] [--threads 4] [--requests 300]
"""

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from readmit.bench.schemas import fresh_schema
from readmit.bench.served import served
from readmit.bench.timing import best
from readmit.clock import now
from readmit.model import Agent
from readmit.service.keys import key_hash, new_key
from readmit.service.limits import Limits, Throttle
from readmit.service.shared_limits import SharedThrottle
from readmit.store import open_store

WIDE = Limits(rate=1e9, burst=10**9, shared=True)
FLAGS = ("--rate", "1000000000", "--burst", "1000000000")
SIGNING_KEY = "bench-signing-key-0123456789abcdef"


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@contextmanager
def store_url(postgres: str | None) -> Iterator[str]:
    """A fresh SQLite file, or a fresh schema of ``postgres``, dropped afterwards."""
    if postgres is None:
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{Path(tmp) / 'readmit.db'}"
        return
    with fresh_schema(postgres, "limits") as url:
        yield url


def agents(url: str, count: int) -> list[str]:
    """Workspace ``w`` with ``count`` agents; their keys."""
    store = open_store(url)
    store.create_workspace(
        "w", [Agent(id=f"a{n}", principal="org", role="r") for n in range(count)]
    )
    keys = []
    for n in range(count):
        keys.append(new_key())
        store.add_agent_key("w", f"a{n}", key_hash(keys[-1]), now())
    store.close()
    return keys


def takes(url: str, repeat: int, count: int = 2000) -> dict[str, float]:
    """Microseconds a request-bucket take, kept in the process and in the store."""
    store = open_store(url)
    own, shared = Throttle(WIDE), SharedThrottle(WIDE, store)
    out = {}
    for name, throttle in (("process", own), ("store", shared)):

        def run(t: Throttle = throttle) -> None:
            for _ in range(count):
                t.admit_request(("w", "a0"))

        out[f"{name}_us"] = best(run, repeat) / count * 1e6
    store.close()
    return out


def over_http(url: str, keys: list[str], requests: int, *flags: str) -> dict[str, float]:
    """Requests/s and p50 ms of keyed reads from ``len(keys)`` agents at once."""
    latencies: list[float] = []
    lock = threading.Lock()
    with served(url, SIGNING_KEY, *FLAGS, *flags) as (base, _):

        def agent(key: str) -> None:
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}) as c:
                c.get("/v1/decisions").raise_for_status()  # its connection, once
                for _ in range(requests):
                    start = time.perf_counter()
                    c.get("/v1/decisions", timeout=60).raise_for_status()
                    with lock:
                        latencies.append(time.perf_counter() - start)

        threads = [threading.Thread(target=agent, args=(k,)) for k in keys]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
    return {"per_s": len(latencies) / wall, "p50_ms": statistics.median(latencies) * 1e3}


def cell(backend: str, postgres: str | None, args: argparse.Namespace) -> dict[str, Any]:
    with store_url(postgres) as url:
        keys = agents(url, args.threads)
        progress(f"{backend}: takes in-process")
        taken = takes(url, args.repeat)
        progress(f"{backend}: over HTTP, per process then shared")
        alone = over_http(url, keys, args.requests)
        shared = over_http(url, keys, args.requests, "--shared-limits")
    return {
        "backend": backend,
        **taken,
        "take_ratio": taken["store_us"] / taken["process_us"],
        "http_process": alone,
        "http_shared": shared,
        "http_rate_share": shared["per_s"] / alone["per_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", metavar="URL")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--requests", type=int, default=300, help="per agent")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [cell("sqlite", None, args)]
    if args.postgres:
        rows.append(cell("postgres", args.postgres, args))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        "backend  | take µs: process  store (ratio) | HTTP req/s: process  shared (share) | p50 ms"
    )
    for r in rows:
        a, s = r["http_process"], r["http_shared"]
        print(
            f"{r['backend']:8} | {r['process_us']:14.1f} {r['store_us']:6.1f} "
            f"(x{r['take_ratio']:5.0f}) "
            f"| {a['per_s']:16.0f} {s['per_s']:7.0f} ({r['http_rate_share']:4.0%}) "
            f"| {a['p50_ms']:.2f} / {s['p50_ms']:.2f}"
        )


if __name__ == "__main__":
    main()
