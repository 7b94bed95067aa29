"""``readmit bench`` options it took wrongly, rows and episodes it left out untold, and an
``--out`` it made for a run that wrote nothing; ``--sample`` builds only what it draws."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from readmit.bench import runner
from readmit.bench.backends import study
from readmit.bench.episode import Episode
from readmit.bench.generators import stale as synthetic
from readmit.bench.loaders import manbench
from readmit.cli import cli
from readmit.errors import ConfigError, InvalidEvent


def _data(root: Path, rows: int = 2) -> Path:
    """A ManBench folder of two tasks, gk and math, of ``rows`` valid rows each."""
    for task in ("gk", "math"):
        path = root / task / "val_data.json"
        path.parent.mkdir(parents=True)
        data = [
            {
                "idx": k,
                "inputs": f"Question {k}: how many legs do horses have?",
                "targets": ["four"],
                "multiple_choice_targets": ["two", "four"],
                "misleading_target": "two",
            }
            for k in range(rows)
        ]
        path.write_text(json.dumps({"data": data}), encoding="utf-8")
    return root


def _bench(*args: str) -> Result:
    return CliRunner().invoke(cli, ["bench", *args])


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return _data(tmp_path / "data")


def test_an_empty_out_is_refused_and_nothing_is_written_where_the_run_is(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)

    result = _bench("--suite", f"manbench:{data}", "--method", "Static", "--out", "")

    assert result.exit_code == 2
    assert "--out" in result.stderr
    assert "an empty path names no folder" in result.stderr
    assert list(here.iterdir()) == []


def test_a_backend_given_twice_is_refused(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"

    result = _bench(
        "--suite",
        f"manbench:{data}",
        "--backend",
        "readmit",
        "--backend",
        "readmit",
        "--out",
        str(out),
    )

    assert result.exit_code != 0
    assert "--backend readmit is given twice" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("team", ["\u0664", "4,\u0668", "\uff14", "\u00b2"])
def test_team_sizes_are_ascii_digits_only(tmp_path: Path, team: str) -> None:
    out = tmp_path / "out"

    result = _bench("--suite", "returns", "--seeds", "1", "--team", team, "--out", str(out))

    assert result.exit_code != 0
    assert "--team" in result.stderr
    assert "write team sizes from 1 to 10000" in result.stderr
    assert not out.exists()


def _refuse_all(monkeypatch: pytest.MonkeyPatch) -> None:
    def refusing(episode: Episode, scenario: Any = None) -> Any:
        raise InvalidEvent("e-3", "refused by the store")

    monkeypatch.setattr(runner, "context", refusing)


@pytest.mark.parametrize("backend", [[], ["--backend", "readmit"]], ids=["methods", "backend"])
def test_a_run_whose_every_episode_is_refused_leaves_no_folder(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: list[str]
) -> None:
    _refuse_all(monkeypatch)
    out = tmp_path / "out" / "deeper"
    method = [] if backend else ["--method", "Static"]

    result = _bench("--suite", f"manbench:{data}", *method, *backend, "--out", str(out))

    assert result.exit_code != 0
    assert "no episode could be recorded" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_backend_that_cannot_start_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(name: str, members: Any) -> Any:
        raise ConfigError(f"--backend {name} needs its extra")

    monkeypatch.setattr(study, "make", missing)
    out = tmp_path / "out"

    result = _bench(
        "--suite", "stale-synth", "--seeds", "1", "--backend", "mem0", "--out", str(out)
    )

    assert result.exit_code != 0
    assert "--backend mem0 needs its extra" in result.stderr
    assert not out.exists()


def test_an_out_made_for_the_results_holds_them(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"

    result = _bench(
        "--suite", "stale-synth", "--seeds", "1", "--method", "Static", "--out", str(out)
    )

    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} >= {"results.json", "results.md", "stale-synthetic.json"}


def _broken(monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    """The episode ``broken`` is made with an event by no agent: the store refuses it."""
    real = manbench.episode

    def making(*args: Any, **kwargs: Any) -> Episode:
        episode = real(*args, **kwargs)
        if episode.id == broken:
            episode.scenario["events"][0]["author"] = "nobody"
        return episode

    monkeypatch.setattr(manbench, "episode", making)


def test_a_backend_run_skips_and_names_an_episode_the_store_refuses(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _broken(monkeypatch, "manbench/math/1")
    out = tmp_path / "out"

    result = _bench("--suite", f"manbench:{data}", "--backend", "readmit", "--out", str(out))

    assert result.exit_code == 0, result.output
    file = data / "math" / "val_data.json"
    told = f"manbench {file} episode manbench/math/1 (team 4): "
    assert "warning: skipped 1 episodes whose history could not be recorded" in result.stderr
    assert told in result.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    [skipped] = results["meta"]["skipped_rows"]
    assert skipped.startswith(told)
    assert {p["episode"] for p in results["episodes"]} == {
        "manbench/gk/0",
        "manbench/gk/1",
        "manbench/math/0",
    }
    assert told in (out / "results.md").read_text(encoding="utf-8")


def test_stale_records_left_out_are_reported_in_the_run(tmp_path: Path) -> None:
    path = synthetic.write(tmp_path / "stale.json", count=3)
    records = json.loads(path.read_text("utf-8"))
    records[1]["type"] = "II"
    path.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "out"

    result = _bench("--suite", f"stale:{path}", "--method", "Static", "--out", str(out))

    assert result.exit_code == 0, result.output
    told = f"stale {path} record 1 (uid synthetic-1): type: 'II', not Type I"
    assert "left out 1 data rows of a kind the suite does not run" in result.stderr
    assert told in result.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [r[: len(told)] for r in results["meta"]["skipped_rows"]] == [told]
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert "> left out 1 data rows of a kind the suite does not run" in markdown
    assert told in markdown


def _count(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the ManBench episodes built."""
    built: list[str] = []
    real: Callable[..., Episode] = manbench.episode

    def counted(*args: Any, **kwargs: Any) -> Episode:
        episode = real(*args, **kwargs)
        built.append(episode.id)
        return episode

    monkeypatch.setattr(manbench, "episode", counted)
    return built


@pytest.mark.parametrize("backend", [["--method", "Static"], ["--backend", "readmit"]])
def test_sample_builds_only_the_episodes_it_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: list[str]
) -> None:
    data = _data(tmp_path / "data", rows=20)
    built = _count(monkeypatch)
    out = tmp_path / "out"

    result = _bench("--suite", f"manbench:{data}", "--sample", "2", *backend, "--out", str(out))

    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    ran = {r["episode"] for r in results.get("rows", results.get("episodes", []))}
    assert len(ran) == 4  # 2 of each condition, of 40 episodes
    assert sorted(built) == sorted(ran)
