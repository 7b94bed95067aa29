"""Benchmark: what a time budget on judging buys and costs, on one Memora return.

One return to the Memora persona in tests/data (its first episode's context, query and
policy, as `bench/return_time.py` builds them) is decided with ``--verifier`` under each
``max_judgment_seconds`` of ``--budgets`` (``none``: no time budget, the baseline, run in
the same process). For each it reports the return's wall time, the time spent waiting on
verifier calls, the calls, pairs and tokens, the items withheld as ``unscreened`` and the
items the view holds. Meant for a slow verifier (a model on a CPU): with the built-in
one, Memora's later turns are all news it is never shown, and nothing is judged.

Usage: python bench/judgment_time.py --verifier chain:builtin,openai-compat:MODEL@URL \
    [--budgets 20,60,none] [--threshold 0.425]
"""

import argparse
import time
from dataclasses import replace

from return_time import PERSONA, memora_returns

from readmit.admission import admit
from readmit.admission.decision import Issued
from readmit.plugins import make_verifier
from readmit.signing import HmacSha256Signer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verifier", default="builtin")
    parser.add_argument("--budgets", default="20,60,none", help="seconds, or none")
    parser.add_argument("--threshold", type=float, default=None, help="τ (default: the policy's)")
    args = parser.parse_args()
    ctx, query, policy = memora_returns(PERSONA)[0]
    if args.threshold is not None:
        policy = replace(policy, threshold=args.threshold)
    print("| time budget | wall | in calls | calls | pairs | tokens | unscreened | view |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for budget in args.budgets.split(","):
        limit = None if budget == "none" else float(budget)
        verifier = make_verifier(args.verifier)
        started = time.perf_counter()
        decision = admit(
            ctx,
            policy=replace(policy, max_judgment_seconds=limit),
            verifier=verifier,
            signer=HmacSha256Signer(b"bench-judgment-time-key-0123456789"),
            query=query,
        )
        wall = time.perf_counter() - started
        j = decision.judgment
        view = len(decision.items) if isinstance(decision, Issued) else 0
        shown = "none" if limit is None else f"{limit:g} s"
        print(
            f"| {shown} | {wall:.1f} s | {j.seconds:.1f} s | {j.calls} of {j.max_calls} | "
            f"{j.pairs} | {j.tokens:,} | {j.unscreened} | {view} of {policy.max_items} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
