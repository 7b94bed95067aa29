"""ManBench task files → ManBench-Return episodes (paper appendix D.5).

Positions alternate between the two conditions within a task. In ``old_valid``
the question stays and every teammate answers with the benchmark's misleading
target; in ``old_stale`` a teammate replaces the question with the task's next
example and the teammates answer it correctly. The returning agent's departure
answer is the correct target (the paper's eligibility rule: a correct departure
answer); its candidates at return are that answer and the teammates' challenger.

Row shapes: ``targets`` and ``multiple_choice_targets`` are lists of strings in
some tasks and nested lists of strings in others (``[["yes"]]``, ``[["A", "B"],
["C"]]``); both are flattened in order; ``multiple_choice_targets`` may be absent or
null (no options). A row that cannot make an episode (not an object, missing or blank
``inputs``, no targets, ``misleading_target`` absent, blank or not a string, a text no
event may carry, no integer ``idx``, JSON strict reading refuses: a repeated key, a
number of more than 100 characters, nesting too deep) is skipped and recorded in
:class:`ManBench`'s ``skipped`` with its file, position, idx and reason; it never stops
the run. A file that is not a task file at all (not JSON, no ``data`` list, a
``val_data.json`` that cannot be read) still does.

Task files are found at any depth under the suite's folder. A task is named by its
folder's name, or by that folder's path under the suite's folder where two tasks share a
name, so they make distinct episodes.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from readmit.bench.episode import Episode, Planned, Probe
from readmit.bench.history import History
from readmit.bench.loaders import json_rows
from readmit.bench.loaders.manbench_files import TASK_FILE, task_files, task_names
from readmit.bench.loaders.rows import Plan, label, shape
from readmit.errors import InvalidInput
from readmit.wire.fields import check_text, plain, says_nothing


class _Example(BaseModel):
    model_config = ConfigDict(extra="ignore")  # the rest of a row is not read: not kept
    idx: int = Field(strict=True)
    inputs: str
    targets: list[str]
    multiple_choice_targets: list[str] = []
    misleading_target: str

    @field_validator("targets", "multiple_choice_targets", mode="before")
    @classmethod
    def _flat(cls, value: Any, info: ValidationInfo) -> list[str]:
        if value is None and info.field_name == "multiple_choice_targets":
            return []  # as if absent: optional (targets, required, may not be null)
        return flatten(value)

    @field_validator("targets")
    @classmethod
    def _some(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("no targets")
        _storable(ANSWER, value[0])  # the one an episode states
        return value

    @field_validator("inputs")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("blank inputs")
        return _storable(QUESTION, value)

    @field_validator("misleading_target")
    @classmethod
    def _misleading(cls, value: str) -> str:
        if says_nothing(value):  # the teammates' claim would be an answer saying nothing
            raise ValueError("blank misleading_target")
        return _storable(ANSWER, value)


QUESTION, ANSWER = "Current question: ", "Answer to the current question: "
"""What an episode's question and answer items say before the row's own text."""
_CONDITIONS = ("old_valid", "old_stale")
"""The condition of an episode at an even position, and at an odd one."""


def _storable(prefix: str, value: str) -> str:
    """``value``, if the item text it makes is one an event may carry (`Text`)."""
    try:
        check_text(prefix + value, "text")
    except InvalidInput as exc:
        raise ValueError(str(exc).removeprefix("text: ")) from None
    return value


def flatten(value: Any) -> list[str]:
    """The strings of ``value`` in order, however deeply its lists nest; blanks are dropped.

    ``[["A", "B"], ["C"]]`` → ``["A", "B", "C"]``; a bare string is a list of one.

    Raises:
        ValueError: for anything but strings and lists of them.
    """
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, list):
        raise ValueError(f"expected strings or lists of strings, got {shape(value)}")
    return [s for v in value for s in flatten(v)]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedRow:
    """A row of a task file that could not make an episode."""

    task: str
    file: Path
    position: int
    """Its index in the file's ``data`` list."""
    idx: int | None
    """Its own ``idx`` field, when that is an integer."""
    reason: str

    def __str__(self) -> str:
        where = f"idx {self.idx}" if self.idx is not None else f"row {self.position}"
        return f"{self.file} {where}: {self.reason}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ManBench:
    """What :func:`load` read: the episodes, the rows it skipped, and each episode's file."""

    episodes: list[Episode]
    skipped: tuple[SkippedRow, ...]
    files: dict[str, Path] = field(default_factory=dict)
    """Episode id → the task file it was made of (to name it if the episode fails later)."""


def read_task(path: Path, task: str | None = None) -> tuple[list[_Example], list[SkippedRow]]:
    """The valid examples of one ``val_data.json``, and the rows skipped as malformed.

    ``task`` names the task in skipped rows (default: the file's folder's name).

    Raises:
        InvalidInput: if the file is not a ManBench task file (not JSON, no ``data`` list).
    """
    try:
        document = json_rows.load(path.read_bytes(), ("data",))
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    except InvalidInput as exc:
        raise InvalidInput(f"{path} is not a ManBench task file: {exc}") from exc
    rows = document.get("data") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        shape = (
            "data is not a list"
            if isinstance(document, dict) and "data" in document
            else ("it is not a JSON object with a data list")
        )
        raise InvalidInput(f"{path} is not a ManBench task file: {shape}")
    examples: list[_Example] = []
    skipped: list[SkippedRow] = []
    where = (task or path.parent.name, path)
    for position, row in enumerate(rows):
        if not isinstance(row, dict):
            skipped.append(_skipped(where, position, row, _not_a_row(row)))
            continue
        try:
            examples.append(_Example.model_validate(row))
        except ValidationError as exc:
            error = exc.errors()[0]
            at = ".".join(str(part) for part in error["loc"]) or "row"
            skipped.append(_skipped(where, position, row, f"{at}: {plain(str(error['msg']))}"))
    return examples, skipped


def _not_a_row(row: Any) -> str:
    """Why ``row``, not an object, is no row: what strict JSON refused, or what it is."""
    if isinstance(row, json_rows.Refused):
        return row.reason
    return f"expected an object with idx, inputs, targets and misleading_target, got {shape(row)}"


def _skipped(where: tuple[str, Path], position: int, row: Any, reason: str) -> SkippedRow:
    idx = row.get("idx") if isinstance(row, dict) else None
    return SkippedRow(
        task=where[0],
        file=where[1],
        position=position,
        idx=idx if isinstance(idx, int) and not isinstance(idx, bool) else None,
        reason=reason,
    )


def _answer_item(h: History, author: str, item_id: str, answer: str, task: str) -> None:
    h.item(
        author,
        item_id,
        ANSWER + answer,
        depends_on=[task],
        supports=["d_answer"],
    )


def episode(task: str, examples: list[_Example], k: int, team: int = 4) -> Episode:
    """The episode at position ``k`` of a task (condition by parity).

    The task is named in the episode's id and workspace by its `label`.
    """
    current, nxt = examples[k], examples[(k + 1) % len(examples)]
    condition = _CONDITIONS[k % 2]
    agents = [("A0", "team", "solver"), *((f"T{n}", "team", "solver") for n in range(1, team + 1))]
    task = label(task)
    h = History(f"manbench-{task}-{k}", agents, {"max_items": 4, "max_chars": 8000})
    h.add(
        "obligation",
        author="A0",
        obligation={
            "id": "task",
            "text": "Answer the current question.",
            "role": "solver",
            "requires": ["d_answer", "d_question"],
            "critical": ["d_answer"],
            "frontier": {"id": "task-frontier", "text": "Final answer pending."},
        },
    )
    h.item(
        "A0",
        "question-0",
        QUESTION + current.inputs,
        key="question",
        supports=["d_question"],
    )
    _answer_item(h, "A0", "answer-0", current.targets[0], "question-0")
    h.add("depart", agent="A0")
    values: dict[str, tuple[str, str]] = {"answer-0": ("answer", current.targets[0])}
    if condition == "old_valid":
        truth, question = current.targets[0], current.inputs
        for n in range(1, team + 1):
            _answer_item(h, f"T{n}", f"claim-{n}", current.misleading_target, "question-0")
            values[f"claim-{n}"] = ("answer", current.misleading_target)
        valid, invalid = {"answer-0"}, {f"claim-{n}" for n in range(1, team + 1)}
    else:
        truth, question = nxt.targets[0], nxt.inputs
        h.item(
            "T1",
            "question-1",
            QUESTION + nxt.inputs,
            key="question",
            supports=["d_question"],
        )
        for n in range(1, team + 1):
            _answer_item(h, f"T{n}", f"claim-{n}", nxt.targets[0], "question-1")
            values[f"claim-{n}"] = ("answer", nxt.targets[0])
        valid = {"|".join(f"claim-{n}" for n in range(1, team + 1))}  # any copy will do
        invalid = {"answer-0"}
    probe = Probe(
        id="answer",
        question=question,
        answer=truth,
        options=tuple(current.multiple_choice_targets),
        key="answer",
        stale_answer=current.targets[0],
    )
    return Episode(
        id=f"manbench/{task}/{k}",
        suite="manbench",
        condition=condition,
        scenario=h.scenario(),
        returner="A0",
        task="qa",
        purpose="qa",
        valid=frozenset(valid),
        invalid=frozenset(invalid),
        probes=(probe,),
        values=values,
        team_size=team,
        judge={"task": task},
    )


def load(root: Path, teams: Sequence[int] = (4,), per_task: int | None = None) -> ManBench:
    """Episodes of every ``val_data.json`` under ``root`` (`task_files`) for each team size.

    Malformed rows are skipped and listed in the result (once, whatever the team sizes);
    ``per_task`` counts valid examples.

    Raises:
        InvalidInput: as `plan`.
    """
    planned = plan(root, teams, per_task)
    episodes = [p.build() for p in planned.episodes]
    return ManBench(episodes=episodes, skipped=planned.skipped, files=planned.files)


def plan(root: Path, teams: Sequence[int] = (4,), per_task: int | None = None) -> Plan[SkippedRow]:
    """`load`'s episodes, in its order, planned: each task file read, no episode built.

    Raises:
        InvalidInput: if there is no task file under ``root``, or one cannot be read or is
            not a task file, or a folder under ``root`` cannot be listed.
    """
    files = task_files(root)
    if not files:
        raise InvalidInput(f"no ManBench task files (*/{TASK_FILE}) under {root}")
    tasks: list[tuple[Path, list[_Example]]] = []
    skipped: list[SkippedRow] = []
    names = task_names(root, files)
    for path in files:
        examples, bad = read_task(path, names[path])
        tasks.append((path, examples))
        skipped += bad
    found: list[Planned] = []
    made: dict[str, Path] = {}
    labels = {path: label(name) for path, name in names.items()}  # as `episode` names it
    for team in teams:
        for path, examples in tasks:
            for k in range(len(examples) if per_task is None else min(per_task, len(examples))):
                ident = f"manbench/{labels[path]}/{k}"
                build = partial(episode, names[path], examples, k, team)
                found.append(
                    Planned(
                        id=ident,
                        suite="manbench",
                        condition=_CONDITIONS[k % 2],
                        team_size=team,
                        build=build,
                    )
                )
                made[ident] = path
    return Plan(episodes=found, skipped=tuple(skipped), files=made)


def episodes(root: Path, team: int = 4, per_task: int | None = None) -> list[Episode]:
    """Episodes of every ``val_data.json`` under ``root``, skipping malformed rows.

    Use :func:`load` to learn which rows were skipped.
    """
    return load(root, (team,), per_task).episodes
