"""JSON shapes at the edges: scenario/API events (validated with pydantic) and stored values.

Events have one wire format, the scenario format of spec §7; the store keeps
events in it and the HTTP API will accept it. Untrusted input is validated here
and every problem is raised as `InvalidEvent` naming the event, before anything
is stored.
"""

import re
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)

from readmit.errors import InvalidEvent, InvalidInput
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
from readmit.model import ANY, Item, Kind, Obligation, Receipt, Scope, Validity

_NAME_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _refuse(pattern: re.Pattern[str], allowed: str) -> Callable[[str], str]:
    """A validator refusing characters no store, terminal or log line should receive."""

    def check(value: str) -> str:
        found = pattern.search(value)
        if found is not None:
            raise ValueError(f"may not contain U+{ord(found.group()):04X} ({allowed})")
        return value

    return check


Name = Annotated[
    str,
    Field(min_length=1, max_length=200, pattern=r"^\S(.*\S)?$"),
    AfterValidator(_refuse(_NAME_CONTROL, "no control characters in a name or id")),
]
"""An id or name: no surrounding whitespace, no control characters (NUL breaks PostgreSQL)."""

Text = Annotated[
    str,
    Field(min_length=1, max_length=100_000),
    AfterValidator(
        _refuse(_TEXT_CONTROL, "text allows tab and newline, no other control character")
    ),
]
"""Free text: tab and newline allowed, no other control character."""


def check_name(value: str, what: str) -> str:
    """Validate ``value`` as a `Name` outside a pydantic model (CLI arguments, MCP tools).

    Raises:
        InvalidInput: naming ``what`` and the problem.
    """
    try:
        return _NAME.validate_python(value)
    except ValidationError as exc:
        raise InvalidInput(f"{what}: {exc.errors()[0]['msg']}") from None


def check_text(value: str, what: str) -> str:
    """Validate ``value`` as a `Text` outside a pydantic model.

    Raises:
        InvalidInput: naming ``what`` and the problem.
    """
    try:
        return _TEXT.validate_python(value)
    except ValidationError as exc:
        raise InvalidInput(f"{what}: {exc.errors()[0]['msg']}") from None


_NAME: TypeAdapter[str] = TypeAdapter(Name)
_TEXT: TypeAdapter[str] = TypeAdapter(Text)
Wild = Literal["*"]


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})")


def _rfc3339(value: object) -> object:
    """Only an RFC 3339 time with its offset (a number is not read as a Unix time)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or _RFC3339.fullmatch(value) is None:
        raise ValueError("must be an RFC 3339 time with an offset, e.g. 2026-05-01T08:00:00Z")
    return value


def _in_calendar(value: datetime) -> datetime:
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time is outside the years 1 to 9999 in UTC") from None
    return value


Instant = Annotated[
    AwareDatetime,
    Field(strict=False),
    BeforeValidator(_rfc3339),
    AfterValidator(_in_calendar),
]
"""An RFC 3339 time with a UTC offset whose UTC form is a real date (not year 1 at +14:00)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ReadersIn(_Strict):
    principals: list[Name] | Wild | None = None
    """Default: every agent of the author's principal."""
    roles: list[Name] | Wild = "*"


class ItemIn(_Strict):
    id: Name
    text: Text
    kind: Literal["fact", "constraint", "frontier", "interface"] = "fact"
    key: Name | None = None
    supports: list[Name] = []
    depends_on: list[Name] = []
    cites: list[Name] = []
    readers: ReadersIn | Wild | None = None
    task: Name = "*"
    purposes: list[Name] | Wild = "*"
    valid_from: Instant | None = None
    valid_to: Instant | None = None
    unconfirmed: bool = False


class SourceIn(_Strict):
    id: Name
    text: Text


class FrontierIn(_Strict):
    id: Name
    text: Text


class ObligationIn(_Strict):
    id: Name
    text: Text
    role: Name
    requires: list[Name]
    critical: list[Name] = []
    frontier: FrontierIn


class ExperienceIn(_Strict):
    id: Name
    text: Text
    source: Name


class _Op(_Strict):
    id: Name | None = None
    at: Instant


class EvidenceOp(_Op):
    op: Literal["evidence"]
    author: Name
    source: SourceIn


class AssertOp(_Op):
    op: Literal["assert"]
    author: Name
    item: ItemIn


class SupersedeOp(_Op):
    op: Literal["supersede"]
    author: Name
    target: Name
    item: ItemIn


class RevokeOp(_Op):
    op: Literal["revoke"]
    author: Name
    target: Name
    why: Text


class CloseOp(_Op):
    op: Literal["close"]
    author: Name
    target: Name


class ObligationOp(_Op):
    op: Literal["obligation"]
    author: Name
    obligation: ObligationIn


class ResolveOp(_Op):
    op: Literal["resolve"]
    author: Name
    target: Name


class ExperienceOp(_Op):
    op: Literal["experience"]
    agent: Name
    experience: ExperienceIn


class DepartOp(_Op):
    op: Literal["depart"]
    agent: Name


class ReturnOp(_Op):
    op: Literal["return"]
    agent: Name
    task: Name
    purpose: Name
    policy: dict[str, Any] | None = None


OPS: dict[str, type[_Op]] = {
    "evidence": EvidenceOp,
    "assert": AssertOp,
    "supersede": SupersedeOp,
    "revoke": RevokeOp,
    "close": CloseOp,
    "obligation": ObligationOp,
    "resolve": ResolveOp,
    "experience": ExperienceOp,
    "depart": DepartOp,
    "return": ReturnOp,
}


_FIELD = re.compile(r"[a-z_][a-z0-9_]*")


def _where(loc: tuple[int | str, ...], unknown: bool) -> str:
    """A field path as a person writes it: ``item.readers.roles.0``.

    Without pydantic's union-member tags (``ReadersIn``, ``list[...]``); an ``unknown``
    field's name, the last part, is kept as given.
    """
    last = len(loc) - 1
    kept = [
        str(x)
        for n, x in enumerate(loc)
        if isinstance(x, int) or (unknown and n == last) or _FIELD.fullmatch(x)
    ]
    return ".".join(kept) or "event"


def _problems(error: ValidationError) -> str:
    parts = []
    for e in error.errors():
        where = _where(e["loc"], e["type"] == "extra_forbidden")
        message = "unknown field" if e["type"] == "extra_forbidden" else e["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def parse_step(raw: object, index: int) -> Step:
    """Validate one scenario/API event and turn it into a domain value.

    Raises:
        InvalidEvent: naming the event (its ``id`` or ``e<index>``) and every problem.
    """
    event_id = f"e{index}"
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        event_id = raw["id"]
    if not isinstance(raw, dict):
        raise InvalidEvent(event_id, "an event must be a JSON object")
    op = raw.get("op")
    model = OPS.get(op) if isinstance(op, str) else None
    if model is None:
        raise InvalidEvent(event_id, f"unknown op {op!r} (known: {', '.join(OPS)})")
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        raise InvalidEvent(event_id, _problems(exc)) from None
    try:
        return _to_step(parsed, event_id)
    except InvalidInput as exc:
        raise InvalidEvent(event_id, str(exc)) from None


def parse_event(raw: object, index: int) -> Event:
    """Like `parse_step`, for a shared-state event only.

    Raises:
        InvalidEvent: if ``raw`` is invalid or is an agent action (experience, depart, return).
    """
    step = parse_step(raw, index)
    if isinstance(step, RecordExperience | Depart | ReturnRequest):
        raise InvalidEvent(step.id, f"op {step.op!r} is an agent action, not a shared-state event")
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


def _to_step(op: _Op, event_id: str) -> Step:  # noqa: C901 - one arm per op
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
            o = op.obligation
            return OpenObligation(
                id=event_id,
                at=at,
                author=op.author,
                obligation=ObligationDraft(
                    id=o.id,
                    text=o.text,
                    role=o.role,
                    requires=frozenset(o.requires),
                    critical=frozenset(o.critical),
                    frontier_id=o.frontier.id,
                    frontier_text=o.frontier.text,
                ),
            )
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
            return ReturnRequest(
                id=event_id,
                at=at,
                agent=op.agent,
                task=op.task,
                purpose=op.purpose,
                policy=tuple((op.policy or {}).items()),
            )
    raise InvalidEvent(event_id, f"unhandled op {type(op).__name__}")


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _names(values: frozenset[str]) -> list[str] | str:
    return "*" if ANY in values else sorted(values)


def draft_to_wire(d: ItemDraft) -> dict[str, Any]:
    """An item draft in the scenario format."""
    out: dict[str, Any] = {
        "id": d.id,
        "text": d.text,
        "kind": str(d.kind),
        "supports": sorted(d.supports),
        "depends_on": sorted(d.depends_on),
        "cites": sorted(d.cites),
        "task": d.task,
        "purposes": _names(d.purposes),
        "unconfirmed": d.unconfirmed,
    }
    if d.key is not None:
        out["key"] = d.key
    if d.principals is not None or ANY not in d.roles:
        out["readers"] = {"roles": _names(d.roles)}
        if d.principals is not None:
            out["readers"]["principals"] = _names(d.principals)
    for name in ("valid_from", "valid_to"):
        value = getattr(d.validity, name)
        if value is not None:
            out[name] = _time(value)
    return out


def event_to_wire(event: Event) -> dict[str, Any]:
    """An event in the scenario format (what the store keeps and the API accepts)."""
    head = {"id": event.id, "at": event.at.isoformat(), "op": event.op, "author": event.author}
    match event:
        case Evidence():
            return {**head, "source": {"id": event.source_id, "text": event.text}}
        case Assert():
            return {**head, "item": draft_to_wire(event.item)}
        case Supersede():
            return {**head, "target": event.target, "item": draft_to_wire(event.item)}
        case Revoke():
            return {**head, "target": event.target, "why": event.why}
        case Close() | ResolveEvent():
            return {**head, "target": event.target}
        case OpenObligation():
            o = event.obligation
            return {
                **head,
                "obligation": {
                    "id": o.id,
                    "text": o.text,
                    "role": o.role,
                    "requires": sorted(o.requires),
                    "critical": sorted(o.critical),
                    "frontier": {"id": o.frontier_id, "text": o.frontier_text},
                },
            }


def item_to_json(item: Item) -> dict[str, Any]:
    """A materialized item as stored (with epoch, scope and receipt)."""
    r = item.receipt
    return {
        "id": item.id,
        "text": item.text,
        "kind": str(item.kind),
        "epoch": item.epoch,
        "author": item.author,
        "key": item.key,
        "for_role": item.for_role,
        "principals": sorted(item.scope.principals),
        "roles": sorted(item.scope.roles),
        "task": item.scope.task,
        "purposes": sorted(item.scope.purposes),
        "valid_from": _time(item.validity.valid_from),
        "valid_to": _time(item.validity.valid_to),
        "receipt": None if r is None else [r.event_id, r.author, r.epoch, r.digest],
        "depends_on": sorted(item.depends_on),
        "supports": sorted(item.supports),
        "cites": sorted(item.cites),
    }


_OPEN = Validity()


@lru_cache(maxsize=4096)
def _scope(
    principals: tuple[str, ...], roles: tuple[str, ...], task: str, purposes: tuple[str, ...]
) -> Scope:
    # Scopes repeat across thousands of items; immutable, so one shared value each.
    return Scope(
        principals=frozenset(principals),
        roles=frozenset(roles),
        task=task,
        purposes=frozenset(purposes),
    )


def _validity(vf: str | None, vt: str | None) -> Validity:
    if vf is None and vt is None:
        return _OPEN
    return Validity(
        valid_from=None if vf is None else datetime.fromisoformat(vf),
        valid_to=None if vt is None else datetime.fromisoformat(vt),
    )


_NONE: frozenset[str] = frozenset()


def _ids(values: list[str]) -> frozenset[str]:
    return frozenset(values) if values else _NONE


def item_from_json(d: dict[str, Any]) -> Item:
    """Inverse of `item_to_json` (trusted, store-written data)."""
    r = d["receipt"]
    return Item(
        id=d["id"],
        text=d["text"],
        kind=Kind(d["kind"]),
        epoch=d["epoch"],
        author=d["author"],
        key=d["key"],
        for_role=d["for_role"],
        scope=_scope(tuple(d["principals"]), tuple(d["roles"]), d["task"], tuple(d["purposes"])),
        validity=_validity(d["valid_from"], d["valid_to"]),
        receipt=None if r is None else Receipt(event_id=r[0], author=r[1], epoch=r[2], digest=r[3]),
        depends_on=_ids(d["depends_on"]),
        supports=_ids(d["supports"]),
        cites=_ids(d["cites"]),
    )


def obligation_to_json(o: Obligation) -> dict[str, Any]:
    """A materialized obligation as stored."""
    return {
        "id": o.id,
        "role": o.role,
        "requires": sorted(o.requires),
        "critical": sorted(o.critical),
        "item": item_to_json(o.item),
        "frontier": item_to_json(o.frontier),
    }


def obligation_from_json(d: dict[str, Any]) -> Obligation:
    """Inverse of `obligation_to_json`."""
    return Obligation(
        id=d["id"],
        role=d["role"],
        requires=frozenset(d["requires"]),
        critical=frozenset(d["critical"]),
        item=item_from_json(d["item"]),
        frontier=item_from_json(d["frontier"]),
    )
