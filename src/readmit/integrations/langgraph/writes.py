"""Writes through a `ReadmitStore`: LangGraph puts as the agent's readmit events.

A put of a value asserts the next version of its path (readmit key `item_key`, text
`render`), annotated with what the value carries under ``"_readmit"``
(`readmit.integrations.annotations`; a ``{"path": [*namespace, key]}`` premise names
the current version of that path, one written earlier in the same batch included). A
delete revokes the current version the agent may read.

The order, so that readmit and the inner store never silently disagree:

1. **Validate.** Each put's annotations are parsed and their premises resolved, and
   every event is built. A bad annotation raises `InvalidInput`: nothing is written.
2. **Record.** readmit records the batch's events atomically. A refusal raises:
   nothing is written to either store.
3. **Write the inner store.** If it raises, the paths are read back and readmit
   records what makes it match what the inner store now holds: a put that did not
   land has its item revoked, and a value still at its path (the one it was to
   replace, or the one a failed delete left) is asserted again from that value; then
   the inner store's error is raised. If the paths cannot be read back either, every
   item the batch asserted is revoked (fail closed: nothing the inner store may not
   hold can be admitted). See `readmit.integrations.langgraph.reconcile`.
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import GetOp, PutOp

from readmit.errors import Forbidden, InvalidInput
from readmit.events import Assert, Close, Event, Recorded, Revoke, Supersede
from readmit.integrations.annotations import (
    ANNOTATIONS,
    Annotations,
    Ref,
    RefKind,
    draft,
    parse,
    resolve,
)
from readmit.integrations.langgraph.expiry import Expiry, ending
from readmit.integrations.langgraph.keys import Identity, identity, item_key, render, well_formed
from readmit.integrations.langgraph.keys import parse as parse_key
from readmit.integrations.team import Member, new_id
from readmit.model import Item as ReadmitItem

log = logging.getLogger("readmit.integrations")

DELETED = "delete"
"""The prefix of the ids of the events a LangGraph delete records."""
RESTORED = "restore"
"""The prefix of the ids of the events `restore` records."""
REFS: frozenset[RefKind] = frozenset({"key", "path"})
"""The premise references a LangGraph value's annotations may use."""


@dataclass(frozen=True, slots=True)
class Write:
    """One path's last write in a batch, and what readmit recorded for it."""

    ident: Identity
    op: PutOp
    item: str | None
    """The id of the item a put asserted (None for a delete)."""
    event: Event | None
    """The event recorded for it (None: a delete of a path readmit never recorded)."""


def where(op: PutOp) -> str:
    """A write as an error names it."""
    verb = "put" if op.value is not None else "delete"
    return f"{verb} {'/'.join((*op.namespace, op.key))!r}"


def annotations(op: PutOp) -> Annotations | None:
    """The annotations a put's value carries (None: none).

    Raises:
        InvalidInput: if they are malformed.
    """
    raw = None if op.value is None else op.value.get(ANNOTATIONS)
    return None if raw is None else parse(raw, where=where(op), refs=REFS)


def _key_of(ref: Ref) -> str:
    if isinstance(ref.value, tuple):  # a path: the namespace, then the key
        return item_key(identity(ref.value[:-1], ref.value[-1]))
    return ref.value


def matches(ref: Ref, item: ReadmitItem) -> bool:
    """Whether ``item`` is a version of the path (or key) ``ref`` names."""
    return item.key == _key_of(ref)


def plan(member: Member, puts: list[PutOp], expiry: Expiry) -> list[Write]:
    """Validate ``puts`` and build their events (nothing is recorded yet).

    The last write to a path in one batch wins, as in the inner stores. A put's item ends
    when ``expiry`` (the inner store's) says its value may be swept (`Expiry.end`).

    Raises:
        InvalidInput: for a malformed annotation or a premise that names nothing.
        Forbidden: if a path holds a version the agent may not read (`may_write`).
    """
    for op in puts:
        well_formed(op)
    last: dict[Identity, PutOp] = {identity(op.namespace, op.key): op for op in puts}
    may_write(member, last)
    ids = {i: new_id("lg") for i, op in last.items() if op.value is not None}
    annotated = {i: annotations(op) for i, op in last.items()}
    for i, a in annotated.items():
        if a is not None and any(_key_of(ref) == item_key(i) for ref in a.refs):
            raise InvalidInput(  # it would rest on the version it replaces, gone by then
                f"{where(last[i])}: readmit annotations: depends_on names the path this "
                "write replaces; a value cannot rest on the version it overwrites"
            )
    local = {item_key(i): item for i, item in ids.items()}
    premises = resolve(
        ((where(last[i]), a) for i, a in annotated.items()),
        member,
        matches,
        local=lambda ref: local.get(_key_of(ref)),
    )
    deleted = {i for i, op in last.items() if op.value is None}
    current = current_items(member, deleted) if deleted else {}
    at, author = member.time(), member.agent  # the store's: it dates the TTL end (a review)
    writes = []
    for ident, op in last.items():
        event: Event | None = None
        if op.value is not None:
            text = _text(op, op.value)
            item = draft(annotated[ident], ids[ident], text, item_key(ident), premises)
            item = ending(item, expiry.end(op, at), where(op))
            event = Assert(id=new_id("put"), at=at, author=author, item=item)
        elif ident in current:
            why = f"deleted {'/'.join((*op.namespace, op.key))!r} from the LangGraph store"
            event = Revoke(id=new_id(DELETED), at=at, author=author, target=current[ident], why=why)
        writes.append(Write(ident, op, ids.get(ident), event))
    return writes


def _text(op: PutOp, value: Mapping[str, Any]) -> str:
    """A put's item text (`render` of its ``value``).

    Raises:
        InvalidInput: if its value is no JSON with sorted keys (keys of mixed types, a
            value that holds itself): it raised the ``TypeError`` of ``json`` (a probe).
    """
    try:
        return render(op.namespace, op.key, value)
    except (TypeError, ValueError) as unrendered:
        raise InvalidInput(
            f"{where(op)}: its value is not JSON with string keys ({unrendered})"
        ) from None


def may_write(member: Member, last: Mapping[Identity, PutOp]) -> None:
    """Refuse the batch if a path it writes holds a version the agent may not read.

    The inner store keeps one value a path: a put or a delete there would replace or
    remove another principal's value, which readmit keeps (it replaces only what the
    writer may read), and the two stores would disagree. Asked before anything is
    written, as Mem0's wrapper asks of a memory's id.

    Raises:
        Forbidden: naming the first such path (neither store is changed).
    """
    keys = {item_key(ident): op for ident, op in last.items()}
    held = member.store.unreadable_keys(member.workspace, member.agent, list(keys))
    if held:
        first = next(op for key, op in keys.items() if key in held)  # in the batch's order
        more = f" (and {len(held) - 1} more)" if len(held) > 1 else ""
        raise Forbidden(
            f"{where(first)}{more}: the path holds a version {member.agent!r} may not read "
            "in readmit (written for other readers); neither store was changed"
        )


def record(member: Member, puts: list[PutOp], expiry: Expiry) -> list[Write]:
    """Validate ``puts``, then record their events atomically (step 1 and 2).

    Raises:
        InvalidInput: if a put's annotations are bad, or readmit refuses an event.
        Forbidden: if a path holds a version the agent may not read (`may_write`).
    """
    writes = plan(member, puts, expiry)
    recorded(member, writes)
    return writes


def recorded(member: Member, writes: list[Write]) -> list[Recorded]:
    """Record the events of planned ``writes`` atomically (step 2).

    Raises:
        InvalidInput: if readmit refuses an event.
    """
    events = [w.event for w in writes if w.event is not None]
    return member.record(events) if events else []


Written = tuple[str, Identity, str]
"""A value the agent wrote: its event, path and item text."""


def written(writes: list[Write]) -> list[Written]:
    """Each value the batch wrote: the agent's own.

    The lens shows the path while it holds what the text says (`Lens.fits`).
    """
    return [(w.event.id, w.ident, w.event.item.text) for w in writes if isinstance(w.event, Assert)]


def reads(writes: list[Write]) -> list[GetOp]:
    """The inner-store reads that say where each write stands."""
    return [GetOp(w.op.namespace, w.op.key, refresh_ttl=False) for w in writes]


def current_items(member: Member, idents: set[Identity]) -> Mapping[Identity, str]:
    """The id of the active version of each of ``idents`` the agent may read."""
    found: dict[Identity, str] = {}
    for item in member.visible():
        ident = parse_key(item.key)
        if ident in idents:
            found[ident] = item.id
    return found


def deleted(event: Revoke | Close | Supersede, agent: str) -> bool:
    """Whether ``event`` is ``agent``'s own delete (not the undo of a failed write)."""
    return isinstance(event, Revoke) and event.author == agent and not event.id.startswith("undo-")
