"""The store's codec: events, items and obligations as the store writes and reads them.

Trusted data only: what this module writes, and nothing else, is what it reads
back, so reading does not validate (a stored event of a shape `event_to_wire` does not write
is read through `readmit.wire.edge`, the one parser of the event format). Times are
written one way everywhere, RFC 3339 in UTC with a ``Z`` (`readmit.clock.format_time`);
bodies written before that (``+00:00`` or another offset) read back as the same instants.
"""

from datetime import datetime
from functools import lru_cache
from typing import Any

from readmit.clock import format_time
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    OpenObligation,
    Resolve,
    Revoke,
    Supersede,
)
from readmit.model import ANY, Item, Kind, Obligation, Receipt, Scope, Validity
from readmit.records import positional
from readmit.wire.edge import parse_event
from readmit.wire.logged import logged_event


def _time(value: datetime | None) -> str | None:
    return None if value is None else format_time(value)


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
    head = {"id": event.id, "at": format_time(event.at), "op": event.op, "author": event.author}
    match event:
        case Evidence():
            return {**head, "source": {"id": event.source_id, "text": event.text}}
        case Assert():
            return {**head, "item": draft_to_wire(event.item)}
        case Supersede():
            return {**head, "target": event.target, "item": draft_to_wire(event.item)}
        case Revoke():
            return {**head, "target": event.target, "why": event.why}
        case Close() | Resolve():
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


def event_from_json(body: object, epoch: int) -> Event:
    """Inverse of `event_to_wire`, for an event the store logged at ``epoch``.

    Read directly when ``body`` has the shape `event_to_wire` writes
    (`readmit.wire.logged`), else by the edge parser.
    """
    event = logged_event(body) if type(body) is dict else None
    return parse_event(body, epoch) if event is None else event


def item_to_json(item: Item) -> dict[str, Any]:
    """A materialized item as stored (with epoch, scope and receipt).

    A field at its default (`Item`'s, `Scope`'s and `Validity`'s: `_LEFT_OUT`) is left
    out, and `item_from_json` puts it back: most items have no key, role, validity,
    premises or citations and serve every role, task and purpose, and without those
    fields a body is about 40% shorter and parses in half the time. Bodies written in
    full before read the same.
    """
    full = _in_full(item)
    return {name: value for name, value in full.items() if _LEFT_OUT.get(name, _KEPT) != value}


def _in_full(item: Item) -> dict[str, Any]:
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


_LEFT_OUT: dict[str, Any] = {
    name: value
    for name, value in _in_full(Item(id="-", text="-", epoch=1, author="-")).items()
    if name not in ("id", "text", "epoch", "author")
}
"""The stored fields an item body leaves out, each with its default: an item's own."""
_KEPT = object()
_ANY = (ANY,)
_OPEN = Validity()
_KINDS = {str(kind): kind for kind in Kind}
"""A stored kind by its name (a dict lookup; calling the enum costs more per item)."""


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
_item = positional(Item)
_receipt = positional(Receipt)


def _ids(values: list[str] | None) -> frozenset[str]:
    return frozenset(values) if values else _NONE


def item_from_json(d: dict[str, Any]) -> Item:
    """Inverse of `item_to_json` (trusted, store-written data, with or without defaults).

    The defaults are put back one ``get`` a field (merging `_LEFT_OUT` in first cost 3%
    more a decoded item); the round-trip property tests hold them to `_LEFT_OUT`.
    """
    get = d.get
    r = get("receipt")
    kind = get("kind", "fact")
    return _item(  # the fields in `Item`'s order
        d["id"],
        d["text"],
        _KINDS.get(kind) or Kind(kind),
        d["epoch"],
        d["author"],
        _scope(
            tuple(get("principals", _ANY)),
            tuple(get("roles", _ANY)),
            get("task", ANY),
            tuple(get("purposes", _ANY)),
        ),
        _validity(get("valid_from"), get("valid_to")),
        get("key"),
        None if r is None else _receipt(r[0], r[1], r[2], r[3]),
        _ids(get("depends_on")),
        _ids(get("supports")),
        _ids(get("cites")),
        get("for_role"),
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
