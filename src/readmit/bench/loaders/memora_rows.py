"""The rows of Memora's files a loader reads, each validated on its own (`loaders.memora`)."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from readmit.errors import InvalidInput
from readmit.wire.fields import check_text, says_nothing

NUMBER_CHARS = 96
"""The longest turn or session number, written out: item ids ``s<session>-t<turn>`` are
`Name` s (200 characters at most)."""


def short(value: int) -> int:
    """``value``, if it is at most `NUMBER_CHARS` characters written out."""
    if len(str(value)) > NUMBER_CHARS:
        raise ValueError(f"at most {NUMBER_CHARS} characters written out (it names an item)")
    return value


class Turn(BaseModel):
    """A turn of a session's conversation: ``{turn: int, speaker: str, message: str}``."""

    model_config = ConfigDict(extra="allow")
    turn: int = Field(strict=True)
    speaker: str
    message: str

    _turn = field_validator("turn")(short)

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


class Session(BaseModel):
    """The parts of a session file an episode reads (the rest is evaluator-only or unused)."""

    model_config = ConfigDict(extra="allow")
    session_id: int = Field(strict=True)
    conversation: list[Any]
    """Turns, each validated on its own (`Turn`)."""

    _session_id = field_validator("session_id")(short)


class Evidence(BaseModel):
    """A question's ``memory_evidence``: the sessions whose memories it needs present."""

    model_config = ConfigDict(extra="allow")
    remaining_tasks: list[dict[str, Any]] = []


class Criterion(BaseModel):
    """What `readmit.bench.llm` asks the judge of an answer (it read these keys unchecked)."""

    model_config = ConfigDict(extra="allow")
    evaluation_question: str
    expected_answer: str
    evaluation_type: str = ""


class Judging(BaseModel):
    """A question's ``evaluation``: what a judge of an answer is asked."""

    model_config = ConfigDict(extra="allow")
    evaluation_questions: list[Criterion] = []


class Question(BaseModel):
    """A question of the evaluation file (evaluator-only but its text)."""

    model_config = ConfigDict(extra="allow")
    question_id: str
    question: str
    memory_evidence: Evidence = Field(default_factory=Evidence)
    forgetting_evidence: Any = None
    evaluation: Judging = Field(default_factory=Judging)


class Evaluation(BaseModel):
    """An evaluation file: groups of questions."""

    model_config = ConfigDict(extra="allow")
    questions: dict[str, list[Any]]
    """Groups of questions, each validated on its own (`Question`)."""
