"""What the store refuses in values a library caller builds in Python.

An HTTP body, an MCP call and a scenario file are checked by the models of
`readmit.wire.inbound` before they become events; an `Assert` or an `Agent` built in
Python reaches the store without them. The store refuses here what would harm it or
its readers: a name or id it would create (an event's, an item's, a key, a role, a
workspace's) must be a non-empty string with no control or invisible character and no
space at either end, as the wire's `Name` (a NUL breaks PostgreSQL, a newline forges a
line of an operator's report); a text must be a string with something in it, and no NUL
or lone surrogate (neither can be stored).

Two of the wire's limits are left to the wire: most lengths (LangGraph's keys and values
are longer than a request body may carry; a name the store makes is at most `NAME_BYTES`
in UTF-8, a key `KEY_BYTES`, and a workspace's or agent's names `MEMBER_NAME` characters,
which PostgreSQL's indexes need), and the control characters of a text other than NUL
(an assistant's message may hold a carriage return; reports escape them when they print
text, `readmit.cli.render`). A name that refers to what exists (an author, a target, a
premise) is checked only to be a string with no NUL or lone surrogate (no store holds
one): the store tells whether it exists, and one stored before these checks can still be named.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from readmit.canonical import UNSTORABLE
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

_DRAFT_SETS = ("supports", "principals", "roles", "purposes")
"""An item's sets of names it makes (its ``depends_on`` and ``cites`` refer to others')."""
_ANYONE = frozenset({ANY})

NAME_BYTES = 1024
"""The most UTF-8 bytes of a name the store makes: PostgreSQL indexes a row of at most 2,704
bytes, and some of its indexes hold a workspace's, an agent's and such a name together."""
KEY_BYTES = 1800
"""The most UTF-8 bytes of an item's ``key``: indexed with its workspace's name alone."""
MEMBER_NAME = 200
"""The most characters of a workspace's, an agent's, a principal's or a role's name (as the
wire's `Name`): each is indexed with others (an experience by workspace, agent and id)."""


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
        strings(("agent", request.agent))
        dated(request.at, request.id)


def checked_experience(step: RecordExperience) -> None:
    """Refuse a private memory whose ids or text the store refuses.

    Raises:
        InvalidEvent: naming the step and the field at fault.
    """
    with _named(step.id):
        _names(("id", step.id), ("experience.id", step.experience_id))
        strings(("agent", step.agent))
        _references(("experience.source", step.source))
        _text(step.text, "experience.text")
        dated(step.at, step.id)


def checked_departure(agent: str, at: datetime, returning_to: object) -> None:
    """Refuse a departure whose agent, time or stated return the store refuses.

    Raises:
        InvalidInput: naming the field at fault.
        InvalidEvent: if ``at`` has no time zone.
    """
    strings(("agent", agent))
    dated(at, f"depart {agent}")
    if returning_to is not None:
        if not (isinstance(returning_to, tuple) and len(returning_to) == 2):
            raise InvalidInput("returning_to must be a (task, purpose) pair")
        _names(("task", returning_to[0]), ("purpose", returning_to[1]))


RESERVED = "_readmit"
"""What no new workspace's name starts with: the store's own locks are named so."""


def checked_workspace(workspace: object, agents: object) -> tuple[Agent, ...]:
    """The agents of a new workspace, once the store takes its name and theirs.

    Raises:
        InvalidInput: naming the field (and the agent) at fault.
    """
    _names(("workspace", workspace))
    _short(("workspace", workspace))
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
        _short(("agent.id", agent.id))
        with _about(f"agent {agent.id!r}: "):
            _names(("principal", agent.principal), ("role", agent.role))
            _short(("principal", agent.principal), ("role", agent.role))
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


def checked_time(at: object, what: str) -> None:
    """Refuse a time a read is asked at (None: none given) as `dated` would.

    Raises:
        InvalidEvent: naming ``what``.
    """
    if at is not None:  # an OverflowError at its UTC form otherwise (a review)
        dated(at, what)


def dated(at: object, what: str) -> None:
    """An aware time with a UTC form (`readmit.clock.aware`, `readmit.clock.in_calendar`)."""
    in_calendar(aware(at, what), what)


def _reference(name: object) -> bool:
    """Whether ``name``, naming what exists, is a string that could name something stored."""
    return type(name) is str and UNSTORABLE.search(name) is None


def _storable(text: str) -> bool:
    """Whether ``text`` is a string the store takes (``TypeError`` if it is no string)."""
    return type(text) is str and not says_nothing(text) and UNSTORABLE.search(text) is None


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
        _names(("item.key", draft.key), most=KEY_BYTES)
    _text(draft.text, "item.text")
    for name in _DRAFT_SETS:
        _each(_names, f"item.{name}", getattr(draft, name) or ())
    _each(_references, "item.depends_on", draft.depends_on)
    _each(_references, "item.cites", draft.cites)
    if type(draft.unconfirmed) is not bool:
        raise InvalidInput(f"item.unconfirmed: must be True or False, not {draft.unconfirmed!r}")


def _names(*fields: tuple[str, object], most: int = NAME_BYTES) -> None:
    """Each value a string with no control or invisible character, no space at an end.

    And at most ``most`` bytes in UTF-8 (both stores alike: PostgreSQL's indexes refused
    a longer one, a review).
    """
    for what, value in fields:
        if type(value) is str and plain_name(value) is not None:
            continue
        strings((what, value))
        assert isinstance(value, str)  # noqa: S101  # for the type checker: _strings refused others
        try:
            name_shape(value)
        except ValueError as exc:
            raise InvalidInput(f"{what}: {exc}") from None
        if not value:
            raise InvalidInput(f"{what}: must not be empty")
        size = len(value.encode("utf-8"))  # name_shape refused a lone surrogate
        if size > most:
            raise InvalidInput(f"{what}: {size:,} bytes in UTF-8, at most {most:,}")


def _short(*fields: tuple[str, object]) -> None:
    """Each name (checked by `_names`) at most `MEMBER_NAME` characters."""
    for what, value in fields:
        if isinstance(value, str) and len(value) > MEMBER_NAME:
            raise InvalidInput(f"{what}: {len(value):,} characters, at most {MEMBER_NAME}")


def _references(*fields: tuple[str, object]) -> None:
    """Each value a string that could name something stored: no NUL, no lone surrogate.

    Either reached the database: SQLite named no such item, PostgreSQL refused the NUL with
    a store error, and a surrogate failed to encode (a review).
    """
    for what, value in fields:
        strings((what, value))
        if isinstance(value, str) and UNSTORABLE.search(value):
            raise InvalidInput(f"{what}: {value[:60]!r} names nothing (a NUL or a lone surrogate)")


def strings(*fields: tuple[str, object]) -> None:
    """Refuse a value that is no string, naming its field."""
    for what, value in fields:
        if not isinstance(value, str):
            raise InvalidInput(f"{what}: must be a string, not {value!r}")


def _text(value: object, what: str) -> None:
    strings((what, value))
    assert isinstance(value, str)  # noqa: S101  # for the type checker: _strings refused others
    if says_nothing(value):
        raise InvalidInput(f"{what}: must say something (it is empty, blank or invisible)")
    found = UNSTORABLE.search(value)
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
