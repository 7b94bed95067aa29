"""A batch of events as one agent sends it, checked before the store sees it.

Every refusal names the event by its position in the batch, ``events[i]``
(`readmit.errors.InvalidEventAt`, ``details.index`` over HTTP), and by its id when
the agent gave one: an id the server assigned, or the stored form ``<agent>/<id>``,
is one the agent never wrote. The store's own refusals are located the same way
(`Batch.locate`).
"""

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar

from readmit.clock import format_time, now
from readmit.errors import (
    Forbidden,
    InvalidEvent,
    InvalidEventAt,
    InvalidInput,
    ReadmitError,
)
from readmit.events import Depart, Event, RecordExperience, ReturnRequest
from readmit.service.ids import namespaced, own
from readmit.service.limits import Limits, check_strings
from readmit.service.times import in_calendar, not_ahead
from readmit.wire import at_position, parse_step

E = TypeVar("E", bound=ReadmitError)


@dataclass(frozen=True, slots=True)
class Batch:
    """An agent's events, in its own namespace, in the order sent."""

    events: tuple[Event, ...]
    named: tuple[bool, ...]
    """Whether the agent gave each event its id."""
    timed: bool
    """Whether the agent dated the events (else the server keeps time at commit)."""

    def locate(self, error: InvalidEvent) -> InvalidEvent:
        """``error`` with the position of the event it names, when that is one of the batch's."""
        for index, event in enumerate(self.events):
            if event.id == error.event_id:
                return at_position(error, index, named=self.named[index])
        return error


def check_sizes(agent: str, raw_events: Sequence[object], max_chars: int, most: int) -> None:
    """Refuse a string over ``max_chars`` (or holding a NUL), naming its event's position.

    And an array of more than ``most`` members: every array of an event is a set (an
    item's supports, premises, citations, readers and purposes, an obligation's labels),
    refused before it is parsed. A million premises or readers in one item used to be
    parsed (two seconds of the server's time), stored, and read at every return.

    Raises:
        PayloadTooLarge: for a string or an array over the limit.
        InvalidInput: for a NUL character.
    """
    for index, raw in enumerate(raw_events):
        try:
            check_strings(raw, max_chars, f"events[{index}]", most)
        except ReadmitError as exc:
            fields = (exc.located or {}).get("fields", [])
            if stored := _stored(agent, raw):  # only now: a name check an event costs
                where = f"events[{index}]"
                exc.args = (f"event {stored!r} ({where}){str(exc).removeprefix(where)}",)
            raise located(exc, stored, index, *fields) from None


def _stored(agent: str, raw: object) -> str | None:
    """The id ``raw`` gives, as it would be stored (None: it gives none, or none storable)."""
    given = raw.get("id") if isinstance(raw, dict) else None
    if not isinstance(given, str):
        return None
    try:
        return own(agent, given)
    except InvalidInput:
        return None


def own_batch(
    agent: str, raw_events: Sequence[object], clock: Callable[[], datetime], limits: Limits
) -> Batch:
    """Validate every event ``agent`` sent, by the server's ``clock``; ids and times filled in.

    The clock is read only for a batch whose events give their times (each checked against
    it): one without is dated at commit, and its events' times until then are this
    machine's (the database's clock is a round trip, `readmit.store.clock`).

    Raises:
        InvalidEvent: for the first event refused (an `InvalidEventAt` when it is one
            event's fault), or when only some events give ``at``.
        Forbidden: for an event authored by another agent.
        ClockSkew: for an event dated further ahead than the allowed skew.
    """
    timed = [isinstance(raw, dict) and "at" in raw for raw in raw_events]
    if any(timed) and not all(timed):
        raise InvalidInput("give `at` on every event or on none")
    at = clock() if any(timed) else now()
    named = tuple(isinstance(raw, dict) and "id" in raw for raw in raw_events)
    events = tuple(
        _own_event(agent, raw, index, at, named[index]) for index, raw in enumerate(raw_events)
    )
    batch = Batch(events=events, named=named, timed=any(timed))
    _check_unique(batch)
    _check_times(batch, at, limits)
    return batch


def _where(event: Event, index: int, named: bool) -> str:
    return f"event {event.id!r} (events[{index}])" if named else f"events[{index}]"


def _own_event(agent: str, raw: object, index: int, at: datetime, named: bool) -> Event:
    if isinstance(raw, dict):
        raw = {"at": format_time(at), **raw}

    def stored() -> str | None:
        """The id as stored, made only for a refusal (None: it gave none it can store)."""
        return _stored(agent, raw) if named else None

    try:
        step = parse_step(raw, index)
    except InvalidEventAt as exc:  # named as stored, as every other refusal of the batch
        event_id = stored()
        raise InvalidEventAt(
            event_id or exc.event_id, exc.problem, index=index, fields=exc.fields,
            named=event_id is not None, unknown=exc.unknown,
        ) from None  # fmt: skip
    if isinstance(step, RecordExperience | Depart | ReturnRequest):
        path, tool = _ENDPOINTS[step.op]
        problem = f"op {step.op!r} has its own endpoint, POST {path} (MCP: the {tool} tool)"
        event_id = stored()
        raise InvalidEventAt(
            event_id or step.id, problem, index=index, fields=("op",), named=event_id is not None
        )
    if step.author != agent:
        event_id = stored()
        where = f"event {event_id!r} (events[{index}])" if event_id else f"events[{index}]"
        refused = f"{where}: agent {agent!r} may only record events it authors"
        raise located(Forbidden(refused), event_id, index, "author")
    if not named:
        # Ids are the server's to give when the agent leaves them out: a per-request
        # index would collide with the events of earlier requests.
        step = replace(step, id=f"ev-{uuid.uuid4().hex[:16]}")
    try:
        return namespaced(step, agent, id_given=named)
    except InvalidEvent as exc:
        raise at_position(exc, index, named=stored() is not None) from None


_ENDPOINTS = {
    "experience": ("/v1/memories", "remember"),
    "depart": ("/v1/depart", "depart"),
    "return": ("/v1/return", "return_view"),
}
"""Where each step that is no event is asked for: its HTTP route and its MCP tool."""


def _check_unique(batch: Batch) -> None:
    first: dict[str, int] = {}
    for index, event in enumerate(batch.events):
        if event.id in first:
            problem = f"the batch already has an event with this id (events[{first[event.id]}])"
            raise InvalidEventAt(
                event.id, problem, index=index, fields=("id",), named=batch.named[index]
            )
        first[event.id] = index


def _check_times(batch: Batch, at: datetime, limits: Limits) -> None:
    for index, event in enumerate(batch.events):
        what = _where(event, index, batch.named[index])
        validity = getattr(getattr(event, "item", None), "validity", None)
        field = "at"
        try:
            not_ahead(event.at, at, limits.clock_skew, what)
            if validity is not None:
                for field, value in (
                    ("item.valid_from", validity.valid_from),
                    ("item.valid_to", validity.valid_to),
                ):
                    if value is not None:
                        in_calendar(value, f"{what}: {field}")
        except ReadmitError as exc:
            raise located(exc, _shown(batch, index), index, field) from None


def _shown(batch: Batch, index: int) -> str | None:
    """The id of ``batch``'s event ``index``, as stored (None: the sender gave it none)."""
    return batch.events[index].id if batch.named[index] else None


def located(error: E, event_id: str | None, index: int, *fields: str) -> E:
    """``error``, saying which event of the batch and which of its fields it refuses."""
    error.located = {"event_id": event_id, "index": index, "fields": list(fields)}
    return error


def own_hint(error: InvalidEvent, agent: str) -> InvalidEvent:
    """``error``, saying how a teammate's item is named when a bare reference found none.

    A bare ``x`` is the caller's own ``<agent>/x``; the hint is the same whether or not a
    teammate has an ``x``, so it tells nothing of what the caller may not read.
    """
    if error.unknown is None or not error.unknown.startswith(f"{agent}/"):
        return error
    hint = " (a bare id is your own; name a teammate's as AUTHOR/ID, as /v1/state shows it)"
    return InvalidEvent(
        error.event_id, error.problem + hint, unknown=error.unknown, fields=error.fields
    )
