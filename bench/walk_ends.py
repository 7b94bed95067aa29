"""Benchmark: what following validity ends costs a memory layer's walk of the log.

A memory layer serving between returns walks the log after each return
(`readmit.integrations.following.Following`) and, since stop 71, follows the validity
ends of what it serves rests on (`readmit.integrations.ends`). On a SQLite store where
A2 stated ``--items`` items before A1's departure, every other one ending in a year and
each of the rest resting on the one before it (the worst case for following C's
premises), A1 returns, then:

- ``made``: `Following` of that return, made as each layer makes it at every return;
- ``first read``: the walk's first read after A2 states ``--since`` items resting on
  items of C, each ending in a year (what the walk follows);
- ``idle read``: a read with nothing new in the log and no end due (the wall clock),
  after the walk's poll interval: it reads the log again and finds nothing.

Each is the median of ``--repeat`` runs, in ms (the idle read in µs). Run it on two trees
with ``PYTHONPATH=TREE/src`` to compare. Usage: python bench/walk_ends.py [--items 100000]
[--since 1000] [--repeat 7]
"""

import argparse
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from readmit.clock import now
from readmit.events import Assert, ItemDraft
from readmit.integrations.following import Following
from readmit.integrations.team import Member
from readmit.model import Agent, Validity
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

SIGNER = HmacSha256Signer(b"bench-signing-key-0123456789")
BATCH = 1000


def statements(author: str, ids: list[str], on: list[str | None]) -> list[Assert]:
    """``author`` states each of ``ids``: one resting on ``on``'s id, else ending in a year."""
    at = now()
    ends = Validity(valid_to=at + timedelta(days=365))
    return [
        Assert(
            id=f"e-{i}", at=at, author=author,
            item=ItemDraft(id=i, text=f"Fact {i} holds.", validity=ends) if p is None
            else ItemDraft(id=i, text=f"Fact {i} rests on {p}.", depends_on=frozenset({p})),
        )
        for i, p in zip(ids, on, strict=True)
    ]  # fmt: skip


def median_ms(work: list[float]) -> float:
    return statistics.median(work) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="items before the departure")
    parser.add_argument("--since", type=int, default=1000, help="items stated after the return")
    parser.add_argument("--repeat", type=int, default=7, help="runs of each (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{Path(tmp)}/walk.db")
        agents = [Agent(id=a, principal="team", role="planner") for a in ("A1", "A2")]
        store.create_workspace("ws", agents)
        ids = [f"c{n}" for n in range(args.items)]
        on = [None if n % 2 == 0 else ids[n - 1] for n in range(args.items)]
        for lo in range(0, args.items, BATCH):
            store.append("ws", statements("A2", ids[lo : lo + BATCH], on[lo : lo + BATCH]))
        a1 = Member(store, "ws", "A1", SIGNER, policy=Policy(implicit=False))
        a2 = Member(store, "ws", "A2", SIGNER)
        a1.depart()
        decided = a1.return_()

        made: list[float] = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            Following(decided)
            made.append(time.perf_counter() - start)

        first: list[float] = []
        idle: list[float] = []
        for run in range(args.repeat):
            since = [f"s{run}-{n}" for n in range(args.since)]
            following = Following(decided)
            following.withdrawn(a1)  # caught up to the return
            a2.record(statements("A2", since, [ids[n % args.items] for n in range(args.since)]))
            start = time.perf_counter()
            following.withdrawn(a1)
            first.append(time.perf_counter() - start)
            following.withdrawn(a1)
            time.sleep(0.1)  # past the walk's poll of the log: a read looks, finds nothing
            start = time.perf_counter()
            following.withdrawn(a1)
            idle.append(time.perf_counter() - start)
        store.close()
    print(f"items {args.items}, stated since {args.since}, median of {args.repeat}:")
    print(f"  made        {median_ms(made):8.1f} ms")
    print(f"  first read  {median_ms(first):8.1f} ms")
    print(f"  idle read   {median_ms(idle) * 1e3:8.1f} µs")


if __name__ == "__main__":
    main()
