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
list of objects, and a turn or question JSON strict reading refuses (a repeated key, a
number of more than 100 characters, nesting too deep). A message that shows nothing
(blank, only invisible characters) makes no item, as before. A file that is not JSON, an
evaluation file without a ``questions`` object of lists, and two session files with one
``session_id`` still stop it.

The persona is the directory's resolved name (``memora:.`` names the folder it is run
in); its `label` names the episodes' workspace and principal. The evaluation file is
``evaluation_questions_<persona>.json``, or the only ``evaluation_questions_*.json``.
"""

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from readmit.bench.episode import Episode, Planned, Probe
from readmit.bench.history import History
from readmit.bench.loaders import json_rows
from readmit.bench.loaders.memora_rows import NUMBER_CHARS as NUMBER_CHARS
from readmit.bench.loaders.memora_rows import Evaluation, Question, Session, Turn
from readmit.bench.loaders.rows import Plan, SkippedRow, label, problem
from readmit.errors import InvalidInput

FRACTIONS = (0.25, 0.5, 0.75)


@dataclass(frozen=True, slots=True)
class _Read:
    """A session file: its path, its ``session_id`` and its valid turns."""

    path: Path
    session_id: int
    turns: list[Turn]


@dataclass(frozen=True, slots=True, kw_only=True)
class Memora:
    """What :func:`load` read: the episodes, and the rows it skipped."""

    episodes: list[Episode]
    skipped: tuple[SkippedRow, ...]


_Shape = TypeVar("_Shape", bound=BaseModel)


def _json(path: Path, rows_at: tuple[str, ...]) -> Any:
    """The JSON document of the file at ``path``, its rows at ``rows_at`` each on its own.

    Raises:
        InvalidInput: naming the file, if it cannot be read or is not JSON.
    """
    try:
        return json_rows.load(path.read_bytes(), rows_at)
    except (OSError, InvalidInput) as exc:
        raise InvalidInput(f"cannot read Memora file {path}: {exc}") from exc


def _load(path: Path, shape: type[_Shape], rows_at: tuple[str, ...]) -> _Shape:
    """The file at ``path`` as ``shape``; its rows at ``rows_at`` read each on its own (`_json`).

    Raises:
        InvalidInput: naming the file, and the field where it is not of that shape.
    """
    data = _json(path, rows_at)
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
        session = Session.model_validate(_json(path, ("conversation",)))
    except ValidationError as exc:
        skipped.append(SkippedRow(file=path, row="", reason=problem(exc, "the file")))
        return None
    turns: list[Turn] = []
    first: dict[int, int] = {}  # turn number → its first position
    for n, raw in enumerate(session.conversation):
        if isinstance(raw, json_rows.Refused):
            skipped.append(SkippedRow(file=path, row=f"conversation[{n}]", reason=raw.reason))
            continue
        try:
            turn = Turn.model_validate(raw)
        except ValidationError as exc:
            skipped.append(SkippedRow(file=path, row=f"conversation[{n}]", reason=problem(exc)))
            continue
        if first.setdefault(turn.turn, n) != n:  # its item would take an earlier turn's id
            again = f"turn: {turn.turn} is conversation[{first[turn.turn]}]'s number too"
            skipped.append(SkippedRow(file=path, row=f"conversation[{n}]", reason=again))
            continue
        turns.append(turn)
    return _Read(path, session.session_id, turns)


def _questions(path: Path, skipped: list[SkippedRow]) -> list[Question]:
    """The valid questions of an evaluation file, in order; the rest is skipped.

    Raises:
        InvalidInput: naming the file, if it is not JSON or has no ``questions`` object of lists.
    """
    found: list[Question] = []
    first: dict[str, str] = {}  # question_id -> where it is first: episode ids are made of it
    for group, rows in _load(path, Evaluation, ("questions", json_rows.EACH)).questions.items():
        for n, raw in enumerate(rows):
            where = f"questions.{group}[{n}]"
            if isinstance(raw, json_rows.Refused):
                skipped.append(SkippedRow(file=path, row=where, reason=raw.reason))
                continue
            try:
                question = Question.model_validate(raw)
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
        InvalidInput: as `plan`.
    """
    planned = plan(persona_dir, teams)
    return Memora(episodes=[p.build() for p in planned.episodes], skipped=planned.skipped)


def plan(persona_dir: Path, teams: Sequence[int] = (4,)) -> Plan[SkippedRow]:
    """`load`'s episodes, in its order, planned: the files read, no history or episode built.

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
    found: list[Planned] = []
    for team in teams:
        for fraction in FRACTIONS:
            made = _once(partial(_history, persona, sessions, fraction, team))
            found += [
                Planned(
                    id=f"memora/{persona}/{int(fraction * 100)}/{q.question_id}",
                    suite="memora",
                    condition=f"{int(fraction * 100)}%",
                    team_size=team,
                    build=partial(_built, persona, fraction, q, made, team),
                )
                for q in questions
            ]
    return Plan(episodes=found, skipped=tuple(skipped))


_Made = tuple[dict[str, Any], dict[int, list[str]]]


def _built(
    persona: str, fraction: float, q: Question, made: Callable[[], _Made], team: int
) -> Episode:
    """The episode of question ``q`` on the history ``made`` makes (`_episode`)."""
    return _episode(persona, fraction, q, made(), team)


def _once(make: Callable[[], _Made]) -> Callable[[], _Made]:
    """``make``, called at most once: the episodes of one departure share its history."""
    kept: list[_Made] = []

    def made() -> _Made:
        if not kept:
            kept.append(make())
        return kept[0]

    return made


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
    q: Question,
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
