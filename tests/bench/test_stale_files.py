"""STALE files with a malformed record: the record is skipped, named with its file and place,
and the rest runs (one record ended the whole run, some only at replay, naming a generated
event and leaving an empty --out folder)."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from readmit.bench.generators import stale as synthetic
from readmit.bench.loaders import stale
from readmit.bench.methods import methods
from readmit.bench.runner import run
from readmit.cli import cli
from readmit.plugins import make_verifier

Record = dict[str, Any]


def _records(
    tmp_path: Path, change: Callable[[Record], Any], count: int = 3, name: str = "stale.json"
) -> Path:
    """``count`` generated records, the second of them changed."""
    path = synthetic.write(tmp_path / name, count=count)
    records = json.loads(path.read_text("utf-8"))
    records[1] = change(records[1])
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _drop(key: str) -> Callable[[Record], Record]:
    return lambda r: {k: v for k, v in r.items() if k != key}


def _turn(role: str, content: str) -> Callable[[Record], Record]:
    """The first turn of the record's first session, as ``role`` saying ``content``."""

    def edit(record: Record) -> Record:
        record["haystack_session"][0][0] = {"role": role, "content": content}
        return record

    return edit


MALFORMED = [
    (_drop("M_old"), "record 1 (uid synthetic-1): M_old: Field required"),
    (lambda r: "a record", "record 1: Input should be a valid dictionary"),
    (
        lambda r: {**r, "relevant_session_index": [7, 3]},
        "record 1 (uid synthetic-1): relevant_session_index: out of order",
    ),
    (
        _turn("user", "a\x00b"),
        "record 1 (uid synthetic-1): haystack_session.0.0.content: may not contain U+0000",
    ),
    (lambda r: {**r, "uid": "u" * 195}, "record 1: uid: at most 194 characters"),
    (lambda r: {**r, "uid": "u\x00"}, "record 1: uid: may not contain U+0000"),
    (lambda r: {**r, "uid": ""}, "record 1: uid: String should have at least 1 character"),
    (  # episodes sharing an id: their rows could not be told apart
        lambda r: {**r, "uid": "synthetic-0"},
        "record 1 (uid synthetic-0): uid: repeats record 0's (episodes would share its id)",
    ),
]


@pytest.mark.parametrize(("change", "message"), MALFORMED)
def test_a_malformed_record_is_skipped_naming_the_file_and_the_record(
    tmp_path: Path, change: Callable[[Record], Any], message: str
) -> None:
    path = _records(tmp_path, change)

    made = stale.episodes(path)

    assert [e.id for e in made] == ["stale/synthetic-0", "stale/synthetic-2"]
    loaded = stale.load(path, teams=(4, 8))
    assert [e.id for e in loaded.episodes] == [e.id for e in made] * 2
    [skipped] = loaded.skipped
    assert str(skipped).startswith(f"{path} {message}")


def _items(path: Path) -> list[str]:
    [first, *_] = stale.episodes(path)
    return [e["item"]["text"] for e in first.scenario["events"] if e["op"] == "assert"]


@pytest.mark.parametrize("content", ["\u200b", "\u2060\u200b  ", " " * 4000 + "later"])
def test_a_user_turn_that_shows_nothing_makes_no_item_and_the_episode_runs(
    tmp_path: Path, content: str
) -> None:
    """As a blank one: only invisible characters made an item the replay refused."""
    path = _records(tmp_path, _turn("user", content), count=2)
    kept = _items(_records(tmp_path, lambda r: r, count=2, name="unchanged.json"))

    episode = stale.episodes(path)[1]

    events = episode.scenario["events"]
    assert [e for e in events if e["op"] == "assert" and e["item"]["id"] == "s0-t0"] == []
    assert _items(path) == kept  # the first record's episode is as before
    [row] = run([episode], methods(["Static"], make_verifier("builtin")))
    assert row.error is None
    assert stale.load(path).skipped == ()


def test_an_assistant_turn_is_not_checked_as_it_makes_no_item(tmp_path: Path) -> None:
    path = _records(tmp_path, _turn("assistant", "a\x00b"))

    made = stale.episodes(path)

    assert [e.id for e in made] == [f"stale/synthetic-{n}" for n in range(3)]


def test_bench_cli_completes_and_reports_a_skipped_record(tmp_path: Path) -> None:
    path = _records(tmp_path, _turn("user", "a\x00b"))
    out = tmp_path / "out"

    result = CliRunner().invoke(
        cli, ["bench", "--suite", f"stale:{path}", "--method", "TRACE", "--out", str(out)]
    )

    assert result.exit_code == 0, result.output
    said = f"stale {path} record 1 (uid synthetic-1): haystack_session.0.0.content: "
    assert "warning: skipped 1 malformed data rows" in result.stderr
    assert said in result.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [r[: len(said)] for r in results["meta"]["skipped_rows"]] == [said]
    assert {r["episode"] for r in results["rows"]} == {"stale/synthetic-0", "stale/synthetic-2"}


def test_a_file_of_only_malformed_records_runs_nothing_and_leaves_no_folder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "stale.json"
    records = json.loads(synthetic.write(path, count=1).read_text("utf-8"))
    records[0]["haystack_session"][0][0]["content"] = "a\x00b"
    path.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "out"

    result = CliRunner().invoke(
        cli, ["bench", "--suite", f"stale:{path}", "--method", "TRACE", "--out", str(out)]
    )

    assert result.exit_code == 2, result.output
    assert "no episodes to run" in result.stderr
    assert f"{path} record 0 (uid synthetic-0): haystack_session.0.0.content" in result.stderr
    assert not out.exists()
