"""Reading back what the store logged: bodies it wrote, without validating them again.

Every event in the log was validated by `readmit.wire.edge` on its way in and stored
as the canonical JSON of `readmit.wire.codec.event_to_wire`. Reading one back
through pydantic costs about four times what building its values directly does, and
a return after a long absence reads tens of thousands. `logged_event` builds them
directly from exactly the shapes `event_to_wire` writes; a body of any other shape
(an extra or missing field, readers given as ``"*"``, a time neither in the form
`readmit.clock.format_time` writes nor RFC 3339 with an offset) is handed to the edge
parser, so every body reads back as the edge would read it (``tests/test_wire_logged.py``
pins that).
"""

import json
from datetime import datetime
from typing import Any

from pydantic_core import from_json

from readmit.clock import parse_time
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    Resolve,
    Revoke,
    Supersede,
)
from readmit.model import ANY, Kind, Validity, blank
from readmit.records import positional

_HEAD = frozenset({"id", "at", "op", "author"})
_FIELDS = {
    "assert": _HEAD | {"item"},
    "supersede": _HEAD | {"target", "item"},
    "revoke": _HEAD | {"target", "why"},
    "close": _HEAD | {"target"},
    "resolve": _HEAD | {"target"},
    "evidence": _HEAD | {"source"},
    "obligation": _HEAD | {"obligation"},
}
"""The fields `event_to_wire` writes, by op."""
_DRAFT = frozenset(
    {"id", "text", "kind", "supports", "depends_on", "cites", "task", "purposes", "unconfirmed"}
)
_DRAFT_OPTIONAL = frozenset({"key", "readers", "valid_from", "valid_to"})
_OBLIGATION = frozenset({"id", "text", "role", "requires", "critical", "frontier"})
_ANY = frozenset({ANY})
_NONE: frozenset[str] = frozenset()
_KINDS = {str(kind): kind for kind in Kind if kind is not Kind.OBLIGATION}
_OPEN = Validity()
_SEPARATORS = ("--T::Z", "--T::.")
"""Characters 4, 7, 10, 13, 16 and 19 of a time `format_time` writes."""
_made_draft = positional(ItemDraft, checked=False)
"""An `ItemDraft` from its fields in order, checked by `_draft` instead."""


class _Unlike(ValueError):
    """A body not in the shape `event_to_wire` writes: the edge parser reads it."""


def loads(body: str) -> Any:
    """A stored body's JSON: pydantic's parser (about twice as fast as the json module's).

    Bodies are written by ``json.dumps``, which escapes a lone surrogate that pydantic's
    parser refuses: the json module reads those.
    """
    try:
        return from_json(body)
    except ValueError:
        return json.loads(body)


def logged_event(body: dict[str, Any]) -> Event | None:
    """The event ``body`` holds, if it has the shape `event_to_wire` writes; else ``None``."""
    try:
        return _event(body)
    except (ValueError, KeyError, TypeError, AttributeError):  # _Unlike is a ValueError
        return None


def _event(d: dict[str, Any]) -> Event:
    op = d["op"]
    if d.keys() != _FIELDS[op]:
        raise _Unlike(op)
    event_id, at, author = d["id"], _time(d["at"]), d["author"]
    if type(event_id) is not str or type(author) is not str:
        raise _Unlike("head")
    match op:
        case "assert":
            return Assert(id=event_id, at=at, author=author, item=_draft(d["item"]))
        case "supersede":
            item = _draft(d["item"])
            return Supersede(id=event_id, at=at, author=author, target=d["target"], item=item)
        case "revoke":
            return Revoke(id=event_id, at=at, author=author, target=d["target"], why=d["why"])
        case "close":
            return Close(id=event_id, at=at, author=author, target=d["target"])
        case "resolve":
            return Resolve(id=event_id, at=at, author=author, target=d["target"])
        case "evidence":
            source = d["source"]
            if source.keys() != {"id", "text"}:
                raise _Unlike(op)
            return Evidence(
                id=event_id, at=at, author=author, source_id=source["id"], text=source["text"]
            )
        case _:  # "obligation"
            return OpenObligation(id=event_id, at=at, author=author, obligation=_obligation(d))


def _time(value: object) -> datetime:
    """A time as `format_time` writes it (``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``), or with an offset.

    The log held offsets (``+00:00``) before times were written in UTC: read by the edge,
    such a body's names were held to its 200 characters, and an id a library caller made
    longer then failed every read of the log (a review). Read as the edge reads a time.
    """
    if type(value) is not str:
        raise _Unlike("time")
    if len(value) in (20, 27) and value[-1] == "Z" and value[4:20:3] in _SEPARATORS:
        return datetime.fromisoformat(value)  # which alone takes any separator, week dates
    try:
        return parse_time(value)
    except ValueError:
        raise _Unlike("time") from None


def _ids(value: object) -> frozenset[str]:
    """A list of strings as a set (what `ItemDraft` would refuse is not read directly)."""
    if type(value) is not list:
        raise _Unlike("ids")
    if not value:
        return _NONE
    if not all(type(v) is str for v in value):
        raise _Unlike("ids")
    return frozenset(value)


def _names(value: object) -> frozenset[str]:
    """Readers or purposes: ``"*"`` (anyone) or a list, not empty, ``*`` alone if there."""
    if value == "*":
        return _ANY
    names = _ids(value)
    if not names or (ANY in names and len(names) > 1):  # `ItemDraft` refuses, or makes {"*"}
        raise _Unlike("names")
    return names


def _draft(d: dict[str, Any]) -> ItemDraft:
    """The draft ``d`` holds, checked here as `ItemDraft.__post_init__` checks one.

    Not by it: its checks took a third of the time of reading back a logged event.
    """
    fields = d.keys()
    if not fields >= _DRAFT or not fields - _DRAFT <= _DRAFT_OPTIONAL:
        raise _Unlike("item")
    principals: frozenset[str] | None = None
    roles = _ANY
    readers = d.get("readers")
    if readers is not None:
        if type(readers) is not dict or not {"roles"} <= readers.keys() <= {"roles", "principals"}:
            raise _Unlike("readers")
        roles = _names(readers["roles"])
        if "principals" in readers:
            principals = _names(readers["principals"])
    valid_from, valid_to = d.get("valid_from"), d.get("valid_to")
    validity = _OPEN
    if valid_from is not None or valid_to is not None:
        validity = Validity(
            valid_from=None if valid_from is None else _time(valid_from),
            valid_to=None if valid_to is None else _time(valid_to),
        )
    item_id, text, task = d["id"], d["text"], d["task"]
    key, unconfirmed = d.get("key"), d["unconfirmed"]
    if (
        type(item_id) is not str
        or type(text) is not str
        or type(task) is not str
        or (key is not None and type(key) is not str)
        or type(unconfirmed) is not bool
        or blank(item_id)
        or blank(text)
    ):
        raise _Unlike("item")
    return _made_draft(
        item_id,
        text,
        _KINDS[d["kind"]],
        key,
        _ids(d["supports"]),
        _ids(d["depends_on"]),
        _ids(d["cites"]),
        principals,
        roles,
        task,
        _names(d["purposes"]),
        validity,
        unconfirmed,
    )


def _obligation(d: dict[str, Any]) -> ObligationDraft:
    o = d["obligation"]
    if o.keys() != _OBLIGATION or o["frontier"].keys() != {"id", "text"}:
        raise _Unlike("obligation")
    return ObligationDraft(
        id=o["id"],
        text=o["text"],
        role=o["role"],
        requires=_ids(o["requires"]),
        critical=_ids(o["critical"]),
        frontier_id=o["frontier"]["id"],
        frontier_text=o["frontier"]["text"],
    )
