"""ManBench task files → ManBench-Return episodes (paper appendix D.5).

Positions alternate between the two conditions within a task. In ``old_valid``
the question stays and every teammate answers with the benchmark's misleading
target; in ``old_stale`` a teammate replaces the question with the task's next
example and the teammates answer it correctly. The returning agent's departure
answer is the correct target (the paper's eligibility rule: a correct departure
answer); its candidates at return are that answer and the teammates' challenger.
"""

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from readmit.bench.episode import Episode, Probe
from readmit.bench.history import History
from readmit.errors import InvalidInput


class _Example(BaseModel):
    model_config = ConfigDict(extra="allow")
    idx: int
    inputs: str
    targets: list[str]
    multiple_choice_targets: list[str]
    misleading_target: str


def read_task(path: Path) -> list[_Example]:
    """The examples of one ``val_data.json``.

    Raises:
        InvalidInput: if the file is not a ManBench task file.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return [_Example.model_validate(e) for e in raw["data"]]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InvalidInput(f"{path} is not a ManBench task file: {exc!r}") from exc
    except ValidationError as exc:
        raise InvalidInput(f"{path}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None


def _answer_item(h: History, author: str, item_id: str, answer: str, task: str) -> None:
    h.item(
        author,
        item_id,
        f"Answer to the current question: {answer}",
        depends_on=[task],
        supports=["d_answer"],
    )


def episode(task: str, examples: list[_Example], k: int, team: int = 4) -> Episode:
    """The episode at position ``k`` of a task (condition by parity)."""
    current, nxt = examples[k], examples[(k + 1) % len(examples)]
    condition = "old_valid" if k % 2 == 0 else "old_stale"
    agents = [("A0", "team", "solver"), *((f"T{n}", "team", "solver") for n in range(1, team + 1))]
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
        f"Current question: {current.inputs}",
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
            f"Current question: {nxt.inputs}",
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


def episodes(root: Path, team: int = 4, per_task: int | None = None) -> list[Episode]:
    """Episodes of every ``<task>/val_data.json`` under ``root``."""
    files = sorted(root.glob("*/val_data.json")) or sorted(root.glob("**/val_data.json"))
    if not files:
        raise InvalidInput(f"no ManBench task files (*/val_data.json) under {root}")
    found: list[Episode] = []
    for path in files:
        examples = read_task(path)
        count = len(examples) if per_task is None else min(per_task, len(examples))
        found += [episode(path.parent.name, examples, k, team) for k in range(count)]
    return found
