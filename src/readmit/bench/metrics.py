"""The paper's metrics as pure functions (TRACE appendix D.1), on proportions in [0, 1].

Every metric is evaluated per episode (per question on Memora) and then
averaged, so a metric that needs several judgments to hold is a conjunction
within one episode, never a product of marginal rates. Reports multiply by 100.
"""

from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean

DEFINED_IN = "docs/concepts.md#metrics"
"""Where the metrics are defined for a reader (with the paper's equations)."""

DEFINITIONS: dict[str, str] = {
    "VIA": "valid-information availability: share of episodes in which every piece of state "
    "still valid at the return was admitted (higher is better)",
    "IIR": "invalid-information rejection: share of episodes in which every piece of state "
    "that went stale during the absence was kept out (higher is better)",
    "WSAR": "wrong-state admission rate, 1 - IIR (lower is better)",
    "Overall": "the suite's answer accuracy (on STALE the mean of SR, PR and IPA); n/c when "
    "answering needs an LLM and none was given",
    "RSR": "reality shift rate, on conditions whose departure state is still right: share of "
    "questions answered right from the departure state but wrong after the return (lower "
    "is better)",
    "ms/return": "wall-clock time of one return decision",
    "verifier calls": "implicit-invalidation verifier calls per return",
    "LLM tokens": "tokens per return, split into the verifier's and the answering reader's",
}
"""One line per column of the benchmark tables, in plain words."""


def via(valid: Iterable[str], admitted: Iterable[str]) -> float:
    """Eq. 6 for one episode: 1 if all state still valid at return is available, else 0.

    An entry ``"a|b"`` is satisfied by either id (interchangeable copies of one state).
    """
    present = set(admitted)
    return 1.0 if all(present & set(v.split("|")) for v in valid) else 0.0


def iir(invalid: Iterable[str], admitted: Iterable[str]) -> float:
    """Eq. 7 for one episode: 1 if all state invalidated during the absence is withheld."""
    return 0.0 if set(invalid) & set(admitted) else 1.0


def wsar(iir_rate: float) -> float:
    """Eq. 8: the wrong-state admission rate, 1 − IIR."""
    return 1.0 - iir_rate


def mean(values: Sequence[float]) -> float:
    """The mean over episodes; an empty block has no score (``nan``)."""
    return fmean(values) if values else float("nan")


def stale_scores(s: Sequence[bool], p: Sequence[bool], i: Sequence[bool]) -> dict[str, float]:
    """STALE (eqs. 9-10) from per-episode probe judgments s (SR), p (PR), i (IPA).

    Overall = (SR + PR + IPA) / 3, VIA = IPA, IIR = mean(s ∧ p), LS = mean(s ∧ p ∧ i).
    """
    sr, pr, ipa = (
        mean([float(x) for x in s]),
        mean([float(x) for x in p]),
        mean([float(x) for x in i]),
    )
    return {
        "SR": sr,
        "PR": pr,
        "IPA": ipa,
        "Overall": (sr + pr + ipa) / 3,
        "VIA": ipa,
        "IIR": mean([float(a and b) for a, b in zip(s, p, strict=True)]),
        "LS": mean([float(a and b and c) for a, b, c in zip(s, p, i, strict=True)]),
    }


def memora_question(presence: Sequence[bool], forgetting: Sequence[bool]) -> dict[str, float]:
    """Memora per question (eqs. 11-13): P_q, F_q, w_q, pooled Overall_q and FAMA_q.

    ``presence`` holds the judgments of C^P_q, ``forgetting`` those of C^F_q; an empty
    criterion set scores 1 (nothing to get wrong).
    """
    n_p, n_f = len(presence), len(forgetting)
    p = mean([float(x) for x in presence]) if n_p else 1.0
    f = mean([float(x) for x in forgetting]) if n_f else 1.0
    w = n_f / (n_p + n_f) if n_p + n_f else 0.0
    return {
        "P": p,
        "F": f,
        "w": w,
        "Overall": (1 - w) * p + w * f,
        "FAMA": max(0.0, p - w * (1 - f)),
    }


def memora_scores(questions: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Memora over a question set: VIA = mean P_q, IIR = mean F_q, Overall and FAMA averaged."""
    return {
        "VIA": mean([q["P"] for q in questions]),
        "IIR": mean([q["F"] for q in questions]),
        "Overall": mean([q["Overall"] for q in questions]),
        "FAMA": mean([q["FAMA"] for q in questions]),
    }


def rsr(baseline_correct: Sequence[bool], final_correct: Sequence[bool]) -> float:
    """Reality Shift Rate (appendix E.4): |Q+_B ∩ Q−_R| / |Q+_B| on Old-Valid episodes."""
    base = [f for b, f in zip(baseline_correct, final_correct, strict=True) if b]
    return mean([0.0 if f else 1.0 for f in base])


def weighted(blocks: Mapping[str, float], weights: Mapping[str, float] | None = None) -> float:
    """Σ_k ω_k M_k / Σ_k ω_k over per-block scores; equal weights unless given (appendix D.1).

    Blocks without a score (``nan``) are left out rather than counted as zero.
    """
    scored = {k: v for k, v in blocks.items() if v == v}
    if not scored:
        return float("nan")
    w = {k: (weights or {}).get(k, 1.0) for k in scored}
    return sum(w[k] * v for k, v in scored.items()) / sum(w.values())
