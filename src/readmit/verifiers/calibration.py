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

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from readmit.admission.invalidation.implicit import Verdict, Verifier, confirms
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.policy import Policy
from readmit.verifiers.pairs import LabeledPair

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
    """The cut-off of maximum F1 among the verdicts' confidences (and ``default``).

    Each confidence is rounded down to three decimals, so the cut-off printed is the one
    scored and still admits the verdict it came from.
    """
    found = {math.floor(v.confidence * 1000 + 1e-9) / 1000 for v in verdicts if v is not None}
    candidates = sorted(found | {default})
    return max(candidates, key=lambda t: (scores(labeled, verdicts, t).f1, -abs(t - default)))


def judge_each(
    verifier: Verifier,
    labeled: Sequence[LabeledPair],
    done: Callable[[int], None] | None = None,
    why: dict[str, str] | None = None,
    give_up_after: int = 0,
) -> list[Verdict | None]:
    """Each pair's verdict, judged one pair a call; ``None`` where the verifier failed.

    ``done`` is told after each pair (a progress bar); ``why`` gets each failed pair's
    reason, by its id.

    Raises:
        VerifierUnavailable: if the first ``give_up_after`` pairs (0: never) all failed: a
            server that answers nothing is said at once, with its reason, rather than after
            every pair of the file has failed in turn.
    """
    verdicts: list[Verdict | None] = []
    for p in labeled:
        try:
            verdicts.append(verifier.judge([p.pair])[0])
        except VerifierUnavailable as exc:
            verdicts.append(None)  # fail closed: no claim, counted as unavailable
            if why is not None:
                why[p.id] = str(exc)
            if len(verdicts) == give_up_after and all(v is None for v in verdicts):
                raise VerifierUnavailable(
                    f"no answer to any of the first {give_up_after} pairs: {exc}"
                ) from exc
        if done is not None:
            done(1)
    return verdicts


GIVE_UP_AFTER = 3
"""Pairs `calibrate` judges before it stops, if the verifier answered none of them."""


@runtime_checkable
class CutOff(Protocol):
    """A model verifier: it says "invalidates" from P(yes) >= ``decide_at``.

    `readmit.verifiers.openai_compat.OpenAICompatVerifier` is one (``gguf:`` too).
    """

    decide_at: float
    explain: bool
    mode: str
    """``token`` while the server gives log-probabilities; ``decide_at`` applies only then."""


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
    """Each split's pairs (``None``: those without one) and scores at ``threshold``, the
    chosen split first."""
    said: tuple[bool, ...]
    """For each pair, in order, whether it was said to invalidate at ``threshold``."""
    unavailable: tuple[LabeledPair, ...]
    """Pairs the verifier could not judge (failed or abstained): if any, ``threshold`` was
    chosen without them, and not to be used."""
    why: Mapping[str, str] = field(default_factory=dict)
    """Why the verifier failed on each pair it could not judge, by id (none: it abstained)."""


def model_of(verifier: Verifier) -> CutOff:
    """The model ``verifier`` judges with, whose cut-off a calibration sets.

    Raises:
        ConfigError: if it has none, or if a chain's first part has one too (one setting,
            ``READMIT_VERIFIER_DECIDE_AT``, would move both).
    """
    models = cut_offs(verifier)
    if not models:
        raise ConfigError(
            f"{verifier.name} has no cut-off to calibrate: only a model verifier has one "
            "(openai-compat:MODEL@URL, gguf:PATH, or chain:builtin,MODEL-SPEC)"
        )
    if isinstance(getattr(verifier, "first", None), CutOff):
        raise ConfigError(f"{verifier.name}: calibrate one model at a time (chain:builtin,...)")
    return models[0]


def split_of(labeled: Sequence[LabeledPair], split: str | None) -> str | None:
    """The split to choose the cut-off on: ``split``, ``tune`` if not given.

    ``None`` for pairs without splits: then every pair counts.

    Raises:
        ConfigError: if there are no pairs, a split is named for a file without splits, or
            the chosen pairs lack a pair that invalidates or one that does not.
    """
    if not labeled:
        raise ConfigError("no pairs to calibrate on")
    has_splits = any(p.split is not None for p in labeled)
    if split is not None and not has_splits:
        raise ConfigError(f"the pairs have no splits: leave out the split {split!r}")
    chosen_on = (split or "tune") if has_splits else None
    chosen = [p for p in labeled if p.split == chosen_on]
    if not chosen:
        raise ConfigError(f"no pair of the split {chosen_on!r} to calibrate on")
    if all(p.invalidates for p in chosen) or not any(p.invalidates for p in chosen):
        where = "the pairs" if chosen_on is None else f"the split {chosen_on!r}"
        raise ConfigError(
            f"{where} must hold pairs that invalidate and pairs that do not: "
            "a cut-off cannot be chosen on one kind alone"
        )
    return chosen_on


def calibrate(
    verifier: Verifier,
    labeled: Sequence[LabeledPair],
    split: str | None = None,
    done: Callable[[int], None] | None = None,
) -> Calibration:
    """Judge every pair with the cut-off at 0; choose it on ``split`` and score each split.

    The verifier's own cut-off is put back afterwards.

    Raises:
        ConfigError: from `model_of` and `split_of`, before any pair is judged; or if every
            pair was judged but the server gave no log-probabilities, so that no cut-off
            applies to its verdicts.
        VerifierUnavailable: if it answered none of the first `GIVE_UP_AFTER` pairs.
    """
    model = model_of(verifier)
    chosen_on = split_of(labeled, split)
    kept, model.decide_at = model.decide_at, 0.0  # every verdict says "invalidates", with P(yes)
    try:
        why: dict[str, str] = {}
        judged = judge_each(verifier, labeled, done, why, GIVE_UP_AFTER)
    finally:
        model.decide_at = kept
    missing = tuple(p for p, v in zip(labeled, judged, strict=True) if v is None or v.abstained)
    if not missing and model.mode != "token":
        raise ConfigError(
            f"{verifier.name}: the server gave no log-probabilities, so verdicts carry no "
            "P(yes) and no cut-off applies to them"
        )
    groups: dict[str | None, list[int]] = {chosen_on: []}  # the chosen split first
    for n, p in enumerate(labeled):
        groups.setdefault(p.split, []).append(n)
    chosen = groups[chosen_on]
    threshold = best_threshold([labeled[n] for n in chosen], [judged[n] for n in chosen])
    splits: dict[str | None, tuple[Sequence[LabeledPair], Scores]] = {}
    for name, members in groups.items():
        pairs = [labeled[n] for n in members]
        splits[name] = (pairs, scores(pairs, [judged[n] for n in members], threshold))
    return Calibration(
        threshold=threshold,
        chosen_on=chosen_on,
        splits=splits,
        said=tuple(confirms(v, threshold) for v in judged),
        unavailable=missing,
        why=why,
    )
