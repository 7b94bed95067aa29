"""Making readmit match what a LangGraph inner store holds after it failed a write.

Step 3 of `readmit.integrations.langgraph.writes`: the paths are read back, and readmit
records what makes it match: a put that did not land has its item revoked, and a value
still at its path (the one it was to replace, or the one a failed delete left) is asserted
again from that value, unless a later write of the path stands or a later delete of it
was recorded. If the paths cannot be read back, every item the batch asserted is revoked.
If readmit cannot record that either, it is owed (`readmit.integrations.corrections`).
"""

import logging
from collections.abc import Sequence
from datetime import datetime
from functools import cache, partial
from typing import TypeGuard

from langgraph.store.base import Item, PutOp, Result

from readmit.errors import InvalidInput
from readmit.events import Assert, Close, Event, Recorded, Revoke, Supersede
from readmit.integrations.annotations import ANNOTATIONS, draft, resolve
from readmit.integrations.corrections import owe
from readmit.integrations.langgraph.expiry import ending
from readmit.integrations.langgraph.keys import item_key, render
from readmit.integrations.langgraph.writes import (
    DELETED,
    RESTORED,
    Write,
    annotations,
    matches,
    where,
)
from readmit.integrations.team import Member, new_id

log = logging.getLogger("readmit.integrations")


def reconcile(
    member: Member, writes: list[Write], found: list[Result] | None, error: BaseException
) -> list[Write]:
    """Make readmit match what the inner store holds after its write raised ``error``.

    ``found`` is what `reads` returned, or None when the inner store could not be read.

    Returns:
        Those of ``writes`` that landed all the same (readmit holds them as they are).

    Raises:
        Exception: what recording the correction raised, with a note naming the paths;
            when ``error`` is no ``Exception`` (a cancellation, an interrupt), the note is
            added to ``error`` instead, for the caller to raise. The correction is owed
            then: recorded before anything else on the store (`corrections.owe`).
    """
    why = f"the LangGraph store failed the write ({type(error).__name__}: {error})"[:500]
    try:  # reading readmit may fail too: the note then names the paths all the same
        return _correct(member, writes, found, why)
    except BaseException as exc:  # an interrupt too: owed all the same
        paths = ", ".join(where(w.op) for w in writes)
        redo = partial(_correct, member, writes, found, why, late=True)
        owe(member.store, member.workspace, f"LangGraph writes that failed: {paths}", redo)
        if not isinstance(exc, Exception):
            raise
        said = (
            f"readmit could not record that the LangGraph store failed: {paths} (recorded "
            "before the next write, departure or return on this store)"
        )
        if not isinstance(error, Exception):  # a cancellation or an interrupt goes on as one
            error.add_note(f"{said} ({type(exc).__name__}: {exc})")
            # A timeout raised from it carries the note only on its cause: said here too,
            # since readmit now holds writes the inner store does not (a review).
            log.warning("%s (%s: %s)", said, type(exc).__name__, exc)
            return []
        exc.add_note(said)
        raise exc from error


def _correct(
    member: Member, writes: list[Write], found: list[Result] | None, why: str, late: bool = False
) -> list[Write]:
    """Record `_corrections`, worked out from readmit's state now; the writes that landed."""
    events, landed, own = _corrections(member, writes, found, why, late)
    if events and own:  # a put for other readers only undone too: its writer's own to undo
        member.record(events, own=True)
    elif events:
        member.record(events)
    return landed


def _corrections(
    member: Member, writes: list[Write], found: list[Result] | None, why: str, late: bool
) -> tuple[list[Event], list[Write], bool]:
    """What `reconcile` records, the writes that landed, and whether an undo needs ``own``.

    It records the undo of each write that did not land, and a restore. ``late``: owed,
    recorded after other events, so ``found`` may no longer be what the inner store holds.
    """
    at, author = member.clock(), member.agent
    events: list[Event] = []
    active: set[str] | None = None
    went: list[Write] = []
    own = False
    log = cache(partial(member.store.events, member.workspace))  # read once, if at all
    for n, w in enumerate(writes):
        got = found[n] if found is not None else None
        if found is not None and landed(w, got) and not outlasts(log(), w, got):
            went.append(w)
            continue
        if w.item is not None:
            active = {i.id for i in member.visible()} if active is None else active
            # Not if a later write of the path replaced it already; its own to revoke though
            # its readers leave the writer out (a put for others: their returns admitted it).
            readable = w.item in active
            if readable or _unread(member, w.item):
                own = own or not readable
                events.append(
                    Revoke(id=new_id("undo"), at=at, author=author, target=w.item, why=why)
                )
        if isinstance(got, Item) and w.event is not None:
            try:
                held = earlier(log(), w, got)
            except (TypeError, ValueError):  # written around readmit, no text says it: the
                continue  # undo stands, and nothing is restored (the batch's others are)
            # Nothing is restored where a later write of the path stands (it says it already,
            # maybe another agent's, which a restore would state again in this agent's name:
            # a fuzz), where a later LangGraph delete of it was recorded (maybe landing still:
            # a review), or, owed, where any later write was (``found`` predates it).
            active = {i.id for i in member.visible()} if active is None else active
            later = _later(log(), w)
            if held is None or any(s.item.id in active for s in later if _states(s, w)):
                continue
            if any(isinstance(s, Revoke) and s.id.startswith(f"{DELETED}-") for s in later):
                continue
            if late and any(_states(s, w) for s in later):
                continue
            events.append(restore(member, w, got, held.item.validity.valid_to))
    return events, went, own


def _unread(member: Member, item: str) -> bool:
    """Whether ``item`` is active though ``member`` may not read it."""
    return bool(member.store.unreadable(member.workspace, member.agent, [item]))


def landed(w: Write, got: Result) -> bool:
    """Whether the inner store holds what ``w`` wrote (its value, or nothing for a delete)."""
    if w.op.value is None:
        return got is None
    if not isinstance(got, Item):
        return False
    if got.value == w.op.value:
        return True
    if got.value.get(ANNOTATIONS) != w.op.value.get(ANNOTATIONS):  # readers, premises, ...
        return False  # rendered text leaves them out: a put widening its readers failed
    try:  # a store that keeps JSON hands some values back otherwise (NaN as None)
        return render(got.namespace, got.key, got.value) == render(
            got.namespace, got.key, w.op.value
        )
    except (TypeError, ValueError):
        return False


def outlasts(log: Sequence[Recorded], w: Write, got: Result) -> bool:
    """Whether ``w``, a put of the value ``got`` holds, ends after the version it replaced.

    A LangGraph item does not say its TTL: after a failed put of the same value the store
    may hold the one before, swept at that version's end. readmit then keeps that end
    (`reconcile` restores it), never a later one the store may not hold.
    """
    if not isinstance(w.event, Assert) or not isinstance(got, Item):
        return False
    held = earlier(log, w, got)
    if held is None or held.item.text != w.event.item.text:
        return False  # the value changed: the put landed
    before, after = held.item.validity.valid_to, w.event.item.validity.valid_to
    return before is not None and (after is None or after > before)


def earlier(log: Sequence[Recorded], w: Write, got: Item) -> Assert | None:
    """The version readmit recorded of ``w``'s path before ``w``, which ``got`` still holds.

    The latest that states ``got``'s value, else the latest; None where readmit recorded
    none (nothing is restored). ``log``: the workspace's, read on the failure path only.
    """
    key, text = item_key(w.ident), render(got.namespace, got.key, got.value)
    found: list[Assert] = [
        r.event
        for r in log
        if isinstance(r.event, Assert) and r.event.item.key == key and r.event.item.id != w.item
    ]
    same = [event for event in found if event.item.text == text]
    return (same or found)[-1] if found else None


def _later(log: Sequence[Recorded], w: Write) -> list[Assert | Supersede | Revoke | Close]:
    """The events after ``w``'s that state a version of its path, or withdraw one."""
    ours = w.event.id if w.event is not None else None
    at = next((n for n, r in enumerate(log) if r.event.id == ours), None)
    if at is None:
        return []
    versions = {r.event.item.id for r in log if _states(r.event, w)}
    return [
        r.event
        for r in log[at + 1 :]
        if _states(r.event, w)
        or (isinstance(r.event, Revoke | Close | Supersede) and r.event.target in versions)
    ]


def _states(event: Event, w: Write) -> TypeGuard[Assert | Supersede]:
    """Whether ``event`` states a version of ``w``'s path."""
    return isinstance(event, Assert | Supersede) and event.item.key == item_key(w.ident)


def restore(member: Member, w: Write, got: Item, end: datetime | None) -> Assert:
    """Assert again the value the inner store still holds at ``w``'s path.

    With its own annotations if they still resolve, else without; valid no longer than the
    version it was put as (``end``: its TTL, `readmit.integrations.langgraph.expiry`).
    """
    op = PutOp(got.namespace, got.key, got.value)
    item = new_id("lg")
    text = render(got.namespace, got.key, got.value)
    try:
        annotated = annotations(op)
        premises = resolve([(where(op), annotated)], member, matches)
        restored = ending(draft(annotated, item, text, item_key(w.ident), premises), end, where(op))
    except InvalidInput:
        restored = ending(draft(None, item, text, item_key(w.ident), {}), end, where(op))
    return Assert(id=new_id(RESTORED), at=member.clock(), author=member.agent, item=restored)
