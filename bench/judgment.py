"""Benchmark: the implicit stage's work per return, against the same return without it.

A workspace of N items is written by one agent, which departs; teammates then
record a delta of D events: revocations, same-key replacements and news, whose
texts share names, ticket numbers and amounts with many items (the shape that
made proposals grow with Δ × items). The agent returns. For each (N, D) it
reports the verifier calls, the pairs judged, and the time of the return
(building C and ``admit()``) with the built-in verifier, next to the same
return with ``implicit: false`` measured in the same run (the baseline), and
their ratio.

The script uses only APIs that earlier releases also have, so the same command
measures an older checkout (``PYTHONPATH=OLD/src python bench/judgment.py``).

With ``--narrowed``, each of N / 2 keyed bookings is narrowed (given an end) in Δ, with a
pickup naming it before, and D keyed notes for another task after: what a verdict's
stand-in walk reads (stop 54).

With ``--kept``, each of N / 2 bookings has a pickup naming it; Δ revokes every booking
first, then holds D notes for another task. The return is timed as ``readmit serve``
decides it (the context, ``admit()`` and the decision recorded, each on a fresh
workspace), so it includes keeping each pickup's verdict, which looks for what restores
it after its evidence (`readmit.store.verdicts.remember`; before stop 55 it read the log
after its evidence once a verdict).

With ``--outside``, another principal writes N public items, a private item resting on
all of them, a private chain of D items on that one, and a public item on the chain's
end; the agent departs after, so the chain is premises outside its C, fanned in on N
items of C (a review's attack over HTTP: 3,000 and 8,000 made every return of the
workspace take 15.9 s before stop 55). Timed as ``--kept`` is.

With ``--chain``, N pickups name one keyed booking, replaced D times in Δ, each time
confirmed for a shorter time: a chain of stand-ins that each judged observation's walk
follows (before stop 56, each walk read the chain to its end; since stop 57 a return's walks
take at most `Policy.walk_steps` steps, and what they cannot follow is ``unscreened``).

With ``--long``, the shape a review sent over HTTP within the server's default limits:
items of 2,000 characters, then notes of 16,000, each revoked, all drawn from 4,000
capitalised made-up names, so every pair shares some two hundred names (``--sizes
100:100`` is that review's workspace: 23.7 s a return before stop 45).

Usage: python bench/judgment.py [--sizes 1000:500,1000:5000,5000:5000] [--repeat 3]
       [--long | --narrowed | --kept | --outside | --chain]
"""

import argparse
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from readmit.admission import admit
from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier
from readmit.bench.timing import best
from readmit.decide import decide
from readmit.events import Assert, Event, ItemDraft, ReturnRequest, Revoke
from readmit.model import Agent, Validity
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store.sqlite import SQLiteStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
AGENTS = [
    Agent(id="A1", principal="org", role="ops"),
    *(Agent(id=f"T{n}", principal="org", role="ops") for n in range(1, 5)),
]
NAMES = ["Atlas", "Borealis", "Cobalt", "Dune", "Ember", "Fjord", "Gale", "Harbor"]


class Counting:
    """Counts the calls and pairs that reach the verifier."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.pairs = 0

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.calls += 1
        self.pairs += len(pairs)
        return self.inner.judge(pairs)


def text(n: int) -> str:
    name = NAMES[n % len(NAMES)]
    return f"Project {name} ticket INC-{n % 50} owner is team {n % 7}, budget ${100 + n % 30}."


def workspace(items: int, delta: int) -> tuple[SQLiteStore, ReturnRequest]:
    at = iter(T0 + timedelta(seconds=i) for i in range(10 * (items + delta) + 10))
    store = SQLiteStore(":memory:")
    store.create_workspace("w", AGENTS)
    before: list[Event] = [
        Assert(
            id=f"a{n}",
            at=next(at),
            author="A1",
            item=ItemDraft(id=f"i{n}", text=text(n), key=f"k{n}" if n % 3 == 0 else None),
        )
        for n in range(items)
    ]
    store.append("w", before)
    store.depart("w", "A1", next(at))
    later: list[Event] = []
    for n in range(delta):
        author = f"T{1 + n % 4}"
        target = (n * 7919) % items
        if n % 3 == 0 and f"i{target}" not in {e.target for e in later if isinstance(e, Revoke)}:
            later.append(
                Revoke(id=f"r{n}", at=next(at), author=author, target=f"i{target}", why="done")
            )
        else:
            later.append(
                Assert(
                    id=f"b{n}",
                    at=next(at),
                    author=author,
                    item=ItemDraft(id=f"n{n}", text=f"News {n}: {text(n * 13)}"),
                )
            )
    store.append("w", later)
    request = ReturnRequest(
        id="ret", at=next(at) + timedelta(minutes=5), agent="A1", task="t", purpose="p"
    )
    return store, request


WORDS = [f"Zed{i}x" for i in range(4000)]


def long_text(seed: int, chars: int) -> str:
    picked = random.Random(seed)
    words = " ".join(picked.choice(WORDS) for _ in range(chars // 7))
    return words[:chars].rsplit(" ", 1)[0] + "."


def long_workspace(items: int, delta: int) -> tuple[SQLiteStore, ReturnRequest]:
    """``items`` texts of 2,000 characters; then ``delta`` notes of 16,000, each revoked."""
    at = iter(T0 + timedelta(seconds=i) for i in range(items + 2 * delta + 10))
    store = SQLiteStore(":memory:")
    store.create_workspace("w", AGENTS)
    store.append(
        "w",
        [
            Assert(id=f"a{n}", at=next(at), author="T1",
                   item=ItemDraft(id=f"i{n}", text=long_text(n, 2000)))
            for n in range(items)
        ],
    )  # fmt: skip
    store.depart("w", "A1", next(at))
    notes: list[Event] = [
        Assert(id=f"b{n}", at=next(at), author="T1",
               item=ItemDraft(id=f"n{n}", text=long_text(items + n, 16000)))
        for n in range(delta)
    ]  # fmt: skip
    store.append("w", notes)
    revokes: list[Event] = [
        Revoke(id=f"r{n}", at=next(at), author="T1", target=f"n{n}", why="x") for n in range(delta)
    ]
    store.append("w", revokes)
    return store, ReturnRequest(id="ret", at=next(at), agent="A1", task="t", purpose="p")


def narrowed_workspace(items: int, delta: int) -> tuple[SQLiteStore, ReturnRequest]:
    """``items`` / 2 keyed bookings, each with a pickup naming it; then each booking narrowed
    (an end) in Δ, and ``delta`` keyed notes for another task after them: a verdict's
    stand-in walk (`readmit.admission.invalidation.narrowed.follow`) reads each of those."""
    at = iter(T0 + timedelta(seconds=i) for i in range(2 * items + delta + 10))
    store = SQLiteStore(":memory:")
    store.create_workspace("w", AGENTS)
    pairs = items // 2
    held: list[Event] = []
    for n in range(pairs):
        room = f"R{n}X at {NAMES[n % len(NAMES)]} Hotel"
        held += [
            Assert(id=f"a{n}", at=next(at), author="T1",
                   item=ItemDraft(id=f"h{n}", text=f"Room {room} is booked.", key=f"room{n}")),
            Assert(id=f"p{n}", at=next(at), author="T1",
                   item=ItemDraft(id=f"i{n}", text=f"Pickup for room {room}.")),
        ]  # fmt: skip
    store.append("w", held)
    store.depart("w", "A1", next(at))
    until = Validity(valid_to=T0 + timedelta(days=30))
    later: list[Event] = [
        Assert(id=f"b{n}", at=next(at), author="T2",
               item=ItemDraft(id=f"n{n}", text=f"The booking of room R{n}X is confirmed.",
                              key=f"room{n}", validity=until))
        for n in range(pairs)
    ]  # fmt: skip
    later += [
        Assert(id=f"c{n}", at=next(at), author="T3",
               item=ItemDraft(id=f"x{n}", text=f"Note {n}.", key=f"x{n}", task="other"))
        for n in range(delta)
    ]  # fmt: skip
    store.append("w", later)
    return store, ReturnRequest(id="ret", at=next(at), agent="A1", task="t", purpose="p")


def chain_workspace(items: int, delta: int) -> tuple[SQLiteStore, ReturnRequest]:
    """One keyed booking with ``items`` pickups naming it; in Δ, ``delta`` replacements of
    the booking, each confirmed for a shorter time (``--chain``)."""
    at = iter(T0 + timedelta(seconds=i) for i in range(items + delta + 10))
    store = SQLiteStore(":memory:")
    store.create_workspace("w", AGENTS)
    room = "R0X at Atlas Hotel"
    held: list[Event] = [
        Assert(id="a0", at=next(at), author="T1",
               item=ItemDraft(id="h0", text=f"Room {room} is booked.", key="room0"))
    ]  # fmt: skip
    held += [
        Assert(id=f"p{n}", at=next(at), author="T1",
               item=ItemDraft(id=f"i{n}", text=f"Pickup {n} for room {room}."))
        for n in range(items)
    ]  # fmt: skip
    store.append("w", held)
    store.depart("w", "A1", next(at))
    end = T0 + timedelta(days=30)
    later: list[Event] = [
        Assert(id=f"b{n}", at=next(at), author="T2",
               item=ItemDraft(id=f"n{n}", text=f"The booking of room R0X is confirmed ({n}).",
                              key="room0", validity=Validity(valid_to=end - timedelta(minutes=n))))
        for n in range(delta)
    ]  # fmt: skip
    for start in range(0, len(later), 1000):
        store.append("w", later[start : start + 1000])
    return store, ReturnRequest(id="ret", at=next(at), agent="A1", task="t", purpose="p")


def kept_workspace(items: int, delta: int) -> tuple[SQLiteStore, ReturnRequest]:
    """``items`` / 2 bookings, each with a pickup naming it; each booking revoked at the
    start of Δ, then ``delta`` notes for another task (``--kept``)."""
    at = iter(T0 + timedelta(seconds=i) for i in range(2 * items + delta + 10))
    store = SQLiteStore(":memory:")
    store.create_workspace("w", AGENTS)
    held: list[Event] = []
    for n in range(items // 2):
        room = f"R{n}X at {NAMES[n % len(NAMES)]} Hotel"
        held += [
            Assert(id=f"a{n}", at=next(at), author="T1",
                   item=ItemDraft(id=f"h{n}", text=f"Room {room} is booked.")),
            Assert(id=f"p{n}", at=next(at), author="T1",
                   item=ItemDraft(id=f"i{n}", text=f"Pickup for room {room}.")),
        ]  # fmt: skip
    store.append("w", held)
    store.depart("w", "A1", next(at))
    later: list[Event] = [
        Revoke(id=f"r{n}", at=next(at), author="T2", target=f"h{n}", why="cancelled")
        for n in range(items // 2)
    ]
    later += [
        Assert(id=f"c{n}", at=next(at), author="T3",
               item=ItemDraft(id=f"x{n}", text=f"Note {n}.", task="other"))
        for n in range(delta)
    ]  # fmt: skip
    for start in range(0, len(later), 1000):
        store.append("w", later[start : start + 1000])
    return store, ReturnRequest(id="ret", at=next(at), agent="A1", task="t", purpose="p")


def outside_workspace(items: int, delta: int) -> tuple[SQLiteStore, ReturnRequest]:
    """``items`` public items, a private one resting on all, a private chain of ``delta``
    on it and a public item on the chain's end (``--outside``); one note after the
    departure."""
    at = iter(T0 + timedelta(seconds=i) for i in range(10))
    store = SQLiteStore(":memory:")
    store.create_workspace("w", [*AGENTS, Agent(id="Z1", principal="other", role="ops")])
    public = frozenset({"*"})
    made: list[Event] = [
        Assert(id=f"b{n}", at=T0, author="Z1",
               item=ItemDraft(id=f"b{n}", text=f"Public fact {n} about the depot.",
                              principals=public))
        for n in range(items)
    ]  # fmt: skip
    root = ItemDraft(
        id="p0", text="Private root.", depends_on=frozenset(f"b{n}" for n in range(items))
    )
    made.append(Assert(id="p0", at=T0, author="Z1", item=root))
    made += [
        Assert(id=f"p{n}", at=T0, author="Z1",
               item=ItemDraft(id=f"p{n}", text=f"Private step {n}.",
                              depends_on=frozenset({f"p{n - 1}"})))
        for n in range(1, delta + 1)
    ]  # fmt: skip
    made.append(Assert(id="top", at=T0, author="Z1", item=ItemDraft(
        id="top", text="Public conclusion on the depot.", principals=public,
        depends_on=frozenset({f"p{delta}"}))))  # fmt: skip
    for start in range(0, len(made), 1000):
        store.append("w", made[start : start + 1000])
    store.depart("w", "A1", next(at))
    note = ItemDraft(id="note", text="A note.", task="other")
    store.append("w", [Assert(id="note", at=next(at), author="T1", item=note)])
    return store, ReturnRequest(id="ret", at=next(at), agent="A1", task="t", purpose="p")


Workspace = Callable[[int, int], tuple[SQLiteStore, ReturnRequest]]


def measure(items: int, delta: int, repeat: int, made: Workspace = workspace) -> dict[str, float]:
    store, request = made(items, delta)
    signer = HmacSha256Signer(b"bench-judgment-key-0123456789")
    policy = Policy(max_items=32, max_chars=8192)
    off = replace(policy, implicit=False)
    verifier = Counting(make_verifier("builtin"))

    def once(chosen: Policy) -> int:
        ctx = store.return_context("w", request)
        return admit(ctx, policy=chosen, verifier=verifier, signer=signer).judgment.unscreened

    unscreened = once(policy)  # warm: items decoded once per store, as on a server
    calls, pairs = verifier.calls, verifier.pairs
    with_implicit = best(lambda: once(policy), repeat)
    without = best(lambda: once(off), repeat)
    store.close()
    return {
        "calls": calls,
        "pairs": pairs,
        "unscreened": unscreened,
        "ms": with_implicit * 1000,
        "baseline_ms": without * 1000,
    }


def measure_fresh(items: int, delta: int, repeat: int, made: Workspace) -> dict[str, float]:
    """``decide`` on fresh ``made`` stores (for ``kept_workspace``, the first return keeps
    the verdicts), best of ``repeat``, against the same with ``implicit: false``."""
    signer = HmacSha256Signer(b"bench-judgment-key-0123456789")
    policy = Policy(max_items=32, max_chars=8192)
    off = replace(policy, implicit=False)
    verifier = Counting(make_verifier("builtin"))

    def once(chosen: Policy) -> tuple[float, int]:
        """The seconds ``decide`` took, and what it left unscreened."""
        store, request = made(items, delta)
        start = time.perf_counter()
        done = decide(store, "w", request, policy=chosen, verifier=verifier, signer=signer)
        spent = time.perf_counter() - start
        store.close()
        return spent, done.decision.judgment.unscreened

    with_implicit, withheld = once(policy)
    calls, pairs = verifier.calls, verifier.pairs
    with_implicit = min([with_implicit] + [once(policy)[0] for _ in range(repeat - 1)])
    without = min(once(off)[0] for _ in range(repeat))
    return {
        "calls": calls,
        "pairs": pairs,
        "unscreened": withheld,
        "ms": with_implicit * 1000,
        "baseline_ms": without * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000:500,1000:5000,5000:5000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--long", action="store_true", help="long texts sharing many names")
    parser.add_argument(
        "--narrowed", action="store_true", help="bookings narrowed, then keyed notes after them"
    )
    parser.add_argument(
        "--kept", action="store_true", help="verdicts kept early in a long delta (decide)"
    )
    parser.add_argument(
        "--outside", action="store_true", help="a private chain fanned in on N items (decide)"
    )
    parser.add_argument(
        "--chain", action="store_true", help="N pickups on a booking replaced D times"
    )
    args = parser.parse_args()
    shapes: dict[str, Workspace] = {"long": long_workspace, "narrowed": narrowed_workspace}
    shapes |= {"kept": kept_workspace, "outside": outside_workspace, "chain": chain_workspace}
    shape = next((made for name, made in shapes.items() if getattr(args, name)), workspace)
    print(
        "| items | delta | verifier calls | pairs | unscreened | return ms | implicit off ms "
        "| ratio |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes.split(","):
        items, delta = (int(x) for x in size.split(":"))
        if args.kept or args.outside:
            r = measure_fresh(items, delta, args.repeat, shape)
        else:
            r = measure(items, delta, args.repeat, shape)
        print(
            f"| {items} | {delta} | {r['calls']:.0f} | {r['pairs']:.0f} | {r['unscreened']:.0f} "
            f"| {r['ms']:.0f} "
            f"| {r['baseline_ms']:.0f} | {r['ms'] / r['baseline_ms']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
