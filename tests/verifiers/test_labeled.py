"""The labeled pair set: its shape, its splits, and the built-in verifier's floor on it."""

from collections import Counter
from pathlib import Path

from readmit.verifiers.builtin import TermVerifier
from readmit.verifiers.pairs import KINDS, POSITIVE, SPLITS, load_pairs

LABELED = Path(__file__).parents[2] / "bench" / "data" / "labeled_pairs.json"
PAIRS = load_pairs(LABELED)
FRESH_FROM = 4
"""Templates at this index and after were written after tuning: every pair is ``fresh``."""


def test_at_least_300_pairs_over_six_domains_with_every_kind() -> None:
    by_domain = Counter((p.domain, p.kind) for p in PAIRS)

    assert len(PAIRS) >= 300
    assert len({p.domain for p in PAIRS}) >= 6
    assert all(by_domain[(d, k)] > 0 for d in {p.domain for p in PAIRS} for k in KINDS)
    assert len({p.id for p in PAIRS}) == len(PAIRS)
    assert all(p.invalidates == (p.kind in POSITIVE) for p in PAIRS)


def test_fresh_templates_never_reach_the_tune_split() -> None:
    template = {p.id: int(p.id.split("/")[1]) for p in PAIRS}

    assert {p.split for p in PAIRS} == set(SPLITS)
    assert all((p.split == "fresh") == (template[p.id] >= FRESH_FROM) for p in PAIRS)
    tuned = [p for p in PAIRS if p.split != "fresh"]
    held = sum(p.split == "held_out" for p in tuned) / len(tuned)
    assert 0.2 < held < 0.4


def test_withdrawals_come_as_revocations_and_replacements() -> None:
    ops = Counter((p.kind, p.pair.later.op) for p in PAIRS)

    assert ops[("withdrawn_reference", "revoke")] > 0
    assert ops[("withdrawn_reference", "supersede")] > 0
    assert ops[("near_miss", "revoke")] > 0
    assert ops[("near_miss", "supersede")] > 0


def test_the_builtin_verifier_holds_its_floor_on_the_tune_split() -> None:
    # The kinds it claims (withdrawals and their look-alikes): every withdrawal found,
    # no look-alike taken for one, and abstentions only on look-alikes (measured: 53 of
    # 53, no false link, 1 abstention).
    verifier = TermVerifier()
    claimed = [p for p in PAIRS if p.split == "tune" and p.kind != "premise_change"]
    verdicts = [verifier.judge([p.pair])[0] for p in claimed]

    judged = list(zip(claimed, verdicts, strict=True))
    missed = [p.id for p, v in judged if p.invalidates and not v.invalidates]
    false = [p.id for p, v in judged if v.invalidates and not p.invalidates]
    abstained = [p for p, v in judged if v.abstained]
    assert missed == []
    assert false == []
    assert len(abstained) <= 1
    assert all(p.kind == "near_miss" for p in abstained)
