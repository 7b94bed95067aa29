"""``readmit bench --sample N``: a seeded, reproducible subset of the episodes."""

import json
from pathlib import Path

from click.testing import CliRunner

from readmit.cli import cli


def run(tmp_path: Path, *args: str) -> dict[str, object]:
    out = tmp_path / "out"
    base = ["bench", "--suite", "returns", "--seeds", "4", "--method", "TRACE"]
    result = CliRunner().invoke(cli, [*base, "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    loaded: dict[str, object] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return loaded


def episodes(results: dict[str, object]) -> list[str]:
    rows = results["rows"]
    assert isinstance(rows, list)
    return [r["episode"] for r in rows]


def test_sample_keeps_at_most_n_episodes_per_condition_and_is_reproducible(
    tmp_path: Path,
) -> None:
    full = episodes(run(tmp_path))
    first = episodes(run(tmp_path, "--sample", "2"))
    again = episodes(run(tmp_path, "--sample", "2"))
    other = episodes(run(tmp_path, "--sample", "2", "--sample-seed", "7"))

    conditions = {e.split("/")[1] for e in full}
    assert len(first) == 2 * len(conditions)
    assert set(first) <= set(full)
    assert first == again
    assert other != first


def test_threshold_sets_tau_for_every_episode(tmp_path: Path) -> None:
    results = run(tmp_path, "--sample", "1", "--threshold", "1.0")
    rows = results["rows"]
    assert isinstance(rows, list)

    meta = results["meta"]
    assert isinstance(meta, dict)
    assert meta["threshold"] == 1.0
    implicit = [r for r in rows if r["condition"] == "implicit"]
    assert implicit
    assert all(r["iir"] == 0.0 for r in implicit)  # τ = 1 confirms no implicit invalidation


def test_condition_keeps_only_the_named_conditions(tmp_path: Path) -> None:
    kept = episodes(run(tmp_path, "--condition", "implicit", "--condition", "crowded"))

    assert kept
    assert {e.split("/")[1] for e in kept} == {"implicit", "crowded"}


def test_an_unknown_condition_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["bench", "--suite", "returns", "--seeds", "1", "--condition", "nope"]
    )

    assert result.exit_code != 0
    assert "unknown condition" in result.output
