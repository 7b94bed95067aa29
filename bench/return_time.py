"""Benchmark: TRACE's time per return as a ratio to Static's, on one suite, in one run.

Each episode's context is built once (outside the timing), then TRACE (built-in
verifier, the episode's own policy) and Static decide it alternately, each the best
of ``--repeat`` runs; the figure is the mean over the episodes of those bests, and the
ratio is TRACE's to Static's from the same run. The judgment issue's goal is ≤ 3× on
the Memora persona of tests/data.

A shared machine's speed drifts by more than the difference being measured, so
``--rounds N`` measures N rounds over all episodes and prints each round's ratio and
their median: within a round both methods ran under the same conditions.

Those are repeats of returns already decided once, which remembered passes serve.
``--first`` also times each context's first decision: each method in a process of its
own, which has decided nothing before (the methods share term caches, so one must not
warm them for the other). ``--processes`` such processes a method (3), alternating; each
context's best of them, then the mean over the episodes. On a busy machine three were not
enough to steady Static's figure (1.3–1.9 ms from one run to the next); eight were.

Usage: python bench/return_time.py [--persona DIR] [--repeat 5] [--rounds 1] [--first]
       [--processes 3]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from readmit.admission.context import ReturnContext
from readmit.bench.loaders import memora
from readmit.bench.methods import ReturnMethod, Static, Trace
from readmit.bench.runner import context
from readmit.bench.timing import best
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.scenario import load_scenario

PERSONA = Path(__file__).parent.parent / "tests/data/memora-sample/weekly/software_engineer"


def memora_returns(persona: Path) -> list[tuple[ReturnContext, str, Policy]]:
    """Each episode's context, query and policy, built once."""
    returns = []
    for episode in memora.episodes(persona):
        policy = load_scenario(episode.scenario).policy
        if episode.retrieve is not None:
            policy = replace(policy, max_items=episode.retrieve)
        query = " ".join(p.question for p in episode.probes) or episode.task
        returns.append((context(episode), query, policy))
    return returns


def _method(name: str) -> ReturnMethod:
    return Trace(make_verifier("builtin")) if name == "TRACE" else Static()


def first_decisions(persona: Path, processes: int = 3) -> dict[str, float]:
    """Mean milliseconds of each context's first decision, by method: each context's best
    over ``processes`` new processes a method, run alternating."""
    times: dict[str, list[list[float]]] = {"TRACE": [], "Static": []}
    for _ in range(processes):
        for name, runs in times.items():
            found = subprocess.run(
                [sys.executable, __file__, "--first-of", name, "--persona", str(persona)],
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(found.stdout))
    return {
        name: statistics.mean(map(min, zip(*runs, strict=True))) * 1e3
        for name, runs in times.items()
    }


def _first_of(name: str, persona: Path) -> None:
    """Print the seconds of each context's first decision by ``name`` (the child's part)."""
    method, times = _method(name), []
    for ctx, query, policy in memora_returns(persona):
        start = time.perf_counter()
        method.view(ctx, query, policy)
        times.append(time.perf_counter() - start)
    print(json.dumps(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persona", type=Path, default=PERSONA, help="a Memora persona folder")
    parser.add_argument("--repeat", type=int, default=5, help="runs per return (best of)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds over every episode")
    parser.add_argument("--first", action="store_true", help="also time first decisions")
    parser.add_argument(
        "--processes", type=int, default=3, help="new processes a method for --first (best of)"
    )
    parser.add_argument("--first-of", choices=["TRACE", "Static"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_of:
        _first_of(args.first_of, args.persona)
        return

    methods = [_method("TRACE"), _method("Static")]
    returns = memora_returns(args.persona)
    calls = sum(methods[0].view(*r).verifier_calls for r in returns)
    ratios: list[float] = []
    for _ in range(args.rounds):
        times: dict[str, list[float]] = {m.name: [] for m in methods}
        for ctx, query, policy in returns:
            for method in methods:
                view = partial(method.view, ctx, query, policy)
                times[method.name].append(best(view, args.repeat))
        trace, static = (statistics.mean(times[m.name]) * 1e3 for m in methods)
        ratios.append(trace / static)
        print(
            f"{len(returns)} returns, best of {args.repeat}: TRACE {trace:.2f} ms, "
            f"Static {static:.2f} ms, ratio {trace / static:.1f}x; "
            f"verifier calls per return {calls / len(returns):.1f}",
            flush=True,
        )
        if args.first:
            first = first_decisions(args.persona, args.processes)
            trace, static = first["TRACE"], first["Static"]
            print(
                f"  first decisions, best of {args.processes} new processes: "
                f"TRACE {trace:.2f} ms, "
                f"Static {static:.2f} ms, ratio {trace / static:.1f}x",
                flush=True,
            )
    if args.rounds > 1:
        print(f"median ratio over {args.rounds} rounds: {statistics.median(ratios):.1f}x")


if __name__ == "__main__":
    main()
