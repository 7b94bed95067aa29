"""``readmit bench`` refuses what it cannot honour before any episode runs, and finishes a
run one bad episode would have stopped: --out that cannot take the results, --threshold
nan, options --backend ignores, values given twice, an episode whose history is refused."""

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from readmit.bench import runner
from readmit.bench.episode import Episode
from readmit.cli import cli
from readmit.errors import InvalidEvent


def _data(root: Path) -> Path:
    """A ManBench folder of two tasks, two rows each (one skipped as malformed)."""
    rows: list[dict[str, Any]] = [
        {
            "idx": k,
            "inputs": f"Question {k}: how many legs do horses have?",
            "targets": ["four"],
            "multiple_choice_targets": ["two", "four"],
            "misleading_target": "two",
        }
        for k in range(2)
    ]
    for task in ("gk", "math"):
        path = root / task / "val_data.json"
        path.parent.mkdir(parents=True)
        data = rows if task == "gk" else [*rows, {"idx": 2, "targets": []}]
        path.write_text(json.dumps({"data": data}), encoding="utf-8")
    return root


def _bench(data: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["bench", "--suite", f"manbench:{data}", *args])


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return _data(tmp_path / "data")


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any episode run fails the test: the refusal must come first."""

    def never(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("an episode ran")

    monkeypatch.setattr(runner, "context", never)


@pytest.mark.parametrize("name", ["results.json", "results.md", "admission-plane.png"])
@pytest.mark.usefixtures("no_run")
def test_an_out_holding_a_directory_of_a_result_name_is_refused_first(
    data: Path, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)

    result = _bench(data, "--method", "TRACE", "--out", str(out))

    assert result.exit_code != 0
    assert "[invalid_input]" in result.stderr
    assert f"--out {out}: {name} there is a directory" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("no_run")
def test_an_out_that_cannot_be_written_is_refused_first(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if its mode were 555 (the tests may run as root, who writes anywhere)."""
    out = tmp_path / "out"
    out.mkdir()
    allowed = os.access

    def access(path: Any, mode: int) -> bool:
        return not (Path(path) == out and mode & os.W_OK) and allowed(path, mode)

    monkeypatch.setattr(os, "access", access)

    result = _bench(data, "--method", "TRACE", "--out", str(out))

    assert result.exit_code != 0
    assert f"--out {out}: cannot write into it (permission denied)" in result.stderr


def test_threshold_nan_is_refused_naming_the_option_and_making_nothing(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"

    result = _bench(data, "--threshold", "nan", "--out", str(out))

    assert result.exit_code == 2
    assert "--threshold" in result.stderr
    assert "nan" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--method", "TRACE"], "--method"),
        (["--threshold", "0.5"], "--threshold"),
        (["--llm", "tiny@http://127.0.0.1:9/v1"], "--llm"),
    ],
)
def test_options_the_portability_study_ignores_are_refused(
    data: Path, tmp_path: Path, given: list[str], named: str
) -> None:
    out = tmp_path / "out"

    result = _bench(data, "--backend", "readmit", *given, "--out", str(out))

    assert result.exit_code != 0
    assert f"{named}: not used with --backend" in result.stderr
    assert not out.exists()


def test_an_llm_from_the_environment_does_not_stop_the_portability_study(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("READMIT_BENCH_LLM", "tiny@http://127.0.0.1:9/v1")

    result = _bench(data, "--backend", "readmit", "--out", str(tmp_path / "out"))

    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "told"),
    [
        (["--team", "4,8,4"], "--team 4 is given twice"),
        (["--method", "TRACE", "--method", "TRACE"], "--method TRACE is given twice"),
        (["--suite", "drift", "--suite", "drift"], "--suite drift is given twice"),
    ],
)
def test_a_value_given_twice_is_refused(tmp_path: Path, args: list[str], told: str) -> None:
    out = tmp_path / "out"

    result = CliRunner().invoke(cli, ["bench", *args, "--out", str(out)])

    assert result.exit_code != 0
    assert told in result.stderr
    assert not out.exists()


def test_one_data_folder_given_twice_under_two_spellings_is_refused(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["--suite", f"manbench:{data}/", "--method", "TRACE", "--out", str(out)]

    result = _bench(data, *args)

    assert result.exit_code != 0
    assert f"--suite manbench:{data}/ is given twice" in result.stderr


def test_an_episode_that_cannot_be_recorded_is_skipped_named_and_reported(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    record = runner.context

    def refusing(episode: Episode, scenario: Any = None) -> Any:
        if episode.id == "manbench/math/1":
            raise InvalidEvent("e-3", "refused by the store")
        return record(episode, scenario)

    monkeypatch.setattr(runner, "context", refusing)

    result = _bench(data, "--method", "TRACE", "--out", str(out))

    assert result.exit_code == 0, result.output
    file = data / "math" / "val_data.json"
    told = f"manbench {file} episode manbench/math/1 (team 4): event 'e-3': refused by the store"
    assert "warning: skipped 1 episodes whose history could not be recorded" in result.stderr
    assert told in result.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert told in results["meta"]["skipped_rows"]
    assert len(results["meta"]["skipped_rows"]) == 2  # and the malformed row
    assert {r["episode"] for r in results["rows"]} == {
        "manbench/gk/0",
        "manbench/gk/1",
        "manbench/math/0",
    }
    assert told in (out / "results.md").read_text(encoding="utf-8")


def test_the_portability_report_names_the_rows_skipped(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"

    result = _bench(data, "--backend", "readmit", "--out", str(out))

    assert result.exit_code == 0, result.output
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert "> skipped 1 malformed data rows" in markdown
    assert f"{data / 'math' / 'val_data.json'} idx 2: " in markdown
