"""A model verifier's cut-off, chosen on labeled pairs: the P(yes) at which it says "invalidates".

A model's P(yes) is not a probability anyone calibrated: the 1.5B model of
``docs/results-verifiers.md`` gives premise changes 0.34-0.48, under the default cut-off
of 0.5. `calibrate` judges labeled pairs with the cut-off at 0, so every verdict carries
P(yes) as its confidence, and picks the cut-off of maximum F1 (ties: the one nearest the
policy's default τ). A return confirms an invalidation when the verdict says so and its
confidence reaches τ (`readmit.admission.invalidation.implicit.confirms`), so the cut-off
serves both as ``READMIT_VERIFIER_DECIDE_AT`` and as the policy's ``threshold``.

`readmit verifiers calibrate` and ``bench/verifiers.py`` both use it.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from readmit.admission.invalidation.implicit import Verdict, Verifier, confirms
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.policy import Policy
from readmit.verifiers.pairs import SPLITS, LabeledPair

DEFAULT_THRESHOLD = Policy().threshold
"""τ when a policy sets none; among cut-offs of equal F1, the nearest to it wins."""


@dataclass(frozen=True, slots=True)
class Scores:
    """How verdicts at one cut-off compare with the labels."""

    precision: float
    recall: float
    f1: float
    unavailable: int
    """Pairs with no verdict (the verifier failed) or an abstention: counted as "no"."""


def scores(
    labeled: Sequence[LabeledPair], verdicts: Sequence[Verdict | None], threshold: float
) -> Scores:
    """Precision, recall and F1 of "invalidates" at ``threshold`` (τ)."""
    said = [confirms(v, threshold) for v in verdicts]
    truth = [p.invalidates for p in labeled]
    tp = sum(s and t for s, t in zip(said, truth, strict=True))
    fp = sum(s and not t for s, t in zip(said, truth, strict=True))
    fn = sum(t and not s for s, t in zip(said, truth, strict=True))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    unavailable = sum(v is None or v.abstained for v in verdicts)
    return Scores(precision, recall, f1, unavailable)


def best_threshold(
    labeled: Sequence[LabeledPair],
    verdicts: Sequence[Verdict | None],
    default: float = DEFAULT_THRESHOLD,
) -> float:
    """The cut-off of maximum F1 among the verdicts' confidences (and ``default``)."""
    candidates = sorted({round(v.confidence, 3) for v in verdicts if v is not None} | {default})
    return max(candidates, key=lambda t: (scores(labeled, verdicts, t).f1, -abs(t - default)))


def judge_each(
    verifier: Verifier,
    labeled: Sequence[LabeledPair],
    done: Callable[[int], None] | None = None,
) -> list[Verdict | None]:
    """Each pair's verdict, judged one pair a call; ``None`` where the verifier failed.

    ``done`` is told after each pair (a progress bar).
    """
    verdicts: list[Verdict | None] = []
    for p in labeled:
        try:
            verdicts.append(verifier.judge([p.pair])[0])
        except VerifierUnavailable:
            verdicts.append(None)  # fail closed: no claim, counted as unavailable
        if done is not None:
            done(1)
    return verdicts


@runtime_checkable
class CutOff(Protocol):
    """A model verifier: it says "invalidates" from P(yes) >= ``decide_at``.

    `readmit.verifiers.openai_compat.OpenAICompatVerifier` is one (``gguf:`` too).
    """

    decide_at: float
    explain: bool


def cut_offs(verifier: Verifier) -> list[CutOff]:
    """The model verifiers whose ``decide_at`` sets ``verifier``'s verdicts (a chain's second).

    Found by their attributes, so that this module (and the CLI) does not import the HTTP
    client a library-only install lacks.
    """
    found = (verifier, getattr(verifier, "second", None))
    return [v for v in found if isinstance(v, CutOff)]


@dataclass(frozen=True, slots=True)
class Calibration:
    """A cut-off chosen on one split of labeled pairs, and every split scored at it."""

    threshold: float
    chosen_on: str | None
    """The split the cut-off was chosen on; ``None``: every pair (a file without splits)."""
    splits: dict[str | None, tuple[Sequence[LabeledPair], Scores]]
    """Each split's pairs and scores at ``threshold``, the chosen split first."""
    said: frozenset[str]
    """The ids of the pairs said to invalidate at ``threshold``."""
    unavailable: tuple[LabeledPair, ...]
    """Pairs the verifier could not judge (failed or abstained)."""


def calibrate(
    verifier: Verifier,
    labeled: Sequence[LabeledPair],
    split: str = "tune",
    done: Callable[[int], None] | None = None,
) -> Calibration:
    """Judge every pair with the cut-off at 0; choose it on ``split`` and score each split.

    A file without splits is one split, chosen on and scored in-sample. The verifier's
    own cut-offs are put back afterwards.

    Raises:
        ConfigError: if ``verifier`` has no cut-off, or no pair belongs to ``split``.
    """
    models = cut_offs(verifier)
    if not models:
        raise ConfigError(
            f"{verifier.name} has no cut-off to calibrate: only a model verifier has one "
            "(openai-compat:MODEL@URL, gguf:PATH, or a chain ending in one)"
        )
    chosen_on = split if any(p.split is not None for p in labeled) else None
    groups = {s: [p for p in labeled if p.split == s] for s in (chosen_on, *SPLITS, None)}
    if not groups[chosen_on]:
        raise ConfigError(f"no pair of the split {split!r} to calibrate on")
    kept = [m.decide_at for m in models]
    for model in models:
        model.decide_at = 0.0  # every verdict says "invalidates", with P(yes)
    try:
        judged = judge_each(verifier, labeled, done)
    finally:
        for model, decide_at in zip(models, kept, strict=True):
            model.decide_at = decide_at
    verdicts = {p.id: v for p, v in zip(labeled, judged, strict=True)}  # ids are unique
    said = [verdicts[p.id] for p in groups[chosen_on]]
    threshold = best_threshold(groups[chosen_on], said)
    return Calibration(
        threshold=threshold,
        chosen_on=chosen_on,
        splits={
            s: (pairs, scores(pairs, [verdicts[p.id] for p in pairs], threshold))
            for s, pairs in groups.items()
            if pairs
        },
        said=frozenset(i for i, v in verdicts.items() if confirms(v, threshold)),
        unavailable=tuple(
            p for p, v in zip(labeled, judged, strict=True) if v is None or v.abstained
        ),
    )
