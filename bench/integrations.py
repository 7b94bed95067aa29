"""Adapter overhead: reads through `ReadmitStore` against the same reads on its inner store.

For each inner store (LangGraph's ``InMemoryStore`` and ``SqliteStore``) it writes
``--items`` items through a `ReadmitStore`, departs and returns the agent (with a
budget that admits them all), then times ``get`` and ``search`` on the inner store
and through the wrapper, in the same run, best of ``--repeat`` interleaved rounds of ``--reads``
reads each, and prints the ratio (the issue's goal: at most 1.5x). A second search
row has only every fourth path recorded through readmit (the rest written straight
to the inner store), so the wrapper must over-fetch to fill each page.

Usage: python bench/integrations.py [--items 400] [--reads 2000] [--repeat 5] [--limit 10]
"""

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

NS = ("bench", "facts")


@contextmanager
def inner_store(kind: str, tmp: Path) -> Iterator[BaseStore]:
    if kind == "memory":
        yield InMemoryStore()
        return
    conn = sqlite3.connect(tmp / "lg.db", check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn)
    store.setup()
    yield store
    conn.close()


def returned_member(tmp: Path, items: int) -> Member:
    readmit = open_store(f"sqlite:///{tmp}/readmit.db")
    readmit.create_workspace("bench", [Agent(id="a", principal="p", role="r")])
    policy = Policy(max_items=items * 2, max_chars=10_000_000)
    return Member(
        readmit, "bench", "a", HmacSha256Signer(b"bench-key-0123456789abcdef"), policy=policy
    )


def best_pair(
    plain: Callable[[], object], wrapped: Callable[[], object], reads: int, repeat: int
) -> tuple[float, float]:
    """Best time per call of each, in microseconds, over ``repeat`` interleaved rounds.

    Rounds alternate between the two, so a busy machine slows both alike.
    """
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((plain, times[0]), (wrapped, times[1])):
            start = time.perf_counter()
            for _ in range(reads):
                fn()
            out.append(time.perf_counter() - start)
    return min(times[0]) / reads * 1e6, min(times[1]) / reads * 1e6


def measure(kind: str, args: argparse.Namespace, every: int) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as d, inner_store(kind, Path(d)) as inner:
        member = returned_member(Path(d), args.items)
        wrapped = ReadmitStore(inner, member)
        for i in range(args.items):
            target = wrapped if i % every == 0 else inner
            target.put(NS, f"k{i:05d}", {"text": f"Fact {i} about item {i % 17}."})
        member.depart()
        if arrive(member) is None:
            raise SystemExit("the return was not decided")
        key = f"k{(args.items // 2) // every * every:05d}"
        reads: dict[str, Callable[[BaseStore], object]] = {
            "get": lambda s: s.get(NS, key),
            "search": lambda s: s.search(NS, limit=args.limit),
        }
        if every > 1:  # a get of an admitted path is the same either way
            reads.pop("get")
        out = {}
        for name, read in reads.items():
            out[name] = best_pair(
                partial(read, inner), partial(read, wrapped), args.reads, args.repeat
            )
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args()
    print(f"{'inner':8} {'read':26} {'inner µs':>10} {'readmit µs':>11} {'ratio':>6}")
    for kind in ("memory", "sqlite"):
        for every, label in ((1, ""), (4, " (1 in 4 admitted)")):
            for name, (plain, wrapped) in measure(kind, args, every).items():
                row = f"{kind:8} {name + label:26} {plain:10.1f} {wrapped:11.1f}"
                print(f"{row} {wrapped / plain:6.2f}")


if __name__ == "__main__":
    main()
