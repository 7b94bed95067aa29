"""Load benchmark: the HTTP service on loopback against the same operations in-process.

Many agents (threads) each record events one request at a time, depart, and
return repeatedly. For each store it reports events/s and returns/s with p50/p99
latency, over real HTTP (``readmit serve`` in its own process) and in-process
(`Service` called directly), as a ratio measured in the same run.

With ``--flood N``, one more agent sends N-event batches back to back for the whole
HTTP run (5000: more than the server's default ``--max-events`` of 1000, so each is
refused before anything is stored; 1000: the largest batch it takes), and the report
adds how many requests of any agent got a 5xx and how the flood's requests were
answered. ``--flood-workspace`` puts the flooding agent in a workspace of its own
(it then competes only for the machine and, on SQLite, for the file's write lock).

``--workers N`` starts ``readmit serve --workers N``; the in-process figures stay one
process (they are the same operations without HTTP, for the ratio).

Usage: python bench/service.py [--agents 16] [--events 50] [--returns 5]
                               [--postgres URL | --no-postgres] [--flood N]
                               [--flood-workspace] [--workers N] [--http-only]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from readmit.bench.served import served
from readmit.clock import now
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.service.keys import key_hash, new_key
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

ROOT = Path(__file__).parent.parent
SIGNING_KEY = "bench-signing-key-0123456789"
Call = Callable[[str, int], object]


@dataclass(frozen=True, slots=True)
class Flood:
    """One more agent sending ``batch``-event requests back to back."""

    batch: int
    elsewhere: bool
    """Whether it works in a workspace of its own."""


def setup(url: str, agents: int, flood: Flood | None = None) -> dict[str, str]:
    """A workspace with ``agents`` agents (and the flooding one) and a key for each."""
    store = open_store(url)
    team = [Agent(id=f"a{n}", principal="org", role=f"r{n % 4}") for n in range(agents)]
    flooder = Agent(id="flood", principal="org", role="r0")
    if flood is not None and flood.elsewhere:
        store.create_workspace("elsewhere", [flooder])
    elif flood is not None:
        team.append(flooder)
    store.create_workspace("load", team)
    keys = {}
    for agent in team:
        keys[agent.id] = new_key()
        store.add_agent_key("load", agent.id, key_hash(keys[agent.id]), now())
    if flood is not None and flood.elsewhere:
        keys["flood"] = new_key()
        store.add_agent_key("elsewhere", "flood", key_hash(keys["flood"]), now())
    store.close()
    return keys


def event(agent: str, i: int) -> dict[str, Any]:
    key = f"{agent}-k{i % 5}"
    return {
        "op": "assert",
        "author": agent,
        "item": {
            "id": f"{agent}-{i}",
            "text": f"Service {agent} runs build {i}.",
            "key": key,
            "readers": {"principals": "*"},
        },
    }


def run_phase(agents: list[str], per_agent: int, call: Call) -> tuple[float, list[float]]:
    """Run ``call(agent, i)`` per_agent times in one thread per agent; (wall s, latencies)."""
    latencies: list[list[float]] = [[] for _ in agents]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(agents) + 1)

    def work(n: int, agent: str) -> None:
        barrier.wait()
        for i in range(per_agent):
            start = time.perf_counter()
            try:
                call(agent, i)
            except BaseException as exc:
                errors.append(exc)
                return
            latencies[n].append(time.perf_counter() - start)

    threads = [threading.Thread(target=work, args=(n, a)) for n, a in enumerate(agents)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    if errors:
        raise RuntimeError(f"{len(errors)} calls failed, first: {errors[0]!r}")
    return wall, [x for lat in latencies for x in lat]


def summary(count: int, wall: float, latencies: list[float]) -> dict[str, float]:
    q = statistics.quantiles(latencies, n=100)
    return {"per_s": count / wall, "p50_ms": q[49] * 1e3, "p99_ms": q[98] * 1e3}


def workload(
    agents: list[str], events: int, returns: int, record: Call, depart: Call, return_: Call
) -> dict[str, dict[str, float]]:
    wall, lat = run_phase(agents, events, record)
    out = {"events": summary(len(agents) * events, wall, lat)}
    run_phase(agents, 1, depart)
    run_phase(agents, events // 5, lambda a, i: record(a, events + i))
    wall, lat = run_phase(agents, returns, return_)
    out["returns"] = summary(len(agents) * returns, wall, lat)
    return out


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used so far; 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of process ``pid`` and of its children still running (the workers)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return cpu_seconds(pid) + sum(cpu_seconds(int(c)) for c in children)


@contextmanager
def server(url: str, workers: int = 1) -> Iterator[tuple[str, int]]:
    """``readmit serve`` (``--workers`` of them) on a free loopback port; (base URL, pid).

    With several workers ``pid`` is their parent's, and the CPU reported is the workers'.
    """
    extra = ["--workers", str(workers)] if workers > 1 else []
    with served(url, SIGNING_KEY, *extra) as (base, proc):
        yield base, proc.pid


def verifier_calls(url: str) -> int:
    """The verifier calls of the returns the workspace's log holds, this store's run's.

    Read from the operator's records after the run: an agent's answer does not say what
    its return spent (`readmit.wire.outbound.AgentJudgmentOut`).
    """
    store = open_store(url)
    try:
        logged = (store.decision(d.id, "load").get("judgment") for d in store.decisions("load"))
        return sum(j["calls"] for j in logged if j)
    finally:
        store.close()


def flooding(base: str, key: str, batch: int, stop: threading.Event, seen: Counter[int]) -> None:
    """Send ``batch``-event requests as agent ``flood`` until ``stop``; count the statuses.

    The body is serialised once and only its ids change per request, so the flood costs
    this (client) process little and reaches the server as fast as it answers.
    """
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    events = [event("flood", i) for i in range(batch)]
    for e in events:
        e["item"]["id"] = e["item"]["id"].replace("flood-", "flood-R-")
    template = json.dumps({"events": events}, separators=(",", ":")).encode()
    with httpx.Client(base_url=base, timeout=120, headers=headers) as client:
        n = 0
        while not stop.is_set():
            body = template.replace(b'"flood-R-', b'"flood-%d-' % n)
            seen[client.post("/v1/events", content=body).status_code] += 1
            n += 1


def over_http(
    url: str, agents: int, events: int, returns: int, flood: Flood | None = None, workers: int = 1
) -> dict[str, dict[str, float]]:
    keys = setup(url, agents, flood)
    flood_key = keys.pop("flood", None)
    with server(url, workers) as (base, pid):
        clients = {
            a: httpx.Client(base_url=base, timeout=120, headers={"Authorization": f"Bearer {k}"})
            for a, k in keys.items()
        }
        stop, flood_seen = threading.Event(), Counter[int]()
        statuses = Counter[int]()  # answered to the measured agents, of this store's run
        size = flood.batch if flood is not None else 0
        flooder = threading.Thread(target=flooding, args=(base, flood_key, size, stop, flood_seen))
        if flood_key is not None:
            flooder.start()

        def ok(response: httpx.Response) -> httpx.Response:
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                raise RuntimeError(response.text)
            return response

        cpu, start = tree_cpu_seconds(pid), time.perf_counter()
        try:
            return workload(
                list(keys),
                events,
                returns,
                record=lambda a, i: ok(
                    clients[a].post("/v1/events", json={"events": [event(a, i)]})
                ),
                depart=lambda a, i: ok(clients[a].post("/v1/depart", json={})),
                return_=lambda a, i: ok(
                    clients[a].post("/v1/return", json={"task": "ops", "purpose": "p"})
                ),
            )
        finally:
            stop.set()
            if flood_key is not None:
                flooder.join()
                print(f"flood: {dict(flood_seen)}", flush=True)
            print(f"measured agents' statuses: {dict(statuses)}", flush=True)
            print(f"verifier calls of the measured returns: {verifier_calls(url)}", flush=True)
            used, wall = tree_cpu_seconds(pid) - cpu, time.perf_counter() - start
            print(f"server process CPU: {used:.1f} s in {wall:.1f} s", flush=True)
            for client in clients.values():
                client.close()


def in_process(url: str, agents: int, events: int, returns: int) -> dict[str, dict[str, float]]:
    keys = setup(url, agents)
    service = Service(
        open_store(url),
        signer=HmacSha256Signer(SIGNING_KEY.encode()),
        verifier=make_verifier("builtin"),
    )
    callers: dict[str, Caller] = {a: service.authenticate(k) for a, k in keys.items()}

    def record(agent: str, i: int) -> None:
        service.record(callers[agent], [event(agent, i)])

    def depart(agent: str, i: int) -> None:
        service.depart(callers[agent])

    def return_(agent: str, i: int) -> None:
        service.return_(callers[agent], "ops", "p")

    try:
        return workload(list(keys), events, returns, record, depart, return_)
    finally:
        print(f"verifier calls of the in-process returns: {verifier_calls(url)}", flush=True)
        service.close()


@contextmanager
def postgres(url: str | None, enabled: bool) -> Iterator[Callable[[], str] | None]:
    """Fresh databases on a PostgreSQL server: the given one, or a throwaway one."""
    if not enabled:
        yield None
        return
    import psycopg

    tmp = None
    if url is None:
        tmp = tempfile.mkdtemp(prefix="readmit-bench-pg.")
        url = subprocess.check_output(
            [str(ROOT / "scripts" / "postgres"), "start", tmp], text=True
        ).strip()
    counter = iter(range(1_000_000))

    def fresh() -> str:
        schema = f"bench_{os.getpid()}_{next(counter)}"
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
        return f"{url}?options=-c%20search_path%3D{schema}"

    try:
        yield fresh
    finally:
        if tmp is not None:
            subprocess.run([str(ROOT / "scripts" / "postgres"), "stop", tmp], check=False)
            shutil.rmtree(tmp, ignore_errors=True)


def report(
    store: str, http: dict[str, dict[str, float]], local: dict[str, dict[str, float]] | None
) -> None:
    for op in ("events", "returns"):
        h = http[op]
        if local is None:
            print(
                f"{store:<9} {op:<8} HTTP {h['per_s']:8.1f}/s p50 {h['p50_ms']:7.1f} ms "
                f"p99 {h['p99_ms']:7.1f} ms",
                flush=True,
            )
            continue
        p = local[op]
        print(
            f"{store:<9} {op:<8} HTTP {h['per_s']:8.1f}/s p50 {h['p50_ms']:7.1f} ms "
            f"p99 {h['p99_ms']:7.1f} ms | in-process {p['per_s']:8.1f}/s p50 "
            f"{p['p50_ms']:7.1f} ms p99 {p['p99_ms']:7.1f} ms | HTTP/in-process throughput "
            f"{h['per_s'] / p['per_s']:.2f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--events", type=int, default=50, help="events per agent")
    parser.add_argument("--returns", type=int, default=5, help="returns per agent")
    parser.add_argument("--postgres", default=None, help="server URL (default: a throwaway one)")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--flood", type=int, default=0, metavar="N", help="add one agent sending N-event batches"
    )
    parser.add_argument(
        "--flood-workspace", action="store_true", help="the flooding agent works elsewhere"
    )
    parser.add_argument(
        "--http-only", action="store_true", help="skip the in-process run (and the ratio)"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="readmit serve --workers (1: not passed)"
    )
    args = parser.parse_args()
    flood = Flood(args.flood, args.flood_workspace) if args.flood else None
    sizes = (args.agents, args.events, args.returns)
    print(
        f"{args.agents} agents x {args.events} events (one per request), "
        f"then {args.returns} returns each"
    )
    with tempfile.TemporaryDirectory() as tmp:
        report(
            "sqlite",
            over_http(f"sqlite:///{tmp}/http.db", *sizes, flood=flood, workers=args.workers),
            None if args.http_only else in_process(f"sqlite:///{tmp}/local.db", *sizes),
        )
    with postgres(args.postgres, not args.no_postgres) as fresh:
        if fresh is not None:
            report(
                "postgres",
                over_http(fresh(), *sizes, flood=flood, workers=args.workers),
                None if args.http_only else in_process(fresh(), *sizes),
            )


if __name__ == "__main__":
    main()
