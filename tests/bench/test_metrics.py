"""The paper's metrics on worked examples, and their bounds."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from readmit.bench import metrics


def test_via_and_iir_per_episode() -> None:
    assert metrics.via({"a"}, ["a", "b"]) == 1.0
    assert metrics.via({"a", "c"}, ["a", "b"]) == 0.0
    assert metrics.via({"c|a"}, ["a"]) == 1.0
    assert metrics.iir({"b"}, ["a", "b"]) == 0.0
    assert metrics.iir({"c"}, ["a", "b"]) == 1.0
    assert metrics.wsar(0.75) == 0.25


def test_stale_conjunctions_are_within_episodes() -> None:
    # SR and PR each pass half the time, never together: IIR is 0, not 0.25.
    scores = metrics.stale_scores([True, False], [False, True], [True, True])

    assert scores["SR"] == scores["PR"] == 0.5
    assert scores["IIR"] == 0.0
    assert scores["LS"] == 0.0
    assert scores["VIA"] == scores["IPA"] == 1.0
    assert scores["Overall"] == pytest.approx(2 / 3)


def test_memora_question_worked_example() -> None:
    # 3 presence criteria (2 met), 1 forgetting criterion (missed): w = 1/4.
    q = metrics.memora_question([True, True, False], [False])

    assert q["P"] == pytest.approx(2 / 3)
    assert q["F"] == 0.0
    assert q["w"] == 0.25
    assert q["Overall"] == pytest.approx(0.75 * 2 / 3)
    assert q["FAMA"] == pytest.approx(2 / 3 - 0.25)


def test_fama_is_clamped_at_zero() -> None:
    assert metrics.memora_question([False], [False, False, False])["FAMA"] == 0.0


def test_memora_averages_per_question() -> None:
    scores = metrics.memora_scores(
        [metrics.memora_question([True], []), metrics.memora_question([False], [True])]
    )

    assert scores["VIA"] == 0.5
    assert scores["IIR"] == 1.0
    assert scores["FAMA"] == 0.5


def test_rsr_counts_correct_to_incorrect_among_baseline_correct() -> None:
    assert metrics.rsr([True, True, False, True], [True, False, False, False]) == pytest.approx(
        2 / 3
    )


def test_weighted_means_skip_blocks_without_a_score() -> None:
    assert metrics.weighted({"a": 0.2, "b": 0.6}) == pytest.approx(0.4)
    assert metrics.weighted({"a": 0.2, "b": float("nan")}) == pytest.approx(0.2)
    assert metrics.weighted({"a": 0.0, "b": 1.0}, {"a": 3, "b": 1}) == 0.25
    assert math.isnan(metrics.weighted({}))


@given(st.lists(st.booleans(), max_size=6), st.lists(st.booleans(), max_size=6))
def test_memora_scores_are_proportions(presence: list[bool], forgetting: list[bool]) -> None:
    q = metrics.memora_question(presence, forgetting)

    assert all(0.0 <= q[k] <= 1.0 for k in ("P", "F", "w", "Overall", "FAMA"))
    assert q["FAMA"] <= q["P"]


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_stale_bounds(episodes: list[tuple[bool, bool, bool]]) -> None:
    s, p, i = (list(x) for x in zip(*episodes, strict=True))

    scores = metrics.stale_scores(s, p, i)

    assert scores["IIR"] <= min(scores["SR"], scores["PR"])
    assert scores["LS"] <= min(scores["IIR"], scores["IPA"])


def test_average_weights_conditions_equally_and_pooled_by_episodes() -> None:
    from readmit.bench.report import summarize
    from readmit.bench.runner import Row

    def row(condition: str, via: float) -> Row:
        return Row(
            suite="s",
            condition=condition,
            method="m",
            episode=f"{condition}{via}",
            team_size=4,
            via=via,
            iir=1.0,
            accuracy=None,
            outcome="issued",
        )

    rows = [row("a", 1.0), row("b", 0.0), row("b", 0.0), row("b", 0.0)]

    by_label = {e["condition"]: e for e in summarize(rows)}

    assert by_label["Average"]["VIA"] == 0.5
    assert by_label["Pooled"]["VIA"] == 0.25
    assert by_label["Average"]["Overall"] is None


def test_the_report_says_what_each_column_means_and_where_it_is_defined() -> None:
    from pathlib import Path

    from readmit.bench.report import markdown

    text = markdown([])
    concepts = (Path(__file__).parent.parent.parent / "docs" / "concepts.md").read_text(
        encoding="utf-8"
    )

    assert metrics.DEFINED_IN in text
    assert "\n## Metrics\n" in concepts
    for name in ("VIA", "IIR", "WSAR", "Overall", "RSR"):
        assert f"- **{name}**: " in text
        assert f"**{name}**" in concepts
