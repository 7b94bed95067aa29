"""Benchmark: TRACE's time per return as a ratio to Static's, on one suite, in one run.

Each episode's context is built once (outside the timing), then TRACE (built-in
verifier, the episode's own policy) and Static decide it alternately, each the best
of ``--repeat`` runs; the figure is the mean over the episodes of those bests, and the
ratio is TRACE's to Static's from the same run. The judgment issue's goal is ≤ 3× on
the Memora persona of tests/data.

A shared machine's speed drifts by more than the difference being measured, so
``--rounds N`` measures N rounds over all episodes and prints each round's ratio and
their median: within a round both methods ran under the same conditions.

Usage: python bench/return_time.py [--persona DIR] [--repeat 5] [--rounds 1]
"""

import argparse
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persona", type=Path, default=PERSONA, help="a Memora persona folder")
    parser.add_argument("--repeat", type=int, default=5, help="runs per return (best of)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds over every episode")
    args = parser.parse_args()

    methods: list[ReturnMethod] = [Trace(make_verifier("builtin")), Static()]
    calls = 0
    returns: list[tuple[ReturnContext, str, Policy]] = []
    for episode in memora.episodes(args.persona):
        policy = load_scenario(episode.scenario).policy
        if episode.retrieve is not None:
            policy = replace(policy, max_items=episode.retrieve)
        query = " ".join(p.question for p in episode.probes) or episode.task
        returns.append((context(episode), query, policy))
        calls += methods[0].view(*returns[-1]).verifier_calls
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
    if args.rounds > 1:
        print(f"median ratio over {args.rounds} rounds: {statistics.median(ratios):.1f}x")


if __name__ == "__main__":
    main()
