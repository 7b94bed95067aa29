"""The agent's copy of a decision record: what a return or an explanation answers.

An agent sees its own decisions numbered from 1, with the memories readmitted to it,
and only what `readmit.report.agent_copy` leaves it of the record; the answer is shaped
as `AgentDecisionOut`, key for key.
"""

from collections.abc import Mapping
from typing import Any, cast

from pydantic import TypeAdapter

from readmit.report import agent_copy
from readmit.wire.outbound import AgentDecisionOut, MemoryOut

_AGENT_DECISION: TypeAdapter[AgentDecisionOut] = TypeAdapter(AgentDecisionOut)


def _copy(record: Mapping[str, Any], number: int, readmitted: list[MemoryOut]) -> dict[str, Any]:
    """The agent's copy of a decision record: its number and readmitted memories added."""
    return {**agent_copy(record), "decision": number, "readmitted": readmitted}


def shown(record: Mapping[str, Any], number: int, readmitted: list[MemoryOut]) -> AgentDecisionOut:
    """The agent's copy of a logged decision record, checked against `AgentDecisionOut`.

    A logged record may come from an older readmit, its keys in the log's (sorted) order
    and upgraded (`readmit.report.upgrade_record`): validating it puts every key in the
    shape's order, so an explained decision reads byte for byte as its return did.
    """
    return _AGENT_DECISION.validate_python(_copy(record, number, readmitted))


def answer(record: Mapping[str, Any], number: int, readmitted: list[MemoryOut]) -> AgentDecisionOut:
    """The agent's copy of the record `decide` has just made, in `AgentDecisionOut`'s key order.

    Not validated again: `readmit.report` and the view build it in that shape, key for key
    in the shape's order at every level, and `decision_json` writes only the shape's keys.
    Validating it copied every exclusion twice over (the answer's and its view's) for a
    return of a busy workspace. ``tests/service/test_answer_shape.py`` checks that such an
    answer validates and serialises byte for byte as its validated copy does.
    """
    copy = _copy(record, number, readmitted)
    return cast(AgentDecisionOut, {k: copy[k] for k in _ANSWER_KEYS if k in copy})


_ANSWER_KEYS = tuple(AgentDecisionOut.__annotations__)
"""`AgentDecisionOut`'s keys in its order, which its JSON follows (`decision_json`)."""


def decision_json(decision: AgentDecisionOut) -> bytes:
    """``decision`` (as `Service.return_` or `Service.explain` answer it) as JSON.

    Without warnings: a fresh answer (`answer`) holds reasons, stages and kinds as the
    strings their enums stand for, which serialise as the enums do.
    """
    return _AGENT_DECISION.dump_json(decision, warnings=False)
