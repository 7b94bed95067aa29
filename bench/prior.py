"""Benchmark: what a memory layer reads of the log before each return, against the return.

The Mem0 and Agents SDK wrappers remove what a return did not judge: another
principal's memories, and what was withdrawn before the departure
(`readmit.integrations.prior`). On `bench/admission.py`'s history (``--items`` items
before A1's departure, a 10% delta, SQLite), A1 returns through a `Member`, as every
integration does, then:

- first: a `Prior` (Mem0's, with memory versions) walks the log up to that return and
  names what it removes: what the first return of a process pays;
- next: after ``NEXT`` new events and another return, the same `Prior` again (it reads
  only those events) and, as the baseline, a new `Prior` walking the whole log, as every
  return did before it was kept.

Each is printed in ms and as a ratio to the return it follows, the median of
``--repeat`` next returns. Usage: python bench/prior.py [--items 100000] [--repeat 5]
"""

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from admission import NEXT, SIGNER, departed, history
from readmit.events import Assert, Event, ItemDraft
from readmit.integrations.mem0.ids import memory_of
from readmit.integrations.prior import Prior
from readmit.integrations.team import Member, Removal
from readmit.store import open_store


def named(prior: Prior, member: Member) -> list[Removal]:
    """What ``prior`` removes at ``member``'s latest return, as the Mem0 wrapper asks it,
    with the walk after the return it starts (`Prior.following`: what it knows carried over)."""
    decided = member.latest
    if decided is None:
        raise SystemExit("the member has not returned")
    prior.following(None, decided)
    return prior.removals(decided)


def seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="items before the departure")
    parser.add_argument("--repeat", type=int, default=5, help="next returns (median)")
    args = parser.parse_args()
    before, delta = history(args.items, 0.1)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp)}/prior.db"
        store = departed(url, before, delta, "prior")
        store.close()

        store = open_store(url)  # cold: nothing decoded in this process
        at = iter(delta[-1].at + timedelta(minutes=1, seconds=s) for s in range(10**6))
        member = Member(store, "ws", "A1", SIGNER, clock=lambda: next(at))
        returned = seconds(member.return_)
        kept = Prior(member, memory_of)
        first = seconds(lambda: named(kept, member))
        print(f"first return {returned * 1e3:.0f} ms; Prior {first * 1e3:.0f} ms "
              f"(x{first / returned:.2f} the return)")  # fmt: skip
        rows: dict[str, list[float]] = {"return": [], "kept": [], "whole log": []}
        for n in range(args.repeat):
            events: list[Event] = [
                Assert(id=f"zn{n}-{i}", at=next(at), author="A2",
                       item=ItemDraft(id=f"zn{n}-{i}", text=f"Ticket Z-{n}-{i} is open."))
                for i in range(NEXT)
            ]  # fmt: skip
            store.append("ws", events)
            store.depart("ws", "A1", next(at))
            rows["return"].append(seconds(member.return_))
            rows["kept"].append(seconds(lambda: named(kept, member)))
            rows["whole log"].append(seconds(lambda: named(Prior(member, memory_of), member)))
        store.close()
    back = statistics.median(rows["return"])
    print(f"next return (median of {args.repeat}) {back * 1e3:.1f} ms:")
    for name in ("kept", "whole log"):
        taken = statistics.median(rows[name])
        print(f"  Prior, {name}: {taken * 1e3:.1f} ms (x{taken / back:.3f} the return)")


if __name__ == "__main__":
    main()
