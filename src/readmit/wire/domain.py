"""The wire's field rules, applied to values a library caller builds in Python.

An HTTP body, an MCP call and a scenario file are checked by the models of
`readmit.wire.inbound` before they become events; an `Assert` or `Agent` built in
Python reaches the store without them. The store holds those to the same rules here,
so every edge refuses what the others refuse: a NUL in an id breaks PostgreSQL, a
newline in one forges a line of an operator's report, an empty ``why`` records a
revocation that gives no reason.
"""

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from readmit.clock import aware
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
from readmit.wire.fields import (
    check_name,
    check_returning,
    check_text,
    plain_name,
    plain_text,
)

_DRAFT_SETS = ("supports", "depends_on", "cites", "principals", "roles", "purposes")


def checked_events(events: Sequence[object]) -> None:
    """Refuse a batch holding anything but events, or names and texts a body could not hold.

    Raises:
        InvalidInput: for something other than an event, or an id that is no string.
        InvalidEvent: naming the event and the field at fault.
    """
    events_only(events)
    for event in events:
        if not _plain(event):  # type: ignore[arg-type]  # events_only checked each
            _event(event)  # type: ignore[arg-type]


def _plain(event: Event) -> bool:
    """Whether every name of ``event`` is printable ASCII and every text fine.

    About a microsecond an event; ``False`` leaves it to `_event`, which tells exactly what,
    if anything, is wrong.
    """
    try:
        if not (plain_name(event.id) and plain_name(event.author)):
            return False
        match event:
            case Assert(item=d) | Supersede(item=d):
                if type(event) is Supersede and not plain_name(event.target):
                    return False
                return _plain_draft(d)
            case Revoke(target=target, why=why):
                return bool(plain_name(target) and plain_text(why))
            case Close(target=target) | Resolve(target=target):
                return plain_name(target) is not None
            case Evidence(source_id=source, text=text):
                return bool(plain_name(source) and plain_text(text))
            case OpenObligation(obligation=o):
                names = (o.id, o.role, o.frontier_id, *o.requires, *o.critical)
                return (
                    all(map(plain_name, names))
                    and plain_text(o.text)
                    and plain_text(o.frontier_text)
                )
    except TypeError:  # a value that is no string
        return False


def _plain_draft(d: ItemDraft) -> bool:
    if not (plain_name(d.id) and plain_text(d.text) and type(d.unconfirmed) is bool):
        return False
    if (d.task != ANY and not plain_name(d.task)) or (d.key is not None and not plain_name(d.key)):
        return False
    sets = (d.supports, d.depends_on, d.cites, d.principals, d.roles, d.purposes)
    return all(all(map(plain_name, s)) for s in sets if s and s != _ANYONE)


_ANYONE = frozenset({ANY})


def checked_return(request: ReturnRequest) -> None:
    """Refuse a return request a request body could not hold (an empty task, say).

    Raises:
        InvalidEvent: naming the request and the field at fault.
    """
    with _named(request.id):
        aware(request.at, request.id)
        _names(("agent", request.agent), ("task", request.task), ("purpose", request.purpose))


def checked_experience(step: RecordExperience) -> None:
    """Refuse a private memory a request body could not hold.

    Raises:
        InvalidEvent: naming the step and the field at fault.
    """
    with _named(step.id):
        aware(step.at, step.id)
        _names(("agent", step.agent), ("experience.id", step.experience_id))
        _names(("experience.source", step.source))
        check_text(step.text, "experience.text")


def checked_departure(agent: str, at: datetime, returning_to: object) -> None:
    """Refuse a departure whose agent, time or stated return a request body could not hold.

    Raises:
        InvalidInput: naming the field at fault.
        InvalidEvent: if ``at`` has no time zone.
    """
    check_name(agent, "agent")
    aware(at, f"depart {agent}")
    if returning_to is not None:
        if not (isinstance(returning_to, tuple) and len(returning_to) == 2):
            raise InvalidInput("returning_to must be a (task, purpose) pair")
        check_returning(*returning_to)


def checked_workspace(workspace: object, agents: object) -> None:
    """Refuse a workspace name, or agents, that a request body could not hold.

    Raises:
        InvalidInput: naming the field at fault.
    """
    check_name(workspace, "workspace")
    if isinstance(agents, str | bytes) or not isinstance(agents, Iterable):
        raise InvalidInput(f"agents must be a list of readmit.Agent, not {agents!r}")
    for agent in agents:
        if not isinstance(agent, Agent):
            raise InvalidInput(f"agents must hold readmit.Agent values, not {agent!r}")
        _names(("agent.id", agent.id), ("agent.principal", agent.principal))
        check_name(agent.role, "agent.role")


def _event(event: Event) -> None:
    with _named(event.id):
        _names(("id", event.id), ("author", event.author))
        match event:
            case Assert(item=draft):
                _draft(draft)
            case Supersede(target=target, item=draft):
                check_name(target, "target")
                _draft(draft)
            case Revoke(target=target, why=why):
                check_name(target, "target")
                check_text(why, "why")
            case Close(target=target) | Resolve(target=target):
                check_name(target, "target")
            case Evidence(source_id=source, text=text):
                check_name(source, "source.id")
                check_text(text, "source.text")
            case OpenObligation(obligation=o):
                _names(("obligation.id", o.id), ("obligation.role", o.role))
                check_name(o.frontier_id, "obligation.frontier.id")
                check_text(o.text, "obligation.text")
                check_text(o.frontier_text, "obligation.frontier.text")
                _members("obligation.requires", o.requires)
                _members("obligation.critical", o.critical)


def _draft(draft: ItemDraft) -> None:
    _names(("item.id", draft.id), ("item.task", draft.task))
    if draft.key is not None:
        check_name(draft.key, "item.key")
    check_text(draft.text, "item.text")
    for name in _DRAFT_SETS:
        _members(f"item.{name}", getattr(draft, name) or ())
    if type(draft.unconfirmed) is not bool:
        raise InvalidInput(f"item.unconfirmed: must be True or False, not {draft.unconfirmed!r}")


def _names(*fields: tuple[str, object]) -> None:
    for what, value in fields:
        check_name(value, what)


def _members(what: str, values: Iterable[str]) -> None:
    for value in values:
        check_name(value, what)


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
