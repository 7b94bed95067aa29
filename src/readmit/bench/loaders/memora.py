"""Memora persona directories → return episodes at 25/50/75% departure (appendix D.3).

The agent sees conversation messages only. ``operation``, ``operation_details``,
``share_memory``, ``memory_evidence``, ``forgetting_evidence`` and ``evaluation``
are evaluator-only: here they only decide which recorded items count as the
memories a question needs present (C^P) and absent (C^F). Offline, presence and
forgetting are scored at admission (is the item that carried the memory in the
method's context?); answer-level judging needs an LLM.

A row that cannot make its part of an episode is skipped and recorded in
:class:`Memora`'s ``skipped`` with its file, where in it, and why; it never stops
the run: a turn that is not ``{turn: int, speaker: str, message: str}`` or whose
message holds what no item may carry (a control character), a turn repeating the
number of an earlier turn of its session, a session file that is no ``{session_id:
int, conversation: [...]}``, a turn or session number of more than `NUMBER_CHARS`
characters (it names an item, ``s<session_id>-t<turn>``), and a question without
``question_id`` or ``question`` or whose ``memory_evidence.remaining_tasks`` is not a
list of objects. A message that shows nothing (blank, only invisible characters) makes
no item, as before. A file that is not JSON, an evaluation file without a ``questions``
object of lists, and two session files with one ``session_id`` still stop it.

The persona is the directory's resolved name (``memora:.`` names the folder it is run
in); its `label` names the episodes' workspace and principal. The evaluation file is
``evaluation_questions_<persona>.json``, or the only ``evaluation_questions_*.json``.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from readmit import strict_json
from readmit.bench.episode import Episode, Probe
from readmit.bench.history import History
from readmit.bench.loaders.rows import SkippedRow, label, problem
from readmit.errors import InvalidInput
from readmit.wire.fields import check_text, says_nothing

FRACTIONS = (0.25, 0.5, 0.75)
NUMBER_CHARS = 96
"""The longest turn or session number, written out: item ids ``s<session>-t<turn>`` are
`Name` s (200 characters at most)."""


def _short(value: int) -> int:
    """``value``, if it is at most `NUMBER_CHARS` characters written out."""
    if len(str(value)) > NUMBER_CHARS:
        raise ValueError(f"at most {NUMBER_CHARS} characters written out (it names an item)")
    return value


class _Turn(BaseModel):
    model_config = ConfigDict(extra="allow")
    turn: int = Field(strict=True)
    speaker: str
    message: str

    _turn = field_validator("turn")(_short)

    @field_validator("message")
    @classmethod
    def _storable(cls, value: str) -> str:
        """A message an item may carry (as far as an item takes it): no control character."""
        if value.strip():
            try:
                check_text(value[:MESSAGE_CHARS], "message")
            except InvalidInput as exc:
                raise ValueError(str(exc).removeprefix("message: ")) from None
        return value

    def text(self) -> str | None:
        """What its item holds; ``None`` if that would show nothing (it makes no item)."""
        text = self.message[:MESSAGE_CHARS]
        return None if says_nothing(text) else text


MESSAGE_CHARS = 8000
"""How much of a message its item holds."""


class _Session(BaseModel):
    """The parts of a session file an episode reads (the rest is evaluator-only or unused)."""

    model_config = ConfigDict(extra="allow")
    session_id: int = Field(strict=True)
    conversation: list[Any]
    """Turns, each validated on its own (`_Turn`)."""

    _session_id = field_validator("session_id")(_short)


@dataclass(frozen=True, slots=True)
class _Read:
    """A session file: its path, its ``session_id`` and its valid turns."""

    path: Path
    session_id: int
    turns: list[_Turn]


class _Evidence(BaseModel):
    model_config = ConfigDict(extra="allow")
    remaining_tasks: list[dict[str, Any]] = []


class _Criterion(BaseModel):
    """What `readmit.bench.llm` asks the judge of an answer (it read these keys unchecked)."""

    model_config = ConfigDict(extra="allow")
    evaluation_question: str
    expected_answer: str
    evaluation_type: str = ""


class _Judging(BaseModel):
    model_config = ConfigDict(extra="allow")
    evaluation_questions: list[_Criterion] = []


class _Question(BaseModel):
    model_config = ConfigDict(extra="allow")
    question_id: str
    question: str
    memory_evidence: _Evidence = Field(default_factory=_Evidence)
    forgetting_evidence: Any = None
    evaluation: _Judging = Field(default_factory=_Judging)


class _Evaluation(BaseModel):
    model_config = ConfigDict(extra="allow")
    questions: dict[str, list[Any]]
    """Groups of questions, each validated on its own (`_Question`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Memora:
    """What :func:`load` read: the episodes, and the rows it skipped."""

    episodes: list[Episode]
    skipped: tuple[SkippedRow, ...]


_Shape = TypeVar("_Shape", bound=BaseModel)


def _json(path: Path) -> Any:
    """The JSON document of the file at ``path``.

    Raises:
        InvalidInput: naming the file, if it cannot be read or is not JSON.
    """
    try:
        return strict_json.loads(path.read_bytes())
    except (OSError, InvalidInput) as exc:
        raise InvalidInput(f"cannot read Memora file {path}: {exc}") from exc


def _load(path: Path, shape: type[_Shape]) -> _Shape:
    """The file at ``path`` as ``shape``.

    Raises:
        InvalidInput: naming the file, and the field where it is not of that shape.
    """
    data = _json(path)
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(f"Memora file {path}: {problem(exc, 'the file')}") from None


def _session(path: Path, skipped: list[SkippedRow]) -> _Read | None:
    """The session of one file and its valid turns (``None`` if it is none); the rest is skipped.

    Raises:
        InvalidInput: naming the file, if it cannot be read or is not JSON.
    """
    try:
        session = _Session.model_validate(_json(path))
    except ValidationError as exc:
        skipped.append(SkippedRow(file=path, row="", reason=problem(exc, "the file")))
        return None
    turns: list[_Turn] = []
    first: dict[int, int] = {}  # turn number → its first position
    for n, raw in enumerate(session.conversation):
        try:
            turn = _Turn.model_validate(raw)
        except ValidationError as exc:
            skipped.append(SkippedRow(file=path, row=f"conversation[{n}]", reason=problem(exc)))
            continue
        if first.setdefault(turn.turn, n) != n:  # its item would take an earlier turn's id
            again = f"turn: {turn.turn} is conversation[{first[turn.turn]}]'s number too"
            skipped.append(SkippedRow(file=path, row=f"conversation[{n}]", reason=again))
            continue
        turns.append(turn)
    return _Read(path, session.session_id, turns)


def _questions(path: Path, skipped: list[SkippedRow]) -> list[_Question]:
    """The valid questions of an evaluation file, in order; the rest is skipped.

    Raises:
        InvalidInput: naming the file, if it is not JSON or has no ``questions`` object of lists.
    """
    found: list[_Question] = []
    first: dict[str, str] = {}  # question_id -> where it is first: episode ids are made of it
    for group, rows in _load(path, _Evaluation).questions.items():
        for n, raw in enumerate(rows):
            where = f"questions.{group}[{n}]"
            try:
                question = _Question.model_validate(raw)
            except ValidationError as exc:
                skipped.append(SkippedRow(file=path, row=where, reason=problem(exc)))
                continue
            if question.question_id in first:
                why = f"question_id: repeats {first[question.question_id]}'s (episodes share ids)"
                skipped.append(SkippedRow(file=path, row=where, reason=why))
                continue
            first[question.question_id] = where
            found.append(question)
    return found


def _criteria(entries: list[dict[str, Any]], carriers: dict[int, list[str]]) -> list[str]:
    """The items that carried each evidence entry's memory (entries in missing sessions drop)."""
    found = []
    for entry in entries:
        session = entry.get("session_id")
        found += carriers.get(session, []) if isinstance(session, int) else []
    return found


def load(persona_dir: Path, teams: Sequence[int] = (4,)) -> Memora:
    """One episode per (team size, departure fraction, question) of a persona directory.

    Malformed rows are skipped and listed in the result (once, whatever the team sizes).

    Raises:
        InvalidInput: if the directory has no sessions or no evaluation file, or a file is
            not JSON, the evaluation file has no ``questions``, two sessions share an id.
    """
    files = sorted((persona_dir / "conversations").glob("session_*.json"))
    evaluation = _evaluation_file(persona_dir)
    if not files or evaluation is None:
        raise InvalidInput(
            f"{persona_dir}: expected conversations/session_*.json and "
            "evaluation_questions_<persona>.json"
        )
    skipped: list[SkippedRow] = []
    sessions = [s for s in (_session(p, skipped) for p in files) if s is not None]
    if not sessions:
        raise InvalidInput(f"{persona_dir}: no session file is a session (first: {skipped[0]})")
    _distinct(sessions)
    questions = _questions(evaluation, skipped)
    persona = label(persona_dir.resolve().name)
    found: list[Episode] = []
    for team in teams:
        for fraction in FRACTIONS:
            history, carriers = _history(persona, sessions, fraction, team)
            found += [_episode(persona, fraction, q, (history, carriers), team) for q in questions]
    return Memora(episodes=found, skipped=tuple(skipped))


def _evaluation_file(persona_dir: Path) -> Path | None:
    """The persona's evaluation file: the one named for it, else the only one (or ``None``).

    Raises:
        InvalidInput: naming them, if there are several and none is named for the persona.
    """
    own = persona_dir / f"evaluation_questions_{persona_dir.resolve().name}.json"
    if os.path.lexists(own):  # a link that leads nowhere is named when it is read
        return own
    found = sorted(persona_dir.glob("evaluation_questions_*.json"))
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise InvalidInput(
            f"{persona_dir}: several evaluation files ({names}) and none is {own.name}"
        )
    return found[0] if found else None


def episodes(persona_dir: Path, team: int = 4) -> list[Episode]:
    """One episode per (departure fraction, question) of a persona directory.

    Malformed rows are skipped; use :func:`load` to learn which.

    Raises:
        InvalidInput: as :func:`load`.
    """
    return load(persona_dir, (team,)).episodes


def _episode(
    persona: str,
    fraction: float,
    q: _Question,
    made: tuple[dict[str, Any], dict[int, list[str]]],
    team: int,
) -> Episode:
    """The episode of question ``q`` on a history `_history` ``made`` (and its carriers)."""
    history, carriers = made
    evidence = q.memory_evidence
    presence = _criteria(
        evidence.remaining_tasks or _evidence_entries(evidence.model_dump()), carriers
    )
    forgetting = _criteria(_evidence_entries(q.forgetting_evidence), carriers)
    percent = int(fraction * 100)
    return Episode(
        id=f"memora/{persona}/{percent}/{q.question_id}",
        suite="memora",
        condition=f"{percent}%",
        scenario=history,
        returner="A0",
        task="assist",
        purpose="assist",
        valid=frozenset(presence),
        invalid=frozenset(forgetting),
        probes=(Probe(id=q.question_id, question=q.question, answer=""),),
        team_size=team,
        retrieve=24,
        judge={
            "presence": presence,
            "forgetting": forgetting,
            "criteria": [c.model_dump() for c in q.evaluation.evaluation_questions],
        },
    )


def _distinct(sessions: list[_Read]) -> None:
    """Refuse two session files with one ``session_id`` (their turns would share ids).

    Raises:
        InvalidInput: naming both files.
    """
    seen: dict[int, Path] = {}
    for session in sessions:
        other = seen.setdefault(session.session_id, session.path)
        if other is not session.path:
            sid = session.session_id
            raise InvalidInput(
                f"Memora files {other} and {session.path} both have session_id {sid}"
            )


def _evidence_entries(evidence: Any) -> list[dict[str, Any]]:
    if not isinstance(evidence, dict):
        return []
    return [e for v in evidence.values() if isinstance(v, list) for e in v if isinstance(e, dict)]


def _history(
    persona: str, sessions: list[_Read], fraction: float, team: int
) -> tuple[dict[str, Any], dict[int, list[str]]]:
    cut = max(1, round(len(sessions) * fraction))
    agents = [
        ("A0", persona, "assistant"),
        *((f"T{n}", persona, "assistant") for n in range(1, team + 1)),
    ]
    h = History(
        f"memora-{persona}-{int(fraction * 100)}",
        agents,
        {"max_items": 100_000, "max_chars": 10_000_000, "max_item_chars": 8000},
    )
    carriers: dict[int, list[str]] = {}
    for n, session in enumerate(sessions):
        author = "A0" if n < cut else f"T{1 + (n - cut) % team}"
        sid = session.session_id
        for turn in session.turns:
            text = turn.text()
            if turn.speaker == "ai_agent" or text is None:
                continue
            item_id = f"s{sid}-t{turn.turn}"
            h.item(author, item_id, text)
            if (turn.model_extra or {}).get("share_memory"):  # evaluator-only: criteria → items
                carriers.setdefault(sid, []).append(item_id)
        if n == cut - 1:
            h.add("depart", agent="A0")
    return h.scenario(), carriers
