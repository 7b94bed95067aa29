"""Benchmark: one ``GET /v1/state`` page against the whole state, on one store, warm.

A workspace of N shared items (one author, every agent may read them) in a fresh SQLite
store, served in process (the FastAPI app through its test client, so the answer is
serialised and validated as on the wire). After a first call of each (the items decoded
once, as a running server has them), the best of ``--repeat`` calls of: the whole state
(every page of 10,000 followed from ``next``; run on a tree from before pages, the one
call that answered it all), and one page of 1,000 (the default), again at the same epoch;
then the best of the first page after each of ``--repeat`` writes (what the reader may read
is then made anew). Reports milliseconds and bytes, and the ratios of page to whole.

Usage:
    python bench/state.py                       # 100k items
    python bench/state.py --items 10000 --repeat 5
"""

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from readmit.events import Assert, ItemDraft
from readmit.model import Agent
from readmit.service.app import create_app
from readmit.service.keys import key_hash, new_key
from readmit.service.operations import Service
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

T0 = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/state.db")
        agents = [Agent(id="a1", principal="p", role="r"), Agent(id="a2", principal="p", role="w")]
        store.create_workspace("w", agents)
        for start in range(0, args.items, 1000):
            store.append(
                "w",
                [
                    Assert(
                        id=f"e{n}",
                        at=T0 + timedelta(milliseconds=n),
                        author="a2",
                        item=ItemDraft(
                            id=f"i{n:06}", text=f"Ticket T-{n} for svc{n % 97} is open."
                        ),
                    )
                    for n in range(start, min(start + 1000, args.items))
                ],
            )
        print(f"{args.items} items written", file=sys.stderr)
        signer = HmacSha256Signer(b"bench-state-signing-key-0123456789")
        service = Service(store, signer=signer, verifier=None)
        key = new_key()
        store.add_agent_key("w", "a1", key_hash(key), T0)
        with TestClient(create_app(service)) as client:
            headers = {"Authorization": f"Bearer {key}"}

            def whole() -> int:
                size, after = 0, None
                while True:
                    params = {"limit": 10_000} | ({"after": after} if after else {})
                    answer = client.get("/v1/state", params=params, headers=headers)
                    size += len(answer.content)
                    after = answer.json().get("next")  # none before pages: all at once
                    if after is None:
                        return size

            def page() -> int:
                return len(client.get("/v1/state", headers=headers).content)

            figures = {}
            for name, call in (("whole", whole), ("page", page)):
                size = call()  # decodes what it reads once
                best = min(_timed(call) for _ in range(args.repeat))
                figures[name] = (best, size)
            after_write = []  # the first page at a new epoch: what it may read is made anew
            for n in range(args.repeat):
                note = ItemDraft(id=f"new{n}", text=f"Note {n}.")
                at = T0 + timedelta(hours=1, seconds=n)
                store.append("w", [Assert(id=f"w{n}", at=at, author="a2", item=note)])
                after_write.append(_timed(page))
        store.close()
    (whole_s, whole_b), (page_s, page_b) = figures["whole"], figures["page"]
    print(f"items {args.items}: whole state {whole_s * 1e3:.0f} ms, {whole_b / 2**20:.1f} MiB;")
    print(f"one page of 1,000: {page_s * 1e3:.1f} ms, {page_b / 2**10:.0f} KiB;")
    print(f"the first page after a write: {min(after_write) * 1e3:.1f} ms;")
    print(f"page / whole: time x{page_s / whole_s:.3f}, bytes x{page_b / whole_b:.3f}")


def _timed(call: Callable[[], int]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
