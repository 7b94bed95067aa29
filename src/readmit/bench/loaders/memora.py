"""Memora persona directories → return episodes at 25/50/75% departure (appendix D.3).

The agent sees conversation messages only. ``operation``, ``operation_details``,
``share_memory``, ``memory_evidence``, ``forgetting_evidence`` and ``evaluation``
are evaluator-only: here they only decide which recorded items count as the
memories a question needs present (C^P) and absent (C^F). Offline, presence and
forgetting are scored at admission (is the item that carried the memory in the
method's context?); answer-level judging needs an LLM.
"""

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from readmit import strict_json
from readmit.bench.episode import Episode, Probe
from readmit.bench.history import History
from readmit.errors import InvalidInput
from readmit.wire.fields import check_text, plain

FRACTIONS = (0.25, 0.5, 0.75)


class _Turn(BaseModel):
    model_config = ConfigDict(extra="allow")
    turn: int = Field(strict=True)
    speaker: str
    message: str

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


MESSAGE_CHARS = 8000
"""How much of a message its item holds."""


class _Session(BaseModel):
    """The parts of a session file an episode reads (the rest is evaluator-only or unused)."""

    model_config = ConfigDict(extra="allow")
    session_id: int = Field(strict=True)
    conversation: list[_Turn]


class _Question(BaseModel):
    model_config = ConfigDict(extra="allow")
    question_id: str
    question: str
    memory_evidence: dict[str, Any] = {}
    forgetting_evidence: Any = None
    evaluation: dict[str, Any] = {}


class _Evaluation(BaseModel):
    model_config = ConfigDict(extra="allow")
    questions: dict[str, list[_Question]]


_Shape = TypeVar("_Shape", bound=BaseModel)


def _load(path: Path, shape: type[_Shape]) -> _Shape:
    """The file at ``path`` as ``shape``.

    Raises:
        InvalidInput: naming the file, and the field where it is not of that shape.
    """
    try:
        data = strict_json.loads(path.read_bytes())
    except (OSError, InvalidInput) as exc:
        raise InvalidInput(f"cannot read Memora file {path}: {exc}") from exc
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "the file"
        raise InvalidInput(f"Memora file {path}: {field}: {plain(error['msg'])}") from None


def _criteria(entries: list[dict[str, Any]], carriers: dict[int, list[str]]) -> list[str]:
    """The items that carried each evidence entry's memory (entries in missing sessions drop)."""
    found = []
    for entry in entries:
        session = entry.get("session_id")
        found += carriers.get(session, []) if isinstance(session, int) else []
    return found


def episodes(persona_dir: Path, team: int = 4) -> list[Episode]:
    """One episode per (departure fraction, question) of a persona directory.

    Raises:
        InvalidInput: if the directory has no sessions or no evaluation file.
    """
    files = sorted((persona_dir / "conversations").glob("session_*.json"))
    sessions = [_load(p, _Session) for p in files]
    evaluation = sorted(persona_dir.glob("evaluation_questions_*.json"))
    if not sessions or not evaluation:
        raise InvalidInput(
            f"{persona_dir}: expected conversations/session_*.json and "
            "evaluation_questions_<persona>.json"
        )
    _distinct(files, sessions)
    groups = _load(evaluation[0], _Evaluation).questions.values()
    questions = [q for group in groups for q in group]
    found = []
    for fraction in FRACTIONS:
        history, carriers = _history(persona_dir.name, sessions, fraction, team)
        for q in questions:
            presence = _criteria(
                q.memory_evidence.get("remaining_tasks", [])
                or _evidence_entries(q.memory_evidence),
                carriers,
            )
            forgetting = _criteria(_evidence_entries(q.forgetting_evidence), carriers)
            found.append(
                Episode(
                    id=f"memora/{persona_dir.name}/{int(fraction * 100)}/{q.question_id}",
                    suite="memora",
                    condition=f"{int(fraction * 100)}%",
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
                        "criteria": q.evaluation.get("evaluation_questions", []),
                    },
                )
            )
    return found


def _distinct(files: list[Path], sessions: list[_Session]) -> None:
    """Refuse two session files with one ``session_id`` (their turns would share ids).

    Raises:
        InvalidInput: naming both files.
    """
    seen: dict[int, Path] = {}
    for path, session in zip(files, sessions, strict=True):
        other = seen.setdefault(session.session_id, path)
        if other is not path:
            raise InvalidInput(
                f"Memora files {other} and {path} both have session_id {session.session_id}"
            )


def _evidence_entries(evidence: Any) -> list[dict[str, Any]]:
    if not isinstance(evidence, dict):
        return []
    return [e for v in evidence.values() if isinstance(v, list) for e in v if isinstance(e, dict)]


def _history(
    persona: str, sessions: list[_Session], fraction: float, team: int
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
        for turn in session.conversation:
            if turn.speaker == "ai_agent" or not turn.message.strip():
                continue
            item_id = f"s{sid}-t{turn.turn}"
            h.item(author, item_id, turn.message[:MESSAGE_CHARS])
            if (turn.model_extra or {}).get("share_memory"):  # evaluator-only: criteria → items
                carriers.setdefault(sid, []).append(item_id)
        if n == cut - 1:
            h.add("depart", agent="A0")
    return h.scenario(), carriers
