"""Benchmark: judging a present agent's memory between returns, against a next return.

The memory layers follow withdrawals and stored verdicts between returns and do not judge
(`readmit.integrations.judging`). On `bench/admission.py`'s history (``--items`` items
before A1's departure, a 10% delta, SQLite), A1 returns through a `Member`; then, each of
``--repeat`` rounds, A2 states ``NEXT`` keyed items that replace earlier ones and `judge`
judges A1's latest return again (what an application calls between returns), and A2
states ``NEXT`` more and A1 departs and returns: the baseline, what A1 would otherwise do
to have them judged. Printed: `judge` with nothing new, and the medians of both with their
verifier calls and the ratio. Usage: python bench/judging_present.py [--items 100000]
[--repeat 5]
"""

import argparse
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from admission import NEXT, SIGNER, departed, history
from readmit.events import Assert, Event, ItemDraft
from readmit.integrations.judging import judge
from readmit.integrations.team import Member
from readmit.store import SqlStore

ROUNDS = itertools.count()


def replacements(store: SqlStore, items: int, clock: Callable[[], datetime]) -> None:
    """A2 states ``NEXT`` items under earlier items' keys, naming their services."""
    n = next(ROUNDS)
    events: list[Event] = []
    for i in range(NEXT):
        target = 3 * ((n * NEXT + i) * 7919 % (items // 3))  # every third item has a key
        text = f"Service svc{target % 97} moved to region eu-{i % 5}, round {n}."
        draft = ItemDraft(id=f"jp{n}-{i}", text=text, key=f"k{target}")
        events.append(Assert(id=f"jp{n}-{i}", at=clock(), author="A2", item=draft))
    store.append("ws", events)


def ticking(start: datetime) -> Callable[[], datetime]:
    """A clock a second later at each call, from ``start``."""
    at = [start]

    def tick() -> datetime:
        at[0] += timedelta(seconds=1)
        return at[0]

    return tick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="items before the departure")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (median)")
    args = parser.parse_args()
    before, delta = history(args.items, 0.1)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp)}/judging.db"
        store = departed(url, before, delta, "judging")
        clock = ticking(delta[-1].at + timedelta(minutes=1))
        member = Member(store, "ws", "A1", SIGNER, clock=clock)
        start = time.perf_counter()
        member.return_()
        print(f"first return {(time.perf_counter() - start) * 1e3:.0f} ms")
        start = time.perf_counter()
        quiet = judge(member)
        quiet_ms = (time.perf_counter() - start) * 1e3
        print(f"judge, nothing new: {quiet_ms:.1f} ms ({quiet.calls if quiet else 0} calls)")
        judged: list[tuple[float, int]] = []
        returned: list[tuple[float, int]] = []
        for _ in range(args.repeat):
            replacements(store, args.items, clock)
            start = time.perf_counter()
            judgment = judge(member)
            judged.append(((time.perf_counter() - start) * 1e3, judgment.calls if judgment else 0))
            replacements(store, args.items, clock)
            member.depart()
            start = time.perf_counter()
            decided = member.return_()
            calls = decided.decision.judgment.calls
            returned.append(((time.perf_counter() - start) * 1e3, calls))
        store.close()
    judge_ms = statistics.median(ms for ms, _ in judged)
    return_ms = statistics.median(ms for ms, _ in returned)
    print(f"after {NEXT} replacements (median of {args.repeat}):")
    print(f"  judge {judge_ms:.1f} ms, calls {[c for _, c in judged]}")
    print(f"  depart and return {return_ms:.1f} ms, calls {[c for _, c in returned]}")
    print(f"  judge / return: x{judge_ms / return_ms:.2f}")


if __name__ == "__main__":
    main()
