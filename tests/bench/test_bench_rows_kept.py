"""One malformed row of a data file is that row's problem: the file's other rows still load.

Rows strict JSON refuses (a repeated key, a number of more than 100 digits, nesting past 64
levels) refused their whole file; ``multiple_choice_targets: null`` skipped its row; a row
that is no object was said to be no ``_Example``; STALE records not of Type I were dropped
uncounted; ``--sample`` built every episode before drawing a few.
"""

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from builders import manbench_row
from readmit.bench.episode import Episode
from readmit.bench.generators import stale as synthetic
from readmit.bench.loaders import manbench, memora, stale
from readmit.bench.runner import sample_each
from readmit.errors import InvalidInput

DATA = Path(__file__).parent.parent / "data"
PERSONA = DATA / "memora-sample" / "weekly" / "software_engineer"


def task_text(root: Path, task: str, text: str) -> Path:
    path = root / task / "val_data.json"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def rows_text(*rows: str) -> str:
    """A task file of these rows, each written as given (JSON text)."""
    return '{"canary": "BENCHMARK DATA", "data": [' + ", ".join(rows) + "]}"


GOOD = [json.dumps(manbench_row(k)) for k in range(3)]
DEEP = "[" * 70 + '"four"' + "]" * 70
REFUSED = [
    ('{"idx": 3, "idx": 4, "inputs": "q", "targets": ["a"], "misleading_target": "b"}', "idx"),
    (
        '{"idx": ' + "9" * 101 + ', "inputs": "q", "targets": ["a"], "misleading_target": "b"}',
        "100",
    ),
    ('{"idx": 3, "inputs": "q", "targets": ' + DEEP + ', "misleading_target": "b"}', "64 levels"),
    ('{"idx": 3, "inputs": "q", "targets": ' + "[" * 5000 + "]" * 5000 + "}", "64 levels"),
    ('{"idx": 3, "inputs": "q", "targets": [NaN], "misleading_target": "b"}', "NaN"),
    ('{"idx": 3, "inputs": "\\ud800", "targets": ["a"], "misleading_target": "b"}', "surrogate"),
]
REASONS = [
    "JSON object repeats the key 'idx'",
    "JSON number is longer than 100 characters",
    "JSON nests deeper than 64 levels",
    "JSON nests deeper than 64 levels",
    "JSON may not contain NaN",
    "JSON string contains a lone surrogate (\\ud800-\\udfff)",
]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [(bad, reason) for (bad, _), reason in zip(REFUSED, REASONS, strict=True)],
    ids=["repeated-key", "long-number", "deep", "very-deep", "nan", "lone-surrogate"],
)
def test_a_row_strict_json_refuses_is_skipped_and_the_rest_of_its_file_loads(
    tmp_path: Path, bad: str, reason: str
) -> None:
    path = task_text(tmp_path, "gk", rows_text(GOOD[0], GOOD[1], bad, GOOD[2]))

    loaded = manbench.load(tmp_path)

    assert [e.id for e in loaded.episodes] == [f"manbench/gk/{k}" for k in range(3)]
    assert [str(s) for s in loaded.skipped] == [f"{path} row 2: {reason}"]


def test_a_row_repeating_a_key_is_not_read_with_either_value(tmp_path: Path) -> None:
    twice = (
        '{"idx": 1, "inputs": "q", "targets": ["a"], "targets": ["b"], "misleading_target": "c"}'
    )
    task_text(tmp_path, "gk", rows_text(GOOD[0], twice))

    examples, [skipped] = manbench.read_task(tmp_path / "gk" / "val_data.json")

    assert [e.idx for e in examples] == [0]
    assert skipped.reason == "JSON object repeats the key 'targets'"


def test_nesting_is_counted_from_the_top_of_the_file_as_before(tmp_path: Path) -> None:
    """64 levels in all (the file's object, data, the row, 61 lists of targets) still load."""

    def nested(idx: int, lists: int) -> str:
        targets = "[" * lists + '"four"' + "]" * lists
        return f'{{"idx": {idx}, "inputs": "q", "targets": {targets}, "misleading_target": "b"}}'

    task_text(tmp_path, "gk", rows_text(nested(0, 61), nested(1, 62)))

    loaded = manbench.load(tmp_path)

    assert [e.id for e in loaded.episodes] == ["manbench/gk/0"]
    assert [s.reason for s in loaded.skipped] == ["JSON nests deeper than 64 levels"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (rows_text(GOOD[0], '{"idx": 1,, "inputs": "q"}'), "not JSON: Expecting"),
        (rows_text(GOOD[0], REFUSED[0][0][:-1] + ", oops}"), "not JSON: Expecting"),
        (rows_text(GOOD[0]) + " []", "not JSON: Extra data"),
        (rows_text(GOOD[0])[:-2], "not JSON: Expecting"),
        ('{"data": [], "data": [' + GOOD[0] + "]}", "repeats the key 'data'"),
        ('{"canary": ' + "1" * 101 + ', "data": []}', "longer than 100 characters"),
        ("[" + GOOD[0] + "]", "not a JSON object with a data list"),
        ('{"data": {"idx": 0}}', "data is not a list"),
    ],
    ids=[
        "broken-row",
        "broken-refused-row",
        "extra",
        "cut-short",
        "repeated-data",
        "long-canary",
        "list",
        "data-object",
    ],
)
def test_a_file_that_is_not_json_or_not_a_task_file_is_refused_naming_it(
    tmp_path: Path, text: str, message: str
) -> None:
    path = task_text(tmp_path, "gk", text)

    with pytest.raises(InvalidInput, match=message) as raised:
        manbench.load(tmp_path)
    assert str(raised.value).startswith(f"{path} is not a ManBench task file: ")


def test_stale_and_memora_rows_strict_json_refuses_are_skipped_alone(tmp_path: Path) -> None:
    path = synthetic.write(tmp_path / "stale.json", count=3)
    records = [json.dumps(r) for r in json.loads(path.read_text("utf-8"))]
    records[1] = records[1].replace('{"uid": ', '{"uid": "x", "uid": ', 1)
    path.write_text("[" + ", ".join(records) + "]", encoding="utf-8")
    persona = tmp_path / "software_engineer"
    shutil.copytree(PERSONA, persona)
    session = sorted((persona / "conversations").glob("session_*.json"))[2]
    data = json.loads(session.read_text("utf-8"))
    turns = [json.dumps(t) for t in data["conversation"]]
    turns[0] = turns[0].replace('{"turn": ', '{"turn": 1, "turn": ', 1)
    rest = json.dumps({k: v for k, v in data.items() if k != "conversation"})
    session.write_text(rest[:-1] + ', "conversation": [' + ", ".join(turns) + "]}", "utf-8")

    evaluation = persona / "evaluation_questions_software_engineer.json"
    questions = json.loads(evaluation.read_text("utf-8"))["questions"]
    groups = {g: [json.dumps(q) for q in qs] for g, qs in questions.items()}
    groups["reasoning"][1] = groups["reasoning"][1].replace("{", '{"n": ' + "1" * 101 + ", ", 1)
    listed = ", ".join(f'"{g}": [' + ", ".join(qs) + "]" for g, qs in groups.items())
    evaluation.write_text('{"questions": {' + listed + "}}", encoding="utf-8")

    loaded = stale.load(path)
    read = memora.load(persona)

    assert [e.id for e in loaded.episodes] == ["stale/synthetic-0", "stale/synthetic-2"]
    assert [str(s) for s in loaded.skipped] == [
        f"{path} record 1: JSON object repeats the key 'uid'"
    ]
    assert [str(s) for s in read.skipped] == [
        f"{session} conversation[0]: JSON object repeats the key 'turn'",
        f"{evaluation} questions.reasoning[1]: JSON number is longer than 100 characters",
    ]
    assert len(read.episodes) == 3 * 14  # 3 departures, the 14 other questions


def test_null_multiple_choice_targets_are_as_if_absent(tmp_path: Path) -> None:
    absent = {k: v for k, v in manbench_row(1).items() if k != "multiple_choice_targets"}
    task_text(
        tmp_path,
        "gk",
        rows_text(json.dumps(manbench_row(0, multiple_choice_targets=None)), json.dumps(absent)),
    )

    loaded = manbench.load(tmp_path)

    assert loaded.skipped == ()
    assert [e.probes[0].options for e in loaded.episodes] == [(), ()]


@pytest.mark.parametrize("field", ["targets", "inputs", "misleading_target", "idx"])
def test_null_is_still_refused_where_a_value_is_required(tmp_path: Path, field: str) -> None:
    task_text(tmp_path, "gk", rows_text(GOOD[0], json.dumps({**manbench_row(1), field: None})))

    loaded = manbench.load(tmp_path)

    [skipped] = loaded.skipped
    assert skipped.reason.startswith(f"{field}: ")
    assert "NoneType" not in skipped.reason


@pytest.mark.parametrize(
    ("value", "shape"),
    [([1, 2], "a list"), ("a row", "a string"), (None, "null"), (3, "a number"), (True, "true")],
)
def test_a_row_that_is_no_object_is_said_so_in_plain_words(
    tmp_path: Path, value: Any, shape: str
) -> None:
    path = task_text(tmp_path, "gk", rows_text(GOOD[0], json.dumps(value)))

    [skipped] = manbench.load(tmp_path).skipped

    expected = f"expected an object with idx, inputs, targets and misleading_target, got {shape}"
    assert str(skipped) == f"{path} row 1: {expected}"


def test_stale_records_not_of_type_i_are_left_out_and_counted(tmp_path: Path) -> None:
    path = synthetic.write(tmp_path / "stale.json", count=4)
    records = json.loads(path.read_text("utf-8"))
    records[1]["type"], records[3]["type"] = "II", "type III"
    path.write_text(json.dumps(records), encoding="utf-8")

    loaded = stale.load(path)

    assert [e.id for e in loaded.episodes] == ["stale/synthetic-0", "stale/synthetic-2"]
    assert loaded.skipped == ()
    assert [str(s) for s in loaded.left_out] == [
        f"{path} record {n} (uid synthetic-{n}): type: {kind!r}, not Type I "
        "(STALE episodes are of Type I records only)"
        for n, kind in ((1, "II"), (3, "type III"))
    ]


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of ``module.name`` (an episode or history builder)."""
    calls: list[int] = []
    real: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _ids(episodes: list[Episode]) -> list[str]:
    return [f"{e.id} {e.team_size}" for e in episodes]


@pytest.mark.parametrize(("n", "seed"), [(1, 0), (2, 0), (3, 7), (50, 1)])
def test_sampling_planned_episodes_draws_what_sampling_built_ones_drew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, seed: int
) -> None:
    for task, count in (("a", 7), ("b", 4), ("c", 1)):
        rows = [json.dumps(manbench_row(k)) for k in range(count)] + ['"junk"']
        task_text(tmp_path, task, rows_text(*rows))
    built = _counting(monkeypatch, manbench, "episode")
    every = manbench.load(tmp_path, teams=(4, 8)).episodes
    assert len(built) == len(every) == 24
    built.clear()

    planned = sample_each(manbench.plan(tmp_path, teams=(4, 8)).episodes, n, seed)
    assert built == []  # planning builds nothing
    chosen = [p.build() for p in planned]

    assert _ids(chosen) == _ids(sample_each(every, n, seed))
    assert len(built) == len(chosen) == 2 * (min(n, 7) + min(n, 5))  # 2 teams


def test_memora_and_stale_plans_build_only_what_is_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    histories = _counting(monkeypatch, memora, "_history")
    made = _counting(monkeypatch, stale, "episode")
    every = (
        memora.load(PERSONA).episodes + stale.load(synthetic.write(tmp_path / "s.json", 6)).episodes
    )
    histories.clear()
    made.clear()

    planned = sample_each(
        memora.plan(PERSONA).episodes + stale.plan(tmp_path / "s.json").episodes, 1, 3
    )
    chosen = [p.build() for p in planned]

    assert _ids(chosen) == _ids(sample_each(every, 1, 3))
    assert len(histories) == 3  # one a departure fraction: 3 drawn of memora's 3 conditions
    assert len(made) == len({e.condition for e in every if e.suite == "stale"})
