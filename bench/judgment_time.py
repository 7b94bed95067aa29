"""Benchmark: what a time budget on judging buys and costs, on one Memora return.

One return to the Memora persona in tests/data (its first episode's context, query and
policy, as `bench/return_time.py` builds them) is decided with ``--verifier`` under each
``max_judgment_seconds`` of ``--budgets`` (``none``: no time budget, the baseline, run in
the same process). For each it reports the return's wall time, the time spent waiting on
verifier calls, the calls, pairs and tokens, the items withheld as ``unscreened`` and the
items the view holds. Meant for a slow verifier (a model on a CPU): with the built-in
one, Memora's later turns are all news it is never shown, and nothing is judged.

With ``--returns N``, each budget instead runs N returns in a row on a store holding the
episode's history, the agent departing again between them with nothing new: the store
keeps how far each item was screened, so each return judges what the one before did not
reach, and the rows show how the view fills.

With ``--ahead``, the agent's return is first judged ahead (`readmit.ahead.judge_ahead`,
no time budget: nobody waits on it) on a store holding the episode's history, as
``readmit serve --judge-ahead`` does while the agent is away; the row "ahead" is that
judging, and the return after it is decided under each budget. ``--later K`` leaves the
history's last K events out of that judging and records them between it and the return,
as when a workspace goes on changing after the judge's last pass.

Usage: python bench/judgment_time.py --verifier chain:builtin,openai-compat:MODEL@URL \
    [--budgets 20,60,none] [--threshold 0.425] [--returns N | --ahead [--later K]]
"""

import argparse
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

from return_time import PERSONA, memora_returns

from readmit.admission import admit
from readmit.admission.decision import Decision, Issued
from readmit.admission.invalidation.judgment import Judgment
from readmit.ahead import judge_ahead
from readmit.bench.loaders import memora
from readmit.clock import parse_time
from readmit.decide import decide
from readmit.events import Event, ReturnRequest
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.replay import apply_steps
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store.sqlite import SQLiteStore

SIGNER = HmacSha256Signer(b"bench-judgment-time-key-0123456789")


def one_return(spec: str, policy: Policy) -> Iterator[tuple[Decision, float]]:
    """The first Memora return, decided on the context the other benchmarks use."""
    ctx, query, _ = memora_returns(PERSONA)[0]
    started = time.perf_counter()
    decision = admit(ctx, policy=policy, verifier=make_verifier(spec), signer=SIGNER, query=query)
    yield decision, time.perf_counter() - started


def returns_in_a_row(
    spec: str, policy: Policy, count: int, ahead: bool = False, later: int = 0
) -> Iterator[tuple[Decision | Judgment, float]]:
    """``count`` returns of the first episode's agent to a store of its history (after
    judging it ahead, first, if ``ahead``, without the last ``later`` events)."""
    episode = memora.episodes(PERSONA)[0]
    scenario = load_scenario(episode.scenario)
    store = SQLiteStore(":memory:")
    verifier = make_verifier(spec)
    cut = len(scenario.steps) - later
    tail = [s for s in scenario.steps[cut:] if isinstance(s, Event)]
    if len(tail) != later:
        raise SystemExit(f"the history's last {later} steps are not all events")
    try:
        apply_steps(replace(scenario, steps=scenario.steps[:cut]), store, on_return=None)
        at = parse_time(episode.scenario["events"][-1]["at"])
        query = " ".join(p.question for p in episode.probes) or episode.task
        if ahead:
            started = time.perf_counter()
            judgment = judge_ahead(
                store,
                scenario.workspace,
                episode.returner,
                task=episode.task,
                purpose=episode.purpose,
                policy=replace(policy, max_judgment_seconds=None),
                verifier=verifier,
                signer=SIGNER,
                at=at,
                query=query,
            )
            yield judgment, time.perf_counter() - started
        if tail:
            store.append(scenario.workspace, tail)
        for n in range(count):
            if n:
                store.depart(scenario.workspace, episode.returner, at + timedelta(minutes=2 * n))
            request = ReturnRequest(
                id=f"return-{n}",
                at=at + timedelta(minutes=2 * n + 1),
                agent=episode.returner,
                task=episode.task,
                purpose=episode.purpose,
            )
            started = time.perf_counter()
            decided = decide(
                store,
                scenario.workspace,
                request,
                policy=policy,
                verifier=verifier,
                signer=SIGNER,
                query=query,
            )
            yield decided.decision, time.perf_counter() - started
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verifier", default="builtin")
    parser.add_argument("--budgets", default="20,60,none", help="seconds, or none")
    parser.add_argument("--threshold", type=float, default=None, help="τ (default: the policy's)")
    parser.add_argument("--returns", type=int, default=0, help="returns in a row on a store")
    parser.add_argument("--ahead", action="store_true", help="judge ahead, then return")
    parser.add_argument("--later", type=int, default=0, help="events recorded after --ahead")
    args = parser.parse_args()
    policy = memora_returns(PERSONA)[0][2]
    if args.threshold is not None:
        policy = replace(policy, threshold=args.threshold)
    print("| time budget | return | wall | in calls | calls | pairs | tokens | unscreened | view |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for budget in args.budgets.split(","):
        limit = None if budget == "none" else float(budget)
        timed = replace(policy, max_judgment_seconds=limit)
        runs = (
            returns_in_a_row(args.verifier, timed, max(args.returns, 1), args.ahead, args.later)
            if args.returns or args.ahead
            else one_return(args.verifier, timed)
        )
        shown = "none" if limit is None else f"{limit:g} s"
        for n, (done, wall) in enumerate(runs, 0 if args.ahead else 1):
            j = done if isinstance(done, Judgment) else done.judgment
            view = (
                "–"
                if isinstance(done, Judgment)
                else f"{len(done.items) if isinstance(done, Issued) else 0} of "
                f"{timed.max_items} ({done.outcome})"
            )
            print(
                f"| {shown} | {n or 'ahead'} | {wall:.1f} s | {j.seconds:.1f} s | {j.calls} of "
                f"{j.max_calls} | {j.pairs} | {j.tokens:,} | {j.unscreened} | {view} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
