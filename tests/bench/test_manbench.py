"""ManBench task files in the shapes of the whole public set: nested lists, malformed rows."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import manbench_row as row
from builders import manbench_task as write_task
from readmit.bench.loaders import manbench
from readmit.cli import cli
from readmit.errors import InvalidInput

MALFORMED = [
    (row(2, inputs=...), "inputs"),
    (row(3, targets=[]), "no targets"),
    (row(4, targets=[[]]), "no targets"),
    (row(5, misleading_target=...), "misleading_target"),
    (row(6, misleading_target=["two"]), "misleading_target"),
    (row(7, targets=[{"text": "four"}]), "targets"),
    (row(8, inputs="   "), "blank inputs"),
    # what no event may carry: rows that used to stop the whole run once they were replayed
    (row(9, inputs="a\x00b"), "control character"),
    (row(10, misleading_target="two\x00"), "control character"),
    (row(11, targets=[["four\x00"]]), "control character"),
    (row(12, inputs="x" * 100_000), "at most 100000 characters"),
]


def test_nested_targets_are_flattened_in_order(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        "nested",
        [
            row(0, targets=[["four"]], multiple_choice_targets=[["two", "three"], ["four"]]),
            row(1, targets=[["four", "4"], "IV"], multiple_choice_targets=[[["two"]], "four"]),
        ],
    )

    examples, skipped = manbench.read_task(path)

    assert skipped == []
    assert [e.targets for e in examples] == [["four"], ["four", "4", "IV"]]
    assert [e.multiple_choice_targets for e in examples] == [
        ["two", "three", "four"],
        ["two", "four"],
    ]


def test_every_valid_row_makes_episodes_and_malformed_rows_are_counted(tmp_path: Path) -> None:
    write_task(tmp_path, "flat", [row(0), row(1)])
    write_task(
        tmp_path,
        "nested",
        [row(0, targets=[["four"]]), *(r for r, _ in MALFORMED), row(13, targets=[["four"]])],
    )
    nested = tmp_path / "nested" / "val_data.json"

    loaded = manbench.load(tmp_path, teams=(4, 8))

    ids = [e.id for e in loaded.episodes]
    assert sorted(ids) == sorted(
        [f"manbench/{task}/{k}" for task in ("flat", "nested") for k in (0, 1)] * 2
    )
    assert sorted({e.team_size for e in loaded.episodes}) == [4, 8]
    assert [(s.task, s.idx, s.position) for s in loaded.skipped] == [
        ("nested", idx, idx - 1) for idx in range(2, 13)
    ]
    for skipped, (_, reason) in zip(loaded.skipped, MALFORMED, strict=True):
        assert reason in skipped.reason
        assert str(skipped).startswith(f"{nested} idx {skipped.idx}: ")


def test_episodes_from_nested_rows_answer_with_the_flattened_targets(tmp_path: Path) -> None:
    write_task(
        tmp_path,
        "nested",
        [row(0, targets=[["four"]], multiple_choice_targets=[["two"], ["four"]]), row(1)],
    )

    [first, _] = manbench.episodes(tmp_path)

    [probe] = first.probes
    assert (probe.answer, probe.options) == ("four", ("two", "four"))


@pytest.mark.parametrize("blank", ["", "   ", "\u200b"], ids=["empty", "spaces", "zero-width"])
def test_a_row_whose_misleading_target_says_nothing_is_skipped(tmp_path: Path, blank: str) -> None:
    """Its teammates would claim an empty answer: the row is counted, not made an episode."""
    path = write_task(tmp_path, "blank", [row(0), row(1), row(2, misleading_target=blank)])

    loaded = manbench.load(tmp_path)

    assert [e.id for e in loaded.episodes] == ["manbench/blank/0", "manbench/blank/1"]
    assert [str(s) for s in loaded.skipped] == [
        f"{path} idx 2: misleading_target: blank misleading_target"
    ]


def test_a_row_without_an_integer_idx_is_reported_by_position(tmp_path: Path) -> None:
    path = write_task(tmp_path, "odd", [row(0), "not a row", {**row(2), "idx": "two"}])

    loaded = manbench.load(tmp_path)

    assert [e.id for e in loaded.episodes] == ["manbench/odd/0"]
    assert [(s.position, s.idx) for s in loaded.skipped] == [(1, None), (2, None)]
    assert str(loaded.skipped[0]).startswith(f"{path} row 1: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"canary": "x", "data": {"idx": 0}}', "data is not a list"),
        ('{"canary": "x"}', "not a JSON object with a data list"),
        ("[]", "not a JSON object with a data list"),
        ("", "not JSON"),
        (None, "cannot read"),
    ],
)
def test_a_file_that_is_not_a_task_file_is_still_an_error(
    tmp_path: Path, text: str | None, message: str
) -> None:
    path = tmp_path / "broken" / "val_data.json"
    path.parent.mkdir()
    if text is None:
        path.mkdir()  # a directory where the file should be
    else:
        path.write_text(text, encoding="utf-8")

    with pytest.raises(InvalidInput, match=message) as raised:
        manbench.load(tmp_path)
    assert "Error(" not in str(raised.value)  # no Python repr


def test_bench_cli_completes_and_reports_skipped_rows(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_task(data, "nested", [row(0, targets=[["four"]]), row(1, targets=[]), row(2)])
    write_task(data, "flat", [row(0), row(1, misleading_target=...)])
    out = tmp_path / "out"

    result = CliRunner().invoke(
        cli, ["bench", "--suite", f"manbench:{data}", "--method", "TRACE", "--out", str(out)]
    )

    assert result.exit_code == 0, result.output
    assert "warning: skipped 2 malformed data rows" in result.stderr
    assert f"{data / 'nested' / 'val_data.json'} idx 1: targets: no targets" in result.stderr
    assert f"{data / 'flat' / 'val_data.json'} idx 1: misleading_target: Field required" in (
        result.stderr
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(results["meta"]["skipped_rows"]) == 2
    assert {r["episode"].rsplit("/", 2)[-2] for r in results["rows"]} == {"nested", "flat"}
    assert "skipped 2 malformed data rows" in (out / "results.md").read_text(encoding="utf-8")


def test_bench_through_backends_reports_skipped_rows_in_its_meta_too(tmp_path: Path) -> None:
    """The portability study warns of them, and names them in results.json and results.md."""
    data = tmp_path / "data"
    write_task(data, "flat", [row(0), row(1, misleading_target=...)])
    out = tmp_path / "out"
    args = ["bench", "--suite", f"manbench:{data}", "--backend", "langgraph", "--out", str(out)]

    result = CliRunner().invoke(cli, args)

    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    [skipped] = results["meta"]["skipped_rows"]
    assert "flat/val_data.json idx 1: misleading_target: Field required" in skipped
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert "> skipped 1 malformed data rows" in markdown
    assert "flat/val_data.json idx 1: misleading_target: Field required" in markdown
