"""Memora files that are not of the shape an episode reads: one clear error naming the file
and the field, before any episode runs (they were KeyErrors reported as internal); a
session, turn or question that cannot make its part of an episode is skipped, named and
counted instead."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from readmit.bench.episode import Episode
from readmit.bench.loaders import memora
from readmit.bench.methods import methods
from readmit.bench.runner import run
from readmit.cli import cli
from readmit.errors import InvalidInput
from readmit.plugins import make_verifier

SAMPLE = Path(__file__).parent.parent / "data" / "memora-sample" / "weekly" / "software_engineer"


def _drop(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: {k: v for k, v in data.items() if k != key}


def _turn(**change: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        turn = {**data["conversation"][0], **change}
        data["conversation"][0] = {k: v for k, v in turn.items() if v is not ...}
        return data

    return edit


SESSION_CASES = [
    (_drop("session_id"), ": session_id: Field required"),
    (_drop("conversation"), ": conversation: Field required"),
    (lambda d: {**d, "session_id": "x"}, ": session_id: Input should be a valid integer"),
    (lambda d: [], ": the file: Input should be a valid dictionary"),
    (_turn(message=5), " conversation[0]: message: Input should be a valid string"),
    (_turn(message="a\x00b"), " conversation[0]: message: may not contain U+0000"),
    (_turn(turn=...), " conversation[0]: turn: Field required"),
    (_turn(turn="1"), " conversation[0]: turn: Input should be a valid integer"),
    (_turn(speaker=5), " conversation[0]: speaker: Input should be a valid string"),
    (
        lambda d: {**d, "conversation": ["hello", *d["conversation"][1:]]},
        " conversation[0]: Input should be a valid dictionary",
    ),
]


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    copy = tmp_path / "software_engineer"
    shutil.copytree(SAMPLE, copy)
    return copy


def _edit(path: Path, change: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text("utf-8")))), encoding="utf-8")


def _session(persona: Path, n: int = 2) -> Path:
    return sorted((persona / "conversations").glob("session_*.json"))[n]


def _item_ids(episode: Episode) -> list[str]:
    return [e["item"]["id"] for e in episode.scenario["events"] if e["op"] == "assert"]


@pytest.mark.parametrize(("change", "message"), SESSION_CASES)
def test_a_session_or_turn_not_of_the_shape_is_skipped_naming_the_file_and_the_field(
    persona: Path, change: Callable[[Any], Any], message: str
) -> None:
    """One of them ended the run (a persona has 163 sessions of about 20 turns)."""
    every = memora.load(persona).episodes
    path = _session(persona)
    _edit(path, change)

    loaded = memora.load(persona)

    [skipped] = loaded.skipped
    assert str(skipped).startswith(f"{path}{message}")
    assert [e.id for e in loaded.episodes] == [e.id for e in every]
    kept, before = set(_item_ids(loaded.episodes[0])), set(_item_ids(every[0]))
    assert kept < before  # the skipped turn, or the whole session
    assert {i for i in before - kept if not i.startswith("s3-")} == set()


def test_a_turn_repeating_a_turn_number_of_its_session_is_skipped(persona: Path) -> None:
    """Its item took the earlier turn's id: the run ended at the replay, naming an event."""
    path = _session(persona)
    _edit(
        path,
        lambda d: {
            **d,
            "conversation": [
                *d["conversation"][:2],
                {**d["conversation"][2], "turn": 1},
                *d["conversation"][3:],
            ],
        },
    )

    loaded = memora.load(persona)

    assert [str(s) for s in loaded.skipped] == [
        f"{path} conversation[2]: turn: 1 is conversation[0]'s number too"
    ]
    [row] = run(loaded.episodes[:1], methods(["Static"], make_verifier("builtin")))
    assert row.error is None
    assert "s3-t1" in _item_ids(loaded.episodes[0])


def test_a_message_that_shows_nothing_makes_no_item(persona: Path) -> None:
    """As a blank one: only invisible characters made an item the replay refused."""
    _edit(_session(persona), _turn(message="\u200b\u2060"))

    loaded = memora.load(persona)

    assert loaded.skipped == ()
    assert "s3-t1" not in _item_ids(loaded.episodes[0])
    assert "s3-t3" in _item_ids(loaded.episodes[0])
    [row] = run(loaded.episodes[:1], methods(["Static"], make_verifier("builtin")))
    assert row.error is None


def test_a_persona_with_no_readable_session_is_refused(persona: Path) -> None:
    for path in (persona / "conversations").glob("session_*.json"):
        _edit(path, _drop("session_id"))

    with pytest.raises(InvalidInput, match="no session file is a session") as raised:
        memora.load(persona)
    assert "session_id: Field required" in str(raised.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_drop("questions"), "questions: Field required"),
        (lambda d: {**d, "questions": []}, "questions: Input should be a valid dictionary"),
        (
            lambda d: {**d, "questions": {"remembering": "?"}},
            "questions.remembering: Input should be a valid list",
        ),
    ],
)
def test_an_evaluation_file_not_of_the_shape_names_itself_and_the_field(
    persona: Path, change: Callable[[Any], Any], message: str
) -> None:
    [path] = persona.glob("evaluation_questions_*.json")
    _edit(path, change)

    with pytest.raises(InvalidInput, match="Memora file") as raised:
        memora.episodes(persona)
    assert message in str(raised.value)


def test_two_session_files_with_one_session_id_are_named(persona: Path) -> None:
    first, second = sorted((persona / "conversations").glob("session_*.json"))[:2]
    sid = json.loads(first.read_text("utf-8"))["session_id"]
    _edit(second, lambda d: {**d, "session_id": sid})

    with pytest.raises(InvalidInput, match=f"both have session_id {sid}") as raised:
        memora.episodes(persona)
    assert str(first) in str(raised.value)
    assert str(second) in str(raised.value)


def _question(**change: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        first = data["questions"]["remembering"][0]
        data["questions"]["remembering"][0] = {
            k: v for k, v in {**first, **change}.items() if v is not ...
        }
        return data

    return edit


QUESTION_CASES = [
    (
        _question(memory_evidence={"remaining_tasks": ["Optimize database queries"]}),
        "memory_evidence.remaining_tasks.0: Input should be a valid dictionary",
    ),
    (
        _question(memory_evidence={"remaining_tasks": "Optimize database queries"}),
        "memory_evidence.remaining_tasks: Input should be a valid list",
    ),
    (
        _question(memory_evidence={"remaining_tasks": {"session_id": 3}}),
        "memory_evidence.remaining_tasks: Input should be a valid list",
    ),
    (_question(memory_evidence=[]), "memory_evidence: Input should be a valid dictionary"),
    (_question(question_id=...), "question_id: Field required"),
    (_question(question=5), "question: Input should be a valid string"),
    (  # read unchecked by the judge of --llm runs: a KeyError there
        _question(evaluation={"evaluation_questions": [{"evaluation_question": "Said?"}]}),
        "evaluation.evaluation_questions.0.expected_answer: Field required",
    ),
    (
        _question(evaluation={"evaluation_questions": "Said?"}),
        "evaluation.evaluation_questions: Input should be a valid list",
    ),
]


def test_a_question_repeating_an_earlier_ones_id_is_skipped(persona: Path) -> None:
    """Their episodes shared ids, and their rows could not be told apart."""
    [path] = persona.glob("evaluation_questions_*.json")
    every = [e.id for e in memora.load(persona).episodes]
    first, second = json.loads(path.read_text("utf-8"))["questions"]["remembering"][:2]
    _edit(path, lambda d: _renamed(d, second["question_id"], first["question_id"]))

    loaded = memora.load(persona)

    said = "question_id: repeats questions.remembering[0]'s (episodes share ids)"
    assert [str(s) for s in loaded.skipped] == [f"{path} questions.remembering[1]: {said}"]
    assert len(loaded.episodes) == len(every) - len(memora.FRACTIONS)


def _renamed(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``data`` with the question ``old`` given id ``new``."""
    for rows in data["questions"].values():
        for row in rows:
            if row.get("question_id") == old:
                row["question_id"] = new
    return data


@pytest.mark.parametrize(("change", "message"), QUESTION_CASES)
def test_a_question_not_of_the_shape_is_skipped_naming_the_file_and_the_row(
    persona: Path, change: Callable[[Any], Any], message: str
) -> None:
    """Its remaining tasks were read with ``.get`` (an internal AttributeError ended the run)."""
    [path] = persona.glob("evaluation_questions_*.json")
    every = [e.id for e in memora.load(persona).episodes]
    first = json.loads(path.read_text("utf-8"))["questions"]["remembering"][0]["question_id"]
    _edit(path, change)

    loaded = memora.load(persona)

    assert [str(s) for s in loaded.skipped] == [f"{path} questions.remembering[0]: {message}"]
    assert [e.id for e in loaded.episodes] == [i for i in every if not i.endswith(f"/{first}")]
    assert len(loaded.episodes) == len(every) - len(memora.FRACTIONS)


def _small(persona: Path) -> None:
    """Four sessions and two questions: a run of seconds."""
    for path in sorted((persona / "conversations").glob("session_*.json"))[4:]:
        path.unlink()
    [evaluation] = persona.glob("evaluation_questions_*.json")
    _edit(
        evaluation, lambda d: {**d, "questions": {"remembering": d["questions"]["remembering"][:2]}}
    )


def test_bench_cli_completes_and_reports_a_skipped_question(persona: Path, tmp_path: Path) -> None:
    _small(persona)
    [path] = persona.glob("evaluation_questions_*.json")
    _edit(path, _question(memory_evidence={"remaining_tasks": ["Optimize database queries"]}))
    out = tmp_path / "out"

    result = CliRunner().invoke(
        cli, ["bench", "--suite", f"memora:{persona}", "--method", "TRACE", "--out", str(out)]
    )

    assert result.exit_code == 0, result.output
    said = f"memora {path} questions.remembering[0]: memory_evidence.remaining_tasks.0: "
    assert "warning: skipped 1 malformed data rows" in result.stderr
    assert said in result.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [r[: len(said)] for r in results["meta"]["skipped_rows"]] == [said]
    assert len({r["episode"] for r in results["rows"]}) == len(memora.FRACTIONS)
