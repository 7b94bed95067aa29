"""Scenario files (``readmit.scenario/1``, spec §7): a workspace history as data.

`load_scenario` validates a whole file without a store: the shape of every
event, time order, unique event ids, policy overrides, and ids that would fall in
an agent's namespace. References (authors, agents, targets, premises, cited
evidence, experience sources, returns without a departure) are the store's to
judge: `readmit.replay.check_references` replays the history on a throwaway store,
and `readmit.replay.replay` runs it before it writes anything. Errors name the event.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from readmit import strict_json
from readmit.clock import format_time
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import (
    Assert,
    Evidence,
    OpenObligation,
    RecordExperience,
    ReturnRequest,
    Step,
    Supersede,
)
from readmit.model import ANY, Agent
from readmit.policy import Policy
from readmit.wire import Name, parse_step, unknown_field
from readmit.wire.fields import plain

FORMAT = "readmit.scenario/1"


class _AgentIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: Name
    principal: Name
    role: Name


class _ScenarioIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    format: Literal["readmit.scenario/1"]
    workspace: Name
    agents: list[_AgentIn] = Field(min_length=1)
    policy: dict[str, Any] = {}
    events: list[Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A validated scenario."""

    workspace: str
    agents: tuple[Agent, ...]
    policy: Policy
    steps: tuple[Step, ...]

    def policy_for(self, request: ReturnRequest) -> Policy:
        """The scenario policy with this return's overrides applied."""
        return self.policy.with_overrides(dict(request.policy))


def read_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file.

    Raises:
        InvalidInput: if the file is unreadable, not JSON, or not a valid scenario.
    """
    try:
        data = strict_json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}") from exc
    return load_scenario(data)


def load_scenario(data: object) -> Scenario:
    """Validate scenario data (already parsed from JSON) as a whole, references aside.

    Raises:
        InvalidInput: naming the field or event at fault (`InvalidEvent` for events).
    """
    if not isinstance(data, dict):
        raise InvalidInput(
            'a scenario is one JSON object, {"format": "readmit.scenario/1", "workspace", '
            '"agents", "events", ...} (\'readmit init FILE\' writes one to start from)'
        )
    try:
        raw = _ScenarioIn.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # A misspelled field also leaves the field it meant missing: name the misspelling.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        where = ".".join(str(x) for x in first["loc"]) or "scenario"
        unknown = first["type"] == "extra_forbidden"
        message = unknown_field(_ScenarioIn, first["loc"]) if unknown else plain(first["msg"])
        raise InvalidInput(f"scenario {where}: {message}") from None
    agents = tuple(Agent(id=a.id, principal=a.principal, role=a.role) for a in raw.agents)
    if len({a.id for a in agents}) != len(agents):
        raise InvalidInput("scenario agents: duplicate agent id")
    policy = Policy().with_overrides(raw.policy)
    steps = tuple(parse_step(event, index) for index, event in enumerate(raw.events))
    _check_order(steps)
    _check_namespaces(steps, agents)
    for step in steps:
        if isinstance(step, ReturnRequest):
            try:
                policy.with_overrides(dict(step.policy))
            except InvalidInput as exc:
                raise InvalidEvent(step.id, str(exc)) from None
    return Scenario(workspace=raw.workspace, agents=agents, policy=policy, steps=steps)


def _check_order(steps: Sequence[Step]) -> None:
    seen: dict[str, int] = {}
    for index, (before, step) in enumerate(zip((None, *steps), steps, strict=False)):
        first = seen.setdefault(step.id, index)
        if first != index:
            raise InvalidEvent(
                step.id,
                f"duplicate event id: events[{first}] and events[{index}] (an event given no "
                "id is named e<its index>)",
            )
        if before is not None and step.at < before.at:
            raise InvalidEvent(
                step.id,
                f"time goes backwards ({format_time(step.at)} is before {format_time(before.at)})",
            )


def new_ids(step: Step) -> tuple[str, ...]:
    """The ids ``step`` gives to new things: the event's, and its item's, source's, etc."""
    match step:
        case Assert() | Supersede():
            return (step.id, step.item.id)
        case Evidence():
            return (step.id, step.source_id)
        case OpenObligation():
            return (step.id, step.obligation.id, step.obligation.frontier_id)
        case RecordExperience():
            return (step.id, step.experience_id)
        case _:
            return (step.id,)


def _check_namespaces(steps: Sequence[Step], agents: Sequence[Agent]) -> None:
    """Refuse ids shaped ``<agent>/<x>``: the service stores an agent's own ids so."""
    prefixes = [f"{a.id}/" for a in agents]
    for step in steps:
        for given in new_ids(step):
            owner = next((p for p in prefixes if given.startswith(p)), None)
            if owner is not None:
                raise InvalidEvent(
                    step.id,
                    f"id {given!r} is in agent {owner[:-1]!r}'s namespace: the service stores "
                    f"the ids that agent gives as {owner}ID, so a scenario may not use that form",
                )


def unknown_readers(scenario: Scenario) -> list[str]:
    """A warning for each item whose readers name a principal or role no agent here holds.

    Not refused (the store never checks readers against the workspace's agents, and an
    agent may join later), but a misspelled reader is the usual cause, and it makes an item
    that reader's agents, its author's among them perhaps, may not read.
    """
    known = {
        "principals": {a.principal for a in scenario.agents},
        "roles": {a.role for a in scenario.agents},
    }
    said = []
    for step in scenario.steps:
        if not isinstance(step, Assert | Supersede):
            continue
        draft = step.item
        named = {"principals": draft.principals or frozenset(), "roles": draft.roles}
        for field, names in named.items():
            for name in sorted(names - known[field] - {ANY}):
                close = get_close_matches(name, sorted(known[field]), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                said.append(
                    f"event {step.id!r}: item {draft.id!r}: readers.{field} names {name!r}, "
                    f"which no agent of the scenario has{hint}"
                )
    return said
