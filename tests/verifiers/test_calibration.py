"""Choosing a model verifier's cut-off on labeled pairs, against a scripted server."""

import json
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from builders import pair_row
from readmit.admission.invalidation.implicit import Verdict
from readmit.cli import cli
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.plugins import make_verifier
from readmit.verifiers.calibration import (
    GIVE_UP_AFTER,
    best_threshold,
    calibrate,
    cut_offs,
    scores,
)
from readmit.verifiers.chain import ChainVerifier
from readmit.verifiers.openai_compat import OpenAICompatVerifier
from readmit.verifiers.pairs import LabeledPair, load_pairs
from verifiers.scripted import Answer, Scripted, completion, status

P_YES = {
    "The clinic stopped taking my insurance.": 0.45,
    "The whole team is on leave Thursday.": 0.40,
    "The printer ran out of ink.": 0.42,
    "The clinic has a new waiting room.": 0.20,
    "A storm closes the harbour all week.": 0.44,
    "The gym opens at six.": 0.43,
}
"""The scripted model's P(yes) for each pair, by its later observation."""


ROWS = [
    ("The clinic stopped taking my insurance.", "premise_change", "tune"),
    ("The whole team is on leave Thursday.", "premise_change", "tune"),
    ("The printer ran out of ink.", "unrelated", "tune"),
    ("The clinic has a new waiting room.", "same_topic", "tune"),
    ("A storm closes the harbour all week.", "premise_change", "held_out"),
    ("The gym opens at six.", "unrelated", "held_out"),
]


def pairs_file(tmp_path: Path, splits: bool = True) -> Path:
    rows = [
        pair_row(n, later, kind, split if splits else None)
        for n, (later, kind, split) in enumerate(ROWS)
    ]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"about": "calibration test pairs", "pairs": rows}))
    return path


def answer(body: dict[str, Any]) -> httpx.Response:
    asked = body["messages"][-1]["content"]
    [p] = [p for later, p in P_YES.items() if later in asked]
    return completion("Yes", top=[("Yes", p), ("No", 1 - p)])


def model(server: Scripted, decide_at: float = 0.5) -> OpenAICompatVerifier:
    return OpenAICompatVerifier(
        model="m", base_url="http://model.test/v1", http=server.http(), decide_at=decide_at
    )


def test_the_cut_off_of_best_f1_on_tune_is_chosen_and_held_out_is_scored_at_it(
    tmp_path: Path,
) -> None:
    verifier = model(Scripted([answer]), decide_at=0.7)

    labeled = load_pairs(pairs_file(tmp_path))
    found = calibrate(verifier, labeled)

    # tune at 0.40: both premise changes and the printer (P 2/3, R 1); any other cut-off is worse
    assert found.threshold == pytest.approx(0.40)
    assert found.chosen_on == "tune"
    assert list(found.splits) == ["tune", "held_out"]
    tune, held_out = found.splits["tune"][1], found.splits["held_out"][1]
    assert tune.precision == pytest.approx(2 / 3)
    assert tune.recall == 1.0
    assert (held_out.precision, held_out.recall) == (0.5, 1.0)
    assert [p.id for p, said in zip(labeled, found.said, strict=True) if said] == [
        "p0",
        "p1",
        "p2",
        "p4",
        "p5",
    ]
    assert found.unavailable == ()
    assert verifier.decide_at == 0.7  # put back


def test_the_split_chosen_on_is_reported_first(tmp_path: Path) -> None:
    found = calibrate(model(Scripted([answer])), load_pairs(pairs_file(tmp_path)), "held_out")

    assert found.chosen_on == "held_out"
    assert list(found.splits) == ["held_out", "tune"]
    assert found.threshold == pytest.approx(0.44)  # the storm (0.44) in, the gym (0.43) out


def test_a_file_without_splits_is_calibrated_on_every_pair(tmp_path: Path) -> None:
    found = calibrate(model(Scripted([answer])), load_pairs(pairs_file(tmp_path, splits=False)))

    assert found.chosen_on is None
    assert list(found.splits) == [None]
    assert found.threshold == pytest.approx(0.44)  # 3 of 3 premise changes, 2 look-alikes


def test_a_pair_the_model_could_not_judge_is_named(tmp_path: Path) -> None:
    failing: list[Answer] = [answer, answer, status(500)]
    verifier = model(Scripted(failing))
    verifier.retries = 0

    found = calibrate(verifier, load_pairs(pairs_file(tmp_path)))

    assert [p.id for p in found.unavailable] == ["p2", "p3", "p4", "p5"]
    assert set(found.why) == {"p2", "p3", "p4", "p5"}
    assert "500" in found.why["p2"]


def test_a_server_that_answers_nothing_is_said_at_once_with_why(tmp_path: Path) -> None:
    """Each pair failed in turn (about 0.8 s each with retries: six minutes for the labeled
    file), and the command then named every pair and no reason."""
    with socket.socket() as closed:  # a port nothing listens on: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    verifier = OpenAICompatVerifier(model="m", base_url=f"http://127.0.0.1:{port}/v1")
    verifier.retries = 0

    with pytest.raises(VerifierUnavailable) as failed:
        calibrate(verifier, load_pairs(pairs_file(tmp_path)))

    said = str(failed.value)
    assert f"no answer to any of the first {GIVE_UP_AFTER} pairs: " in said
    assert "refused" in said.lower() or "connect" in said.lower(), said


def test_only_a_model_verifier_has_a_cut_off(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="builtin has no cut-off to calibrate"):
        calibrate(make_verifier("builtin"), load_pairs(pairs_file(tmp_path)))


def test_a_split_with_no_pairs_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no pair of the split 'fresh'"):
        calibrate(model(Scripted([answer])), load_pairs(pairs_file(tmp_path)), "fresh")


def test_a_split_of_one_kind_of_pair_is_refused(tmp_path: Path) -> None:
    labeled = [p for p in load_pairs(pairs_file(tmp_path)) if not p.invalidates]

    with pytest.raises(ConfigError, match="pairs that invalidate and pairs that do not"):
        calibrate(model(Scripted([answer])), labeled)


def test_a_split_named_for_pairs_without_splits_is_refused(tmp_path: Path) -> None:
    labeled = load_pairs(pairs_file(tmp_path, splits=False))

    with pytest.raises(ConfigError, match="the pairs have no splits"):
        calibrate(model(Scripted([answer])), labeled, "tune")


def test_a_server_without_log_probabilities_gets_no_cut_off(tmp_path: Path) -> None:
    structured = completion('{"verdict": "compatible", "reason": "unrelated"}')
    verifier = model(Scripted([structured]))

    with pytest.raises(ConfigError, match="no log-probabilities"):
        calibrate(verifier, load_pairs(pairs_file(tmp_path)))
    assert verifier.decide_at == 0.5


def test_a_chain_of_two_models_is_refused() -> None:
    chain = ChainVerifier(first=model(Scripted([answer])), second=model(Scripted([answer])))

    with pytest.raises(ConfigError, match="one model at a time"):
        calibrate(chain, [])


def test_a_chains_cut_off_is_its_models() -> None:
    second = model(Scripted([answer]))

    assert cut_offs(ChainVerifier(first=make_verifier("builtin"), second=second)) == [second]
    assert cut_offs(make_verifier("builtin")) == []


def test_a_cut_off_is_rounded_down_so_the_verdict_it_came_from_still_passes(
    tmp_path: Path,
) -> None:
    labeled = list(load_pairs(pairs_file(tmp_path)))[1:3]  # a positive, then a negative
    verdicts: list[Verdict | None] = [
        Verdict(invalidates=True, confidence=0.4006),
        Verdict(invalidates=True, confidence=0.3),
    ]

    assert best_threshold(labeled, verdicts) == 0.4


def test_equal_f1_goes_to_the_cut_off_nearest_the_default(tmp_path: Path) -> None:
    labeled: list[LabeledPair] = list(load_pairs(pairs_file(tmp_path)))[:1]  # one positive
    verdicts: list[Verdict | None] = [Verdict(invalidates=True, confidence=0.9)]

    assert best_threshold(labeled, verdicts, default=0.65) == 0.65
    assert best_threshold(labeled, verdicts, default=0.95) == 0.9


def test_no_verdict_and_an_abstention_count_as_no_and_as_unavailable(tmp_path: Path) -> None:
    labeled = list(load_pairs(pairs_file(tmp_path)))[:2]  # two positives
    verdicts = [None, Verdict(invalidates=False, confidence=0.0, abstained=True)]

    found = scores(labeled, verdicts, 0.5)

    assert (found.recall, found.f1, found.unavailable) == (0.0, 0.0, 2)


def test_the_command_refuses_a_verifier_without_a_cut_off(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["verifiers", "calibrate", "builtin", str(pairs_file(tmp_path))]
    )

    assert result.exit_code != 0
    assert "builtin has no cut-off to calibrate" in result.output


def test_the_command_names_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"

    result = CliRunner().invoke(cli, ["verifiers", "calibrate", "builtin", str(missing)])

    assert result.exit_code != 0
    assert "none.json" in result.output


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({}, "about: Field required; pairs: Field required"),
        (
            {"about": "x", "pairs": [pair_row(0, "The gym opens at six.", "unrelated", "dev")]},
            "pairs[0].split: Input should be 'tune', 'held_out' or 'fresh'",
        ),
    ],
)
def test_a_bad_pair_file_names_each_problem_and_the_shape_without_pydantics_text(
    tmp_path: Path, data: dict[str, Any], said: str
) -> None:
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    with pytest.raises(ConfigError) as refused:
        load_pairs(path)

    assert str(refused.value).startswith(f'{path}: {said}; a pair file is {{"about": TEXT')
    assert "\n" not in str(refused.value)
    assert "pydantic" not in str(refused.value)
