"""What the store refuses in values a library caller builds in Python.

An HTTP body, an MCP call and a scenario file are checked by the models of
`readmit.wire.inbound` before they become events; an `Assert` or an `Agent` built in
Python reaches the store without them. The store refuses here what would harm it or
its readers: a name or id it would create (an event's, an item's, a key, a role, a
workspace's) must be a non-empty string with no control or invisible character and no
space at either end, as the wire's `Name` (a NUL breaks PostgreSQL, a newline forges a
line of an operator's report); a text must be a string with something in it, and no NUL
or lone surrogate (neither can be stored).

Two of the wire's limits are left to the wire: lengths (LangGraph's keys and values are
longer than a request body may carry), and the control characters of a text other than
NUL (an assistant's message may hold a carriage return; reports escape them when they
print text, `readmit.cli.render`). A name that refers to what exists (an author, a
target, a premise) is checked only to be a string with no NUL or lone surrogate (no store
holds one): the store tells whether it exists, and one stored before these checks can
still be named.
"""

import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from readmit.clock import aware, in_calendar
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    OpenObligation,
    RecordExperience,
    Resolve,
    ReturnRequest,
    Revoke,
    Supersede,
    events_only,
)
from readmit.model import ANY, Agent
from readmit.wire.fields import name_shape, plain_name, says_nothing

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
_DRAFT_SETS = ("supports", "principals", "roles", "purposes")
"""An item's sets of names it makes (its ``depends_on`` and ``cites`` refer to others')."""
_ANYONE = frozenset({ANY})


def checked_events(events: Sequence[object]) -> None:
    """Refuse a batch holding anything but events, or a name or text the store refuses.

    Raises:
        InvalidInput: for something other than an event, or an id that is no string.
        InvalidEvent: naming the event and the field at fault.
    """
    events_only(events)
    for event in events:
        if not _plain(event):  # type: ignore[arg-type]  # events_only checked each
            _event(event)  # type: ignore[arg-type]


def checked_return(request: ReturnRequest) -> None:
    """Refuse a return whose id, task or purpose (kept in its record) the store refuses.

    Raises:
        InvalidEvent: naming the request and the field at fault.
    """
    with _named(request.id):
        _names(("id", request.id), ("task", request.task), ("purpose", request.purpose))
        _strings(("agent", request.agent))
        _dated(request.at, request.id)


def checked_experience(step: RecordExperience) -> None:
    """Refuse a private memory whose ids or text the store refuses.

    Raises:
        InvalidEvent: naming the step and the field at fault.
    """
    with _named(step.id):
        _names(("id", step.id), ("experience.id", step.experience_id))
        _strings(("agent", step.agent))
        _references(("experience.source", step.source))
        _text(step.text, "experience.text")
        _dated(step.at, step.id)


def checked_departure(agent: str, at: datetime, returning_to: object) -> None:
    """Refuse a departure whose agent, time or stated return the store refuses.

    Raises:
        InvalidInput: naming the field at fault.
        InvalidEvent: if ``at`` has no time zone.
    """
    _strings(("agent", agent))
    _dated(at, f"depart {agent}")
    if returning_to is not None:
        if not (isinstance(returning_to, tuple) and len(returning_to) == 2):
            raise InvalidInput("returning_to must be a (task, purpose) pair")
        _names(("task", returning_to[0]), ("purpose", returning_to[1]))


OUTCOMES = ("issued", "blocked", "reset")
"""A decision's outcomes (`readmit.admission.decision`)."""
_KEY_HASH = re.compile(r"sha256:[0-9a-f]{64}")
"""The stored form of an agent key (`readmit.service.keys.key_hash`)."""


def checked_decision(
    agents: Container[str],
    workspace: str,
    agent: str,
    at: object,
    epoch: object,
    outcome: object,
    record: object,
) -> None:
    """Refuse a decision the audit log would keep wrong (``agents``: ``workspace``'s).

    Raises:
        InvalidInput: naming the field at fault (an unknown agent or workspace too).
        InvalidEvent: if ``at`` has no time zone.
    """
    _strings(("agent", agent))
    if agent not in agents:
        raise InvalidInput(f"decision of {agent!r}: no such agent in the workspace")
    _dated(at, f"decision of {agent}")
    if type(epoch) is not int or not 0 <= epoch < 2**63:
        raise InvalidInput(f"decision epoch must be an integer, 0 or more, not {epoch!r}")
    if outcome not in OUTCOMES:
        raise InvalidInput(
            f"decision outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}"
        )
    if not isinstance(record, dict):
        raise InvalidInput(f"decision record must be a dict, not {type(record).__name__}")
    problem = record_problem(record)
    if problem is not None:
        raise InvalidInput(f"decision record is not in the shape readmit logs: {problem}")
    if (record["workspace"], record["agent"]) != (workspace, agent):
        raise InvalidInput(
            f"decision record names {record['agent']!r} in {record['workspace']!r}, "
            f"not {agent!r} in {workspace!r}"
        )


_LOGGED: dict[str, type | tuple[type, ...]] = {
    "workspace": str,
    "cycle": str,
    "agent": str,
    "at": str,
    "epoch": int,
    "departure_epoch": int,
    "outcome": str,
    "coverage": dict,
    "items": list,
    "selected": list,
    "excluded": list,
    "readmitted": list,
    "withheld": list,
    "view": (dict, type(None)),
}
"""What every readmit has logged of a decision, with its JSON type (the keys logged since,
``hidden`` among them, are `readmit.report.upgrade_record`'s to restore or leave out)."""


def record_problem(record: Mapping[str, Any]) -> str | None:
    """What keeps ``record`` from being read as a logged decision record, if anything.

    The keys every readmit has logged, with their types: `readmit.report` reads them
    without asking (a record a library caller made up got an internal ``KeyError``).
    """
    for key, kind in _LOGGED.items():
        if key not in record:
            return f"it has no {key!r}"
        value = record[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return f"its {key!r} is {type(value).__name__}"
    return None


def checked_key(key_hash: object, at: object) -> None:
    """Refuse an agent key's stored form that no key hashes to, or a time without a zone.

    Raises:
        InvalidInput: for a ``key_hash`` not made by `readmit.service.keys.key_hash`.
        InvalidEvent: if ``at`` has no time zone.
    """
    if not (isinstance(key_hash, str) and _KEY_HASH.fullmatch(key_hash)):
        raise InvalidInput("key_hash must be readmit.service.keys.key_hash(key), not a raw key")
    _dated(at, "agent key")


RESERVED = "_readmit"
"""What no new workspace's name starts with: the store's own locks are named so."""


def checked_workspace(workspace: object, agents: object) -> tuple[Agent, ...]:
    """The agents of a new workspace, once the store takes its name and theirs.

    Raises:
        InvalidInput: naming the field (and the agent) at fault.
    """
    _names(("workspace", workspace))
    if isinstance(workspace, str) and workspace.startswith(RESERVED):
        raise InvalidInput(
            f"workspace {workspace!r}: names starting {RESERVED!r} are the store's own (its "
            "locks on PostgreSQL go by name: one such workspace's writes held migrations)"
        )
    if isinstance(agents, str | bytes) or not isinstance(agents, Iterable):
        raise InvalidInput(f"agents must be a list of readmit.Agent, not {agents!r}")
    made = tuple(agents)  # one pass: a generator is read once
    if not made:  # the store tells a workspace by its agents (`SqlStore._append`)
        raise InvalidInput("a workspace needs at least one agent")
    for agent in made:
        if not isinstance(agent, Agent):
            raise InvalidInput(f"agents must hold readmit.Agent values, not {agent!r}")
        _names(("agent.id", agent.id))
        with _about(f"agent {agent.id!r}: "):
            _names(("principal", agent.principal), ("role", agent.role))
    return made


def _plain(event: Event) -> bool:
    """Whether every name ``event`` makes is printable ASCII, and every text fine.

    About a microsecond an event; ``False`` leaves it to `_event`, which tells exactly what,
    if anything, is wrong.
    """
    try:
        if not (plain_name(event.id) and _reference(event.author)):
            return False
        match event:
            case Assert(item=d) | Supersede(item=d):
                if isinstance(event, Supersede) and not _reference(event.target):
                    return False
                return _plain_draft(d)
            case Revoke(target=target, why=why):
                return _reference(target) and _storable(why)
            case Close(target=target) | Resolve(target=target):
                return _reference(target)
            case Evidence(source_id=source, text=text):
                return bool(plain_name(source)) and _storable(text)
            case OpenObligation(obligation=o):
                names = (o.id, o.role, o.frontier_id, *o.requires, *o.critical)
                return (
                    all(map(plain_name, names)) and _storable(o.text) and _storable(o.frontier_text)
                )
    except TypeError:  # a value that is no string
        return False


def _plain_draft(d: ItemDraft) -> bool:
    if not (plain_name(d.id) and _storable(d.text) and type(d.unconfirmed) is bool):
        return False
    if (d.task != ANY and not plain_name(d.task)) or (d.key is not None and not plain_name(d.key)):
        return False
    if not all(map(_reference, (*d.depends_on, *d.cites))):
        return False
    sets = (d.supports, d.principals, d.roles, d.purposes)
    return all(all(map(plain_name, s)) for s in sets if s and s != _ANYONE)


def _dated(at: object, what: str) -> None:
    """An aware time with a UTC form (`readmit.clock.aware`, `readmit.clock.in_calendar`)."""
    in_calendar(aware(at, what), what)


def _reference(name: object) -> bool:
    """Whether ``name``, naming what exists, is a string that could name something stored."""
    return type(name) is str and _UNSTORABLE.search(name) is None


def _storable(text: str) -> bool:
    """Whether ``text`` is a string the store takes (``TypeError`` if it is no string)."""
    return type(text) is str and not says_nothing(text) and _UNSTORABLE.search(text) is None


def _event(event: Event) -> None:
    with _named(event.id):
        _names(("id", event.id))
        _references(("author", event.author))
        match event:
            case Assert(item=draft):
                _draft(draft)
            case Supersede(target=target, item=draft):
                _references(("target", target))
                _draft(draft)
            case Revoke(target=target, why=why):
                _references(("target", target))
                _text(why, "why")
            case Close(target=target) | Resolve(target=target):
                _references(("target", target))
            case Evidence(source_id=source, text=text):
                _names(("source.id", source))
                _text(text, "source.text")
            case OpenObligation(obligation=o):
                _names(("obligation.id", o.id), ("obligation.role", o.role))
                _names(("obligation.frontier.id", o.frontier_id))
                _text(o.text, "obligation.text")
                _text(o.frontier_text, "obligation.frontier.text")
                _each(_names, "obligation.requires", o.requires)
                _each(_names, "obligation.critical", o.critical)


def _draft(draft: ItemDraft) -> None:
    _names(("item.id", draft.id), ("item.task", draft.task))
    if draft.key is not None:
        _names(("item.key", draft.key))
    _text(draft.text, "item.text")
    for name in _DRAFT_SETS:
        _each(_names, f"item.{name}", getattr(draft, name) or ())
    _each(_references, "item.depends_on", draft.depends_on)
    _each(_references, "item.cites", draft.cites)
    if type(draft.unconfirmed) is not bool:
        raise InvalidInput(f"item.unconfirmed: must be True or False, not {draft.unconfirmed!r}")


def _names(*fields: tuple[str, object]) -> None:
    """Each value a string with no control or invisible character, no space at an end."""
    for what, value in fields:
        if type(value) is str and plain_name(value) is not None:
            continue
        _strings((what, value))
        try:
            name_shape(value)
        except ValueError as exc:
            raise InvalidInput(f"{what}: {exc}") from None
        if not value:
            raise InvalidInput(f"{what}: must not be empty")


def _references(*fields: tuple[str, object]) -> None:
    """Each value a string that could name something stored: no NUL, no lone surrogate.

    Either reached the database: SQLite named no such item, PostgreSQL refused the NUL with
    a store error, and a surrogate failed to encode (a review).
    """
    for what, value in fields:
        _strings((what, value))
        if isinstance(value, str) and _UNSTORABLE.search(value):
            raise InvalidInput(f"{what}: {value[:60]!r} names nothing (a NUL or a lone surrogate)")


def _strings(*fields: tuple[str, object]) -> None:
    for what, value in fields:
        if not isinstance(value, str):
            raise InvalidInput(f"{what}: must be a string, not {value!r}")


def _text(value: object, what: str) -> None:
    _strings((what, value))
    assert isinstance(value, str)  # noqa: S101  # for the type checker: _strings refused others
    if says_nothing(value):
        raise InvalidInput(f"{what}: must say something (it is empty, blank or invisible)")
    found = _UNSTORABLE.search(value)
    if found is not None:
        char = ord(found.group())
        raise InvalidInput(f"{what}: may not contain U+{char:04X} (a NUL or a lone surrogate)")


def _each(check: Callable[..., None], what: str, values: Iterable[object]) -> None:
    for value in values:
        check((what, value))


@contextmanager
def _about(prefix: str) -> Iterator[None]:
    """An `InvalidInput` raised inside, its message after ``prefix``."""
    try:
        yield
    except InvalidInput as error:
        raise InvalidInput(prefix + str(error)) from None


@contextmanager
def _named(event_id: object) -> Iterator[None]:
    """An `InvalidInput` raised inside, as an `InvalidEvent` naming ``event_id``.

    Raises:
        InvalidInput: if ``event_id`` is no string.
    """
    if type(event_id) is not str:
        raise InvalidInput(f"an event id must be a string, not {event_id!r}")
    try:
        yield
    except InvalidEvent:
        raise
    except InvalidInput as error:
        raise InvalidEvent(event_id, str(error)) from None
