"""The edge: untrusted events in, validated with pydantic, turned into domain values.

Events have one wire format, the scenario format of spec §7: scenario files,
``POST /v1/events`` and the store's log all use it. Every problem of an event is
collected and raised at once as `InvalidEventAt`, naming the event, its position
in its batch and each field at fault, before anything is stored. A field or op that is
close to a known one is named with it (`unknown_field`): a scenario file, an HTTP answer
and an MCP tool error all say "did you mean 'supports'?".
"""

import re
from collections.abc import Iterable, Sequence
from difflib import get_close_matches
from typing import assert_never, get_args

from pydantic import BaseModel, ValidationError

from readmit.errors import InvalidEvent, InvalidInput

# It lived here before it joined the error tree: imports from this module keep working.
from readmit.errors import InvalidEventAt as InvalidEventAt
from readmit.events import (
    Assert,
    Close,
    Depart,
    Event,
    Evidence,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    RecordExperience,
    ReturnRequest,
    Revoke,
    Step,
    Supersede,
)
from readmit.events import Resolve as ResolveEvent
from readmit.model import ANY, Kind, Validity
from readmit.wire.fields import Wild, check_name, plain
from readmit.wire.inbound import (
    OP,
    OP_MODELS,
    OPS,
    AssertOp,
    CloseOp,
    DepartOp,
    EvidenceOp,
    ExperienceOp,
    ItemIn,
    ObligationIn,
    ObligationOp,
    Op,
    ResolveOp,
    ReturnOp,
    RevokeOp,
    SupersedeOp,
)


def at_position(error: InvalidEvent, index: int, *, named: bool = True) -> InvalidEventAt:
    """``error`` with the position of its event in the batch that was sent."""
    return InvalidEventAt(
        error.event_id,
        error.problem,
        index=index,
        fields=error.fields,
        named=named,
        unknown=error.unknown,
    )


_FIELD = re.compile(r"[a-z_][a-z0-9_]*")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def path_part(part: int | str) -> str:
    """A part of a field path as a message shows it: an index, or a key.

    A key that is no plain name (one with a dot, a control character, a lone surrogate,
    only digits, or over 40 characters) is shown quoted, escaped and cut, so the path reads
    one way and the answer always encodes.
    """
    if isinstance(part, int) or _PLAIN.fullmatch(part):
        return str(part)
    return ascii(part[:40]) + ("…" if len(part) > 40 else "")


def _where(loc: tuple[int | str, ...], unknown: bool) -> str:
    """A field path as a person writes it: ``item.readers.roles.0``.

    The first part of ``loc`` is the union's tag (the op); pydantic's union-member tags
    (``ReadersIn``, ``list[...]``) are left out; an ``unknown`` field's name, the last
    part, is kept, shown as `path_part` shows it.
    """
    last = len(loc) - 1
    kept = [
        path_part(x)
        for n, x in enumerate(loc)
        if n > 0 and (isinstance(x, int) or (unknown and n == last) or _FIELD.fullmatch(x))
    ]
    return ".".join(kept) or "event"


def did_you_mean(name: object, known: Iterable[str]) -> str | None:
    """``did you mean 'x'?`` for the known name closest to a misspelled ``name``, if any."""
    close = get_close_matches(name, list(known), n=1) if isinstance(name, str) else []
    return f"did you mean {close[0]!r}?" if close else None


def _models(hint: object) -> list[type[BaseModel]]:
    """The models a field's type can hold (through ``Annotated``, unions and lists)."""
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return [hint]
    return [model for arg in get_args(hint) for model in _models(arg)]


def _fields_at(root: type[BaseModel], path: Sequence[int | str]) -> set[str]:
    """The field names of the model that ``path`` (a validation error's ``loc``) leads to.

    A part names a field, a union member's model (``ReadersIn``) or a list position; any
    other part (pydantic's tag of a non-model union member) leaves the models as they are.
    """
    models = [root]
    for part in path:
        if isinstance(part, int):
            continue
        named = [m for m in models if m.__name__ == part]
        hints = [m.model_fields[part].annotation for m in models if part in m.model_fields]
        models = named or [m for hint in hints for m in _models(hint)] or models
    return {name for m in models for name in m.model_fields}


def unknown_field(root: type[BaseModel], loc: Sequence[int | str]) -> str:
    """The message for the unknown field at ``loc`` of ``root``, with the closest known name.

    ``loc`` is pydantic's location of an ``extra_forbidden`` error: the path to the
    field, then its name.
    """
    hint = did_you_mean(loc[-1], _fields_at(root, loc[:-1]))
    return "unknown field" if hint is None else f"unknown field ({hint})"


def _problems(error: ValidationError, op: str) -> list[tuple[str, str]]:
    """Each problem of an event with ``op`` as (field path, message)."""
    out = []
    for e in error.errors():
        unknown = e["type"] == "extra_forbidden"
        # loc starts with the union's tag, the op, which the op's model does not hold.
        message = unknown_field(OP_MODELS[op], e["loc"][1:]) if unknown else plain(e["msg"])
        out.append((_where(e["loc"], unknown), message))
    return out


def parse_step(raw: object, index: int) -> Step:
    """Validate one scenario/API event and turn it into a domain value.

    Raises:
        InvalidEventAt: naming the event (its ``id``, else ``e<index>``), its position
            ``index`` and every problem.
    """
    given = raw.get("id") if isinstance(raw, dict) else None
    named = isinstance(given, str) and _a_name(given)  # else it is not echoed back
    event_id = given if named and isinstance(given, str) else f"e{index}"

    def refuse(problem: str, fields: tuple[str, ...] = ()) -> InvalidEventAt:
        return InvalidEventAt(event_id, problem, index=index, fields=fields, named=named)

    if not isinstance(raw, dict):
        raise refuse("an event must be a JSON object")
    op = raw.get("op")
    if not isinstance(op, str) or op not in OPS:
        hint = did_you_mean(op, OPS)
        known = f"{hint} known: " if hint else "known: "
        raise refuse(f"unknown op {op!r} ({known}{', '.join(OPS)})", ("op",))
    try:
        parsed = OP.validate_python(raw)
    except ValidationError as exc:
        problems = _problems(exc, op)
        text = "; ".join(f"{where}: {message}" for where, message in problems)
        raise refuse(text, tuple(dict.fromkeys(where for where, _ in problems))) from None
    try:
        return _to_step(parsed, event_id)
    except InvalidInput as exc:
        raise refuse(str(exc)) from None


def _a_name(value: str) -> bool:
    try:
        check_name(value, "id")
    except InvalidInput:
        return False
    return True


def parse_event(raw: object, index: int) -> Event:
    """Like `parse_step`, for a shared-state event only.

    Raises:
        InvalidEventAt: if ``raw`` is invalid or is an agent action (experience, depart,
            return).
    """
    step = parse_step(raw, index)
    if isinstance(step, RecordExperience | Depart | ReturnRequest):
        problem = f"op {step.op!r} is an agent action, not a shared-state event"
        raise InvalidEventAt(step.id, problem, index=index, fields=("op",))
    return step


def _set(values: list[str] | Wild) -> frozenset[str]:
    return frozenset({ANY}) if values == "*" else frozenset(values)


def _draft(item: ItemIn) -> ItemDraft:
    readers = item.readers
    principals: frozenset[str] | None = None
    roles = frozenset({ANY})
    if readers == "*":
        principals = frozenset({ANY})
    elif readers is not None:
        roles = _set(readers.roles)
        if readers.principals is not None:
            principals = _set(readers.principals)
    return ItemDraft(
        id=item.id,
        text=item.text,
        kind=Kind(item.kind),
        key=item.key,
        supports=frozenset(item.supports),
        depends_on=frozenset(item.depends_on),
        cites=frozenset(item.cites),
        principals=principals,
        roles=roles,
        task=item.task,
        purposes=_set(item.purposes),
        unconfirmed=item.unconfirmed,
        validity=Validity(valid_from=item.valid_from, valid_to=item.valid_to),
    )


def _obligation(o: ObligationIn) -> ObligationDraft:
    return ObligationDraft(
        id=o.id,
        text=o.text,
        role=o.role,
        requires=frozenset(o.requires),
        critical=frozenset(o.critical),
        frontier_id=o.frontier.id,
        frontier_text=o.frontier.text,
    )


def _to_step(op: Op, event_id: str) -> Step:  # noqa: C901 - one arm per op
    at = op.at
    match op:
        case EvidenceOp():
            return Evidence(
                id=event_id, at=at, author=op.author, source_id=op.source.id, text=op.source.text
            )
        case AssertOp():
            return Assert(id=event_id, at=at, author=op.author, item=_draft(op.item))
        case SupersedeOp():
            return Supersede(
                id=event_id, at=at, author=op.author, target=op.target, item=_draft(op.item)
            )
        case RevokeOp():
            return Revoke(id=event_id, at=at, author=op.author, target=op.target, why=op.why)
        case CloseOp():
            return Close(id=event_id, at=at, author=op.author, target=op.target)
        case ObligationOp():
            obligation = _obligation(op.obligation)
            return OpenObligation(id=event_id, at=at, author=op.author, obligation=obligation)
        case ResolveOp():
            return ResolveEvent(id=event_id, at=at, author=op.author, target=op.target)
        case ExperienceOp():
            e = op.experience
            return RecordExperience(
                id=event_id, at=at, agent=op.agent, experience_id=e.id, text=e.text, source=e.source
            )
        case DepartOp():
            return Depart(id=event_id, at=at, agent=op.agent)
        case ReturnOp():
            policy = tuple((op.policy or {}).items())
            return ReturnRequest(
                id=event_id, at=at, agent=op.agent, task=op.task, purpose=op.purpose, policy=policy
            )
        case _:
            assert_never(op)
