"""What a rendered decision adds to its record from the workspace's history.

A decision record names event ids (``e9``) as evidence and, when no view was issued,
does not say which requirement labels its selected items support. Both are in the
history that produced it: the scenario's steps for ``replay``, the store's event log for
``explain``. Items and events never change once recorded (a change is a new event, a
replacement a new item id), so reading them later gives what the decision saw. The
additions are for the text and the page only: ``replay --json`` prints the record as
logged.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from readmit.clock import format_time
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    OpenObligation,
    Resolve,
    Revoke,
    Supersede,
)

_SNIPPET = 80
"""Characters of an event's text a page shows (the rest is cut with an ellipsis)."""


@dataclass(frozen=True, slots=True)
class History:
    """Item id → the requirement labels it supports; event id → what the event was."""

    supports: Mapping[str, list[str]]
    events: Mapping[str, dict[str, str]]
    """In the order they were recorded."""


def history(steps: Iterable[object]) -> History:
    """The supports and event summaries of ``steps`` (events; other steps are skipped)."""
    supports: dict[str, list[str]] = {}
    events: dict[str, dict[str, str]] = {}
    for step in steps:
        if not isinstance(step, Event):
            continue
        if isinstance(step, Assert | Supersede):
            supports[step.item.id] = sorted(step.item.supports)
        events[step.id] = {
            "id": step.id,
            "op": step.op,
            "author": step.author,
            "at": format_time(step.at),
            "text": _snippet(_event_text(step)),
        }
    return History(supports=supports, events=events)


def for_page(record: Mapping[str, Any], past: History) -> dict[str, Any]:
    """``record`` with what a reader needs that it does not name itself.

    ``supports``: the labels of each selected item; ``events``: each event its exclusions
    cite as evidence (id, op, author, time, the start of its text), in the order recorded.
    The thresholds a view needed are the record's own (``thresholds``): the history does
    not say which policy a return ran under.
    """
    cited = {x for e in record["excluded"] for x in e["evidence"]}
    return {
        **record,
        "supports": {i: past.supports[i] for i in record["selected"] if past.supports.get(i)},
        "events": [summary for i, summary in past.events.items() if i in cited],
    }


def _event_text(event: Event) -> str:
    match event:
        case Assert():
            return event.item.text
        case Supersede():
            return f"replaces {event.target}: {event.item.text}"
        case Revoke():
            return f"revokes {event.target}: {event.why}"
        case Close():
            return f"closes {event.target}"
        case Resolve():
            return f"resolves {event.target}"
        case OpenObligation():
            return event.obligation.text
        case Evidence():
            return event.text
        case _:
            assert_never(event)


def _snippet(text: str) -> str:
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1].rstrip() + "…"
