"""The texts an appended event stores, each string encoded once.

An event that asserts an item is stored three ways: its canonical JSON in the log
(`readmit.canonical.canonical_json` of `readmit.wire.event_to_wire`), the receipt
digest of the item's id and text, and the item's row body (``json.dumps`` of
`readmit.wire.codec.item_to_json`). Building each from a dict through the generic
encoder encodes the same strings up to three times and sorts the same keys every
time; here every string is encoded once by the json module's own C string encoders
and the documents are joined in their fixed key order. The results are byte for byte
what the generic path produces (``tests/store/test_encoding.py`` pins that), so stored
rows and digests do not change. Revokes, closes and resolves are joined the same way;
the other events take the generic path.
"""

from datetime import UTC, datetime
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import NamedTuple

from readmit.canonical import canonical_json, digest_text, json_string, json_strings
from readmit.errors import InvalidEvent
from readmit.events import Assert, Close, Event, ItemDraft, Resolve, Revoke, Supersede
from readmit.model import ANY, Kind
from readmit.wire.codec import event_to_wire

_EVERY = frozenset({ANY})


class EventText(NamedTuple):
    """An event's log row texts, and its item's id and text as canonical JSON strings."""

    text: str
    """The canonical JSON of the event's wire form."""
    stamp: str
    """Its time as the ``at`` column stores it (`readmit.store.connection.stamp`)."""
    item: tuple[str, str] | None
    """The item's id and text, JSON-encoded, for an assert or a supersede."""


def times(at: datetime) -> tuple[str, str]:
    """``at`` as the wire writes it (`readmit.clock.format_time`) and as the log stores it.

    One ``isoformat`` for both: the wire form drops a zero microsecond, the stored
    form keeps all six digits and the ``+00:00`` offset.
    """
    iso = at.astimezone(UTC).isoformat()
    if len(iso) == 25:  # no microseconds: YYYY-MM-DDTHH:MM:SS+00:00
        return iso[:19] + "Z", iso[:19] + ".000000+00:00"
    return iso[:-6] + "Z", iso


def encode(event: Event) -> EventText:
    """The texts ``event``'s log row stores.

    Raises:
        InvalidEvent: if a time of it (``at``, its item's validity) has no UTC form in
            years 1 to 9999 (``9999-12-31T23:00-14:00``), as the wire says (`Instant`).
    """
    try:  # no cost until it raises
        wire_at, stamp = times(event.at)
        match event:
            case Assert() | Supersede():
                draft = event.item
                item = (json_string(draft.id), json_string(draft.text))
                tail = ',"op":"assert"}'
                if isinstance(event, Supersede):
                    tail = ',"op":"supersede","target":' + json_string(event.target) + "}"
                head = (
                    '{"at":"' + wire_at + '","author":' + json_string(event.author)
                    + ',"id":' + json_string(event.id) + ',"item":'
                )  # fmt: skip
                return EventText(head + _draft(draft, item) + tail, stamp, item)
            case Revoke() | Close() | Resolve():  # the withdrawals, the commonest after asserts
                why = ',"why":' + json_string(event.why) if isinstance(event, Revoke) else ""
                text = (
                    '{"at":"' + wire_at + '","author":' + json_string(event.author)
                    + ',"id":' + json_string(event.id) + ',"op":"' + event.op
                    + '","target":' + json_string(event.target) + why + "}"
                )  # fmt: skip
                return EventText(text, stamp, None)
            case _:
                return EventText(canonical_json(event_to_wire(event)), stamp, None)
    except OverflowError:
        problem = "a time of it is outside the years 1 to 9999 in UTC"
        raise InvalidEvent(event.id, problem, fields=("at", "item.validity")) from None


def _names(values: frozenset[str]) -> str:
    return '"*"' if ANY in values else json_strings(values)


def _time(value: datetime | None) -> str:
    return "null" if value is None else '"' + times(value)[0] + '"'


def _draft(d: ItemDraft, item: tuple[str, str]) -> str:
    """`readmit.wire.codec.draft_to_wire` as canonical JSON (keys in sorted order)."""
    key = "" if d.key is None else ',"key":' + json_string(d.key)
    readers = ""
    if d.principals is not None or ANY not in d.roles:
        principals = "" if d.principals is None else '"principals":' + _names(d.principals) + ","
        readers = ',"readers":{' + principals + '"roles":' + _names(d.roles) + "}"
    valid = ""
    if d.validity.valid_from is not None:
        valid = ',"valid_from":' + _time(d.validity.valid_from)
    if d.validity.valid_to is not None:
        valid += ',"valid_to":' + _time(d.validity.valid_to)
    return (
        f'{{"cites":{json_strings(d.cites)},"depends_on":{json_strings(d.depends_on)},"id":{item[0]}{key}'
        f',"kind":{json_string(str(d.kind))},"purposes":{_names(d.purposes)}{readers}'
        f',"supports":{json_strings(d.supports)},"task":{json_string(d.task)},"text":{item[1]}'
        f',"unconfirmed":{"true" if d.unconfirmed else "false"}{valid}}}'
    )


def receipt_digest(item: tuple[str, str]) -> str:
    """`readmit.events.text_digest` of an item whose id and text are already encoded."""
    return digest_text('{"id":' + item[0] + ',"text":' + item[1] + "}")


@lru_cache(maxsize=4096)
def _ascii_list(values: frozenset[str]) -> str:
    return "[" + ", ".join(map(encode_basestring_ascii, sorted(values))) + "]"


@lru_cache(maxsize=4096)
def _ascii(value: str) -> str:
    # Values that repeat across items (kinds, tasks, authors), each escaped once.
    return encode_basestring_ascii(value)


@lru_cache(maxsize=1024)
def _readers(principal: str) -> str:
    # The default readers: the author's principal alone.
    return _scoped(frozenset({principal}), "principals")


def _as_ascii(encoded: str, value: str) -> str:
    """``value`` as ``json.dumps`` writes it, given its canonical (non-ASCII kept) encoding.

    The two escape ASCII alike but for DEL, which only ``json.dumps`` escapes, so an
    encoding that is plain ASCII without DEL serves both.
    """
    if encoded.isascii() and "\x7f" not in encoded:
        return encoded
    return encode_basestring_ascii(value)


def item_body(
    d: ItemDraft,
    item: tuple[str, str],
    *,
    event_id: str,
    author: str,
    principal: str,
    epoch: int,
    receipt: str,
) -> str:
    """The row body of the item ``d`` materializes to: ``json.dumps(item_to_json(item))``.

    Its fields at their defaults are left out, as `item_to_json` leaves them out.

    Args:
        d: the draft.
        item: its id and text as canonical JSON strings (`encode`).
        event_id: the event that records it.
        author: the event's author.
        principal: the author's principal (the readers when the draft names none).
        epoch: the event's epoch.
        receipt: the receipt digest (ignored for an unconfirmed draft, which has none).
    """
    who = _ascii(author)
    kind = "" if d.kind == Kind.FACT else ', "kind": ' + _ascii(d.kind)
    key = "" if d.key is None else ', "key": ' + encode_basestring_ascii(d.key)
    readers = _readers(principal) if d.principals is None else _scoped(d.principals, "principals")
    rest = readers + _scoped(d.roles, "roles")
    if d.task != ANY:
        rest += ', "task": ' + _ascii(d.task)
    rest += _scoped(d.purposes, "purposes")
    validity = d.validity
    if validity.valid_from is not None:
        rest += ', "valid_from": ' + _time(validity.valid_from)
    if validity.valid_to is not None:
        rest += ', "valid_to": ' + _time(validity.valid_to)
    if not d.unconfirmed:  # a digest is plain ASCII: quoted as is
        rest += f', "receipt": [{encode_basestring_ascii(event_id)}, {who}, {epoch}, "{receipt}"]'
    premises = ""
    if d.depends_on or d.supports or d.cites:
        premises = (
            _listed(d.depends_on, "depends_on")
            + _listed(d.supports, "supports")
            + _listed(d.cites, "cites")
        )
    return (
        f'{{"id": {_as_ascii(item[0], d.id)}, "text": {_as_ascii(item[1], d.text)}{kind}'
        f', "epoch": {epoch}, "author": {who}{key}{rest}{premises}}}'
    )


@lru_cache(maxsize=4096)
def _scoped(values: frozenset[str], field: str) -> str:
    """A scope's set as a field of the body, or nothing when it is every one (the default)."""
    return "" if values == _EVERY else f', "{field}": ' + _ascii_list(values)


def _listed(values: frozenset[str], field: str) -> str:
    """A set of ids as a field of the body, or nothing when it is empty (the default)."""
    return f', "{field}": ' + _ascii_list(values) if values else ""
