"""Memora files that are not of the shape an episode reads: one clear error naming the file
and the field, before any episode runs (they were KeyErrors reported as internal)."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from readmit.bench.loaders import memora
from readmit.errors import InvalidInput

SAMPLE = Path(__file__).parent.parent / "data" / "memora-sample" / "weekly" / "software_engineer"


def _drop(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: {k: v for k, v in data.items() if k != key}


def _turn(**change: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        data["conversation"][0] = {**data["conversation"][0], **change}
        return data

    return edit


SESSION_CASES = [
    (_drop("session_id"), "session_id: Field required"),
    (_drop("conversation"), "conversation: Field required"),
    (lambda d: {**d, "session_id": "x"}, "session_id: Input should be a valid integer"),
    (_turn(message=5), "conversation.0.message: Input should be a valid string"),
    (_turn(message="a\x00b"), "conversation.0.message: may not contain U+0000"),
    (lambda d: [], "the file: Input should be a valid dictionary"),
]


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    copy = tmp_path / "software_engineer"
    shutil.copytree(SAMPLE, copy)
    return copy


def _edit(path: Path, change: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text("utf-8")))), encoding="utf-8")


@pytest.mark.parametrize(("change", "message"), SESSION_CASES)
def test_a_session_file_not_of_the_shape_names_itself_and_the_field(
    persona: Path, change: Callable[[Any], Any], message: str
) -> None:
    path = sorted((persona / "conversations").glob("session_*.json"))[2]
    _edit(path, change)

    with pytest.raises(InvalidInput) as raised:
        memora.episodes(persona)
    assert f"Memora file {path}: {message}" in str(raised.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_drop("questions"), "questions: Field required"),
        (lambda d: {**d, "questions": []}, "questions: Input should be a valid dictionary"),
        (
            lambda d: {**d, "questions": {"remembering": [{"question": "?"}]}},
            "questions.remembering.0.question_id: Field required",
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
