"""Benchmark: an agent's long history read back, a page against the whole, on one store.

An agent of a fresh SQLite store returns once for real; its decision record is then logged
again ``--decisions`` times (as a year of returns would leave it), and it remembers
``--memories`` memories. Served in process (the FastAPI app through its test client, so
each answer is serialised and validated as on the wire), the best of ``--repeat`` calls of:

- ``GET /v1/decisions`` whole (every page of 10,000 followed from ``next``; on a tree from
  before pages, the one call that answered it all) and one page (1,000, the default);
- ``GET /v1/decisions/N``, the latest decision explained;
- ``GET /v1/memories`` whole and one page, as for the decisions;
- in process, what the judge-ahead worker reads to learn whether an away agent's audit log
  grew: every summary (``len(store.decisions(...))``, before) against the count.

Reports milliseconds and bytes, and the ratios of page to whole.

Usage:
    python bench/history.py                            # 100k decisions, 20k memories
    python bench/history.py --decisions 10000 --memories 1000 --repeat 5
"""

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta

from fastapi.testclient import TestClient

from readmit.clock import now
from readmit.events import Assert, ItemDraft, RecordExperience
from readmit.model import Agent
from readmit.service.app import create_app
from readmit.service.keys import key_hash, new_key
from readmit.service.operations import Service
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store

T0 = now() - timedelta(days=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/history.db")
        signer = HmacSha256Signer(b"bench-history-signing-key-0123456789")
        service = Service(store, signer=signer, verifier=None)
        key = new_key()
        _history(store, service, key, args.decisions, args.memories)
        with TestClient(create_app(service)) as client:
            headers = {"Authorization": f"Bearer {key}"}

            def whole(path: str) -> Callable[[], int]:
                def call() -> int:
                    size, after = 0, None
                    while True:
                        params = {"limit": 10_000} | ({"after": after} if after else {})
                        answer = client.get(path, params=params, headers=headers)
                        answer.raise_for_status()
                        size += len(answer.content)
                        after = answer.json().get("next")  # none before pages: all at once
                        if after is None:
                            return size

                return call

            def one(path: str) -> Callable[[], int]:
                def call() -> int:
                    answer = client.get(path, headers=headers)
                    answer.raise_for_status()
                    return len(answer.content)

                return call

            calls = {
                "decisions, whole": whole("/v1/decisions"),
                "decisions, a page": one("/v1/decisions"),
                "the latest explained": one(f"/v1/decisions/{args.decisions + 1}"),
                "memories, whole": whole("/v1/memories"),
                "memories, a page": one("/v1/memories"),
            }
            figures = {name: _best(call, args.repeat) for name, call in calls.items()}
        figures["grown? every summary"] = _best(
            lambda: 0 * len(store.decisions("w", "a1")), args.repeat
        )
        if hasattr(store, "decision_count"):
            figures["grown? the count"] = _best(
                lambda: 0 * store.decision_count("w", "a1"), args.repeat
            )
        store.close()
    print(f"{args.decisions + 1} decisions, {args.memories} memories (best of {args.repeat}):")
    for name, (seconds, size) in figures.items():
        kib = f"{size / 2**10:10.0f} KiB" if size else ""  # in process: no answer to send
        print(f"  {name:22} {seconds * 1e3:9.1f} ms {kib}")
    for what in ("decisions", "memories"):
        (w_s, w_b), (p_s, p_b) = figures[f"{what}, whole"], figures[f"{what}, a page"]
        print(f"{what}: page / whole time x{p_s / w_s:.4f}, bytes x{p_b / w_b:.4f}")


def _history(store: SqlStore, service: Service, key: str, decisions: int, memories: int) -> None:
    """Agent a1's one real return, its record logged again ``decisions`` times, and
    ``memories`` memories of its own."""
    store.create_workspace("w", [Agent(id="a1", principal="p", role="r")])
    store.add_agent_key("w", "a1", key_hash(key), T0)
    fact = ItemDraft(id="f", text="Room 12 is free.")
    store.append("w", [Assert(id="e", at=T0, author="a1", item=fact)])
    caller = service.authenticate(key)
    service.depart(caller, None)  # at the server's time, as a return must be
    service.return_(caller, "keep rooms", "bookings")
    record = store.decision(1, "w")
    for n in range(decisions):
        at = T0 + timedelta(minutes=3, seconds=n)
        store.record_decision("w", "a1", at, 1, "issued", record)
        if n and n % 20_000 == 0:
            print(f"{n} decisions logged", file=sys.stderr)
    for n in range(memories):
        said = RecordExperience(
            id=f"m{n}", at=T0, agent="a1", experience_id=f"m{n:06}", text=f"I noted {n}.",
            source="f",
        )  # fmt: skip
        store.record_experience("w", said)
    print(f"{decisions + 1} decisions, {memories} memories written", file=sys.stderr)


def _best(call: Callable[[], int], repeat: int) -> tuple[float, int]:
    """The best time of ``repeat`` calls of ``call`` after a first, and what it returned."""
    size = call()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best, size


if __name__ == "__main__":
    main()
