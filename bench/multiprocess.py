"""Proof: several ``readmit serve`` processes over one PostgreSQL decide as one process does.

A scripted team (four agents of one principal) writes, revokes, departs and returns.
The same script runs twice on fresh schemas of one server:

- against ``--servers`` processes (default 2), step ``i`` sent to process ``i % n``, so
  every process has decoded items and parsed events in memory that another process
  then changes (revocations, same-key replacements, new facts) before it decides again;
- against one process.

It checks that every return's decision (outcome, epoch, coverage, what was selected,
each exclusion with its reason, what is missing) is the same in both runs, then has
every agent write concurrently through all processes and checks that the log's epochs
are exactly 1..N (strictly increasing, gap-free, nothing lost).

With ``--clock-apart S``, process ``i`` reads the wall clock ``i × S`` seconds ahead, as on
machines whose clocks are apart: they date by the database's clock, so the decisions
are still one process's (departures through a process ahead were in the future of one
behind, and its returns were decided against the departures before them).

Usage: python bench/multiprocess.py --postgres URL [--servers 2] [--rounds 30] [--shared-limits]
       [--clock-apart S]
Exits 1, naming the first difference, if the proof fails.
"""

import argparse
import json
import sys
import threading
import time
from contextlib import ExitStack
from typing import Any

import httpx

from readmit.bench.schemas import fresh_schema
from readmit.bench.served import served
from readmit.clock import now
from readmit.model import Agent
from readmit.service.keys import key_hash, new_key
from readmit.store import open_store

SIGNING_KEY = "multiprocess-signing-key-0123456789"
AGENTS = [Agent(id=f"a{n}", principal="org", role=f"r{n % 2}") for n in range(4)]
COMPARED = ("outcome", "epoch", "coverage", "selected", "excluded", "missing")
Step = tuple[str, str, dict[str, Any]]
"""(agent, path, body)."""


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def script(rounds: int) -> list[Step]:
    """The team's steps: facts (half of them keyed, so teammates replace each other's),
    revocations of a teammate's fact, and each agent's departures and returns.

    Every event has an id of its own, so both runs store the same log.
    """
    steps: list[Step] = []
    active: list[str] = []  # unkeyed facts nobody has withdrawn yet, as full ids
    departed: set[str] = set()
    for r in range(rounds):
        for n, agent in enumerate(a.id for a in AGENTS):
            match (r + n) % 5:
                case 0 | 1:
                    item: dict[str, Any] = {
                        "id": f"f{r}",
                        "text": f"Service svc{r % 7} runs build {r} in region eu-{n}.",
                    }
                    if r % 2 == 0:
                        item["key"] = f"svc{r % 7}"
                    else:
                        active.append(f"{agent}/f{r}")
                    fact = {"id": f"assert-{r}", "op": "assert", "author": agent, "item": item}
                    body = {"events": [fact]}
                    steps.append((agent, "/v1/events", body))
                case 2 if any(not t.startswith(f"{agent}/") for t in active):
                    target = next(t for t in active if not t.startswith(f"{agent}/"))
                    active.remove(target)
                    revoke = {"id": f"revoke-{r}", "op": "revoke", "author": agent}
                    revoke |= {"target": target, "why": "gone"}
                    steps.append((agent, "/v1/events", {"events": [revoke]}))
                case 3:
                    departed.add(agent)
                    steps.append((agent, "/v1/depart", {}))
                case 4 if agent in departed:
                    steps.append((agent, "/v1/return", {"task": "ops", "purpose": "on-call"}))
    return steps


def setup(url: str) -> dict[str, str]:
    """A workspace with the team and a key for each agent."""
    store = open_store(url)
    store.create_workspace("team", AGENTS)
    keys = {}
    for agent in AGENTS:
        keys[agent.id] = new_key()
        store.add_agent_key("team", agent.id, key_hash(keys[agent.id]), now())
    store.close()
    return keys


WIDE = ("--rate", "100000", "--burst", "100000", "--event-rate", "1000000")
"""Limits opened wide: the proof is of decisions, not of refusals."""


def decisions(
    url: str, servers: int, steps: list[Step], flags: tuple[str, ...] = (), apart: float = 0.0
) -> list[dict[str, Any]]:
    """Run ``steps`` over ``servers`` processes in turn; the compared part of each return.

    Process ``i``'s wall clock reads ``i × apart`` seconds ahead.
    """
    keys = setup(url)
    out: list[dict[str, Any]] = []
    with ExitStack() as stack:
        bases = [
            stack.enter_context(served(url, SIGNING_KEY, *WIDE, *flags, ahead=i * apart))[0]
            for i in range(servers)
        ]
        clients = [stack.enter_context(httpx.Client(base_url=b, timeout=300)) for b in bases]
        for i, (agent, path, body) in enumerate(steps):
            answer = clients[i % servers].post(
                path, json=body, headers={"Authorization": f"Bearer {keys[agent]}"}
            )
            if answer.status_code != 200:
                raise RuntimeError(f"step {i} ({agent} {path}): {answer.status_code} {answer.text}")
            if path == "/v1/return":
                shown = answer.json()
                out.append({"agent": agent, **{k: shown.get(k) for k in COMPARED}})
        if servers > 1:
            concurrent_writes(keys, bases)
    return out


def concurrent_writes(keys: dict[str, str], bases: list[str], per_agent: int = 40) -> None:
    """Every agent writes ``per_agent`` one-event batches at once, across all processes."""
    failures: list[str] = []

    def write(agent: str) -> None:
        headers = {"Authorization": f"Bearer {keys[agent]}"}
        with ExitStack() as stack:
            clients = [
                stack.enter_context(httpx.Client(base_url=b, timeout=300, headers=headers))
                for b in bases
            ]
            for i in range(per_agent):
                item = {"id": f"c{i}", "text": f"Concurrent note {i} of {agent}."}
                event = {"id": f"c{i}", "op": "assert", "author": agent, "item": item}
                answer = clients[i % len(clients)].post("/v1/events", json={"events": [event]})
                if answer.status_code != 200:
                    failures.append(f"{agent} c{i}: {answer.status_code} {answer.text}")

    threads = [threading.Thread(target=write, args=(a.id,)) for a in AGENTS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"{len(failures)} concurrent writes failed, first: {failures[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", required=True, metavar="URL")
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument(
        "--shared-limits", action="store_true", help="start the processes with --shared-limits"
    )
    parser.add_argument(
        "--clock-apart",
        type=float,
        default=0.0,
        metavar="S",
        help="process i reads the wall clock i × S seconds ahead (machines' clocks apart)",
    )
    args = parser.parse_args()
    flags = ("--shared-limits",) if args.shared_limits else ()
    steps = script(args.rounds)
    returns = sum(1 for _, path, _ in steps if path == "/v1/return")
    apart = f", clocks {args.clock_apart:g} s apart" if args.clock_apart else ""
    progress(f"{len(steps)} steps ({returns} returns) over {args.servers} processes{apart}")
    with fresh_schema(args.postgres) as url:
        many = decisions(url, args.servers, steps, flags, args.clock_apart)
        store = open_store(url)
        epochs = [r.epoch for r in store.events("team")]
        store.close()
    progress("the same steps over one process")
    with fresh_schema(args.postgres) as url:
        one = decisions(url, 1, steps, flags)
    problems = [
        f"return {n} ({a['agent']}): {args.servers} processes {json.dumps(a)} "
        f"!= one process {json.dumps(b)}"
        for n, (a, b) in enumerate(zip(many, one, strict=True))
        if a != b
    ]
    if epochs != list(range(1, len(epochs) + 1)):
        problems.append(f"epochs are not 1..{len(epochs)}: gaps or repeats")
    writes = sum(1 for _, path, _ in steps if path == "/v1/events") + 40 * len(AGENTS)
    if len(epochs) != writes:
        problems.append(f"{len(epochs)} events stored, {writes} written")
    outcomes = sorted({d["outcome"] for d in many})
    print(
        f"{returns} returns over {args.servers} processes and over one: "
        f"{returns - len([p for p in problems if p.startswith('return')])} identical "
        f"(outcomes {', '.join(outcomes)}); {len(epochs)} events, epochs 1..{len(epochs)} "
        f"{'gap-free' if epochs == list(range(1, len(epochs) + 1)) else 'NOT gap-free'}"
    )
    for problem in problems:
        print("FAIL:", problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
