"""Adapter overhead: Mem0 and Agents SDK reads through readmit against the inner library's own.

Mem0: ``--items`` memories are added through one agent's `ReadmitMemory` over a
shared offline bank (in-memory Qdrant, a local bag-of-words embedder, ``infer=False``);
a second agent departs and returns (with a budget that admits every item), then
``search`` and ``get_all`` are timed on the inner ``Memory`` and through the wrapper,
in the same run, best of ``--repeat`` rounds of ``--reads`` reads each. A second row
revokes every fourth memory from a separate bank copy's items first, so the wrapper
removes them and must over-fetch to fill the page.

Agents SDK: a ``SQLiteSession`` with ``--items`` messages; ``get_items`` on it and
through a `ReadmitSession` after a return.

Prints one JSON line per row with the ratio wrapper / inner (the issue's goal: at most
1.5x). Usage: python bench/integrations_mem0.py [--items 200] [--reads 300] [--repeat 5]
"""

import argparse
import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="readmit-bench-mem0-"))

from agents import SQLiteSession, TResponseInputItem

from readmit.bench.backends import mem0_bank
from readmit.bench.timing import best
from readmit.integrations.agents_sdk import ReadmitSession
from readmit.integrations.mem0 import ReadmitMemory, withdrawals
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

WORDS = ["hotel", "flight", "dinner", "museum", "ferry", "budget", "train", "room", "taxi"]
FILTERS = {"user_id": "bench"}


def memory(directory: Path) -> Any:
    return mem0_bank.bank(directory, "bench")


def team(directory: Path) -> tuple[Member, Member]:
    store = open_store(f"sqlite:///{directory}/readmit.db")
    store.create_workspace(
        "bench",
        [Agent(id="a", principal="p", role="r"), Agent(id="b", principal="p", role="r")],
    )
    signer = HmacSha256Signer(b"bench-signing-key-0123456789")
    roomy = Policy(max_items=100_000, max_chars=10_000_000)
    return (
        Member(store, "bench", "a", signer, policy=roomy),
        Member(store, "bench", "b", signer, policy=roomy),
    )


def text(n: int) -> str:
    return f"note {n}: the {WORDS[n % len(WORDS)]} detail number {n} for the trip"


def mem0_rows(
    items: int, reads: int, repeat: int, revoke_every: int | None
) -> list[dict[str, Any]]:
    directory = Path(tempfile.mkdtemp(prefix="readmit-bench-mem0-"))
    a, b = team(directory)
    inner = memory(directory)
    writer, reader = ReadmitMemory(inner, a), ReadmitMemory(inner, b)
    ids = [
        writer.add(text(n), user_id="bench", infer=False)["results"][0]["id"] for n in range(items)
    ]
    reader.depart()
    if revoke_every:
        for memory_id in ids[::revoke_every]:  # revoked in readmit, kept in Mem0
            targets = writer.readmit.delete_targets(memory_id, None)
            withdrawals.deleted(writer.readmit.member, memory_id, targets)
    reader.search("hotel", filters=FILTERS)  # the return, not timed
    label = "all admitted" if not revoke_every else f"every {revoke_every}th revoked"
    calls: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        (
            "search",
            lambda: inner.search("hotel detail", top_k=10, filters=FILTERS),
            lambda: reader.search("hotel detail", top_k=10, filters=FILTERS),
        ),
        (
            "get_all",
            lambda: inner.get_all(top_k=20, filters=FILTERS),
            lambda: reader.get_all(top_k=20, filters=FILTERS),
        ),
    ]
    return [
        row(f"mem0 {name} ({label})", plain, wrapped, reads, repeat)
        for name, plain, wrapped in calls
    ]


def agents_row(items: int, reads: int, repeat: int) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="readmit-bench-agents-"))
    _, b = team(directory)
    inner = SQLiteSession("b", directory / "chat.db")
    session = ReadmitSession(inner, b)
    history: list[TResponseInputItem] = []
    for n in range(items):
        history.append({"role": "user", "content": f"question {n}"})
        history.append({"role": "assistant", "content": text(n)})
    asyncio.run(session.add_items(history))
    session.depart()
    asyncio.run(session.get_items())  # the return, not timed

    async def many(fn: Callable[[], Any]) -> None:
        for _ in range(reads):
            await fn()

    return {
        "read": f"agents get_items ({2 * items} items)",
        "inner_ms": best(lambda: asyncio.run(many(inner.get_items)), repeat) / reads * 1000,
        "wrapped_ms": best(lambda: asyncio.run(many(session.get_items)), repeat) / reads * 1000,
    }


def row(
    name: str, plain: Callable[[], object], wrapped: Callable[[], object], reads: int, repeat: int
) -> dict[str, Any]:
    def many(fn: Callable[[], object]) -> Callable[[], None]:
        def reads_of() -> None:
            for _ in range(reads):
                fn()

        return reads_of

    inner = best(many(plain), repeat) / reads * 1000
    through = best(many(wrapped), repeat) / reads * 1000
    return {"read": name, "inner_ms": inner, "wrapped_ms": through}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = [
        *mem0_rows(args.items, args.reads, args.repeat, None),
        *mem0_rows(args.items, args.reads, args.repeat, 4),
        agents_row(args.items, args.reads, args.repeat),
    ]
    for r in rows:
        r["ratio"] = round(r["wrapped_ms"] / r["inner_ms"], 3)
        r["inner_ms"], r["wrapped_ms"] = round(r["inner_ms"], 4), round(r["wrapped_ms"], 4)
        print(json.dumps(r))


if __name__ == "__main__":
    main()
