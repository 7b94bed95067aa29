"""Namespaced ids: what an agent names over the service is stored under its own name.

An id an agent gives for something new (an event, item, evidence, obligation,
frontier or memory) is stored as ``<agent>/<id>``, so it can only ever collide
with the agent's own earlier ids, which it knows: whatever other principals
hold, a new id is answered the same. A new id may also be given already in that
form; any other id with a ``/`` is refused.

A reference (a target, ``depends_on``, ``cites``, a memory's ``source``) is
read as:

- ``h0`` (no ``/``): your own, ``<agent>/h0``;
- ``A2/h0`` (a ``/`` inside): used as given, the full id seen in a view or
  ``/v1/state`` (how you name a teammate's item);
- ``/h0`` (a leading ``/``): the plain id ``h0``, one recorded outside the
  service (a scenario the operator replayed).

The store answers a reference to what the agent may not read exactly like one
to nothing, so references probe nothing either. Dependency labels
(``supports``, ``requires``, ``critical``) and keys are shared vocabulary, not
ids of things, and pass unchanged. Server-assigned event ids (``ev-<random>``)
are not namespaced: they are random and never given by an agent.
"""

from dataclasses import replace

from readmit.errors import InvalidEvent, InvalidInput
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
from readmit.wire import check_name


def own(agent: str, given: str) -> str:
    """The stored form of ``given``, a new id ``agent`` names.

    Raises:
        InvalidInput: if ``given`` is in another namespace (or a nested one), is only the
            prefix, or is too long once prefixed.
    """
    prefix = f"{agent}/"
    local = given.removeprefix(prefix)
    if not local:
        raise InvalidInput(f"new id {given!r}: give an id after {prefix}")
    if "/" in local:
        raise InvalidInput(
            f"new id {given!r}: a '/' is allowed only after your own name "
            f"({prefix}ID); ids you give are stored as {prefix}ID"
        )
    return check_name(prefix + local, f"new id {given!r} stored as {prefix}ID")


def ref(agent: str, given: str) -> str:
    """The stored id a reference ``given`` by ``agent`` names (see the module docstring)."""
    if given.startswith("/"):
        return given[1:]
    return given if "/" in given else f"{agent}/{given}"


def reference(stored: str) -> str:
    """The reference `ref` reads back as the stored id ``stored``, whichever agent gives it.

    An owned id is itself (``A1/h0``); a plain one takes a leading ``/`` (``h0`` is ``/h0``).
    """
    return stored if "/" in stored and not stored.startswith("/") else f"/{stored}"


def _refs(agent: str, given: frozenset[str]) -> frozenset[str]:
    return frozenset(ref(agent, g) for g in given)


def _draft(agent: str, draft: ItemDraft) -> ItemDraft:
    return replace(
        draft,
        id=_own(agent, draft.id, "item.id"),
        depends_on=_refs(agent, draft.depends_on),
        cites=_refs(agent, draft.cites),
    )


def _names(event: Event, agent: str) -> Event:
    match event:
        case Evidence():
            return replace(event, source_id=_own(agent, event.source_id, "source.id"))
        case Assert():
            return replace(event, item=_draft(agent, event.item))
        case Supersede():
            return replace(event, target=ref(agent, event.target), item=_draft(agent, event.item))
        case Revoke() | Close() | Resolve():
            return replace(event, target=ref(agent, event.target))
        case OpenObligation():
            o = event.obligation
            stored = _own(agent, o.id, "obligation.id")
            frontier = _own(agent, o.frontier_id, "obligation.frontier.id")
            named = replace(o, id=stored, frontier_id=frontier)
            return replace(event, obligation=named)


def namespaced(event: Event, agent: str, *, id_given: bool) -> Event:
    """``event`` with every id ``agent`` gave in its stored form.

    ``id_given``: the agent named the event (else the server did, and its id stays).

    Raises:
        InvalidEvent: naming the event, if a new id is refused (see `own`).
    """
    try:
        if id_given:
            event = replace(event, id=_own(agent, event.id, "id"))
        return _names(event, agent)
    except InvalidInput as exc:
        fields = (exc.field,) if isinstance(exc, _NewId) else ()
        raise InvalidEvent(event.id, str(exc), fields=fields) from None


class _NewId(InvalidInput):
    """A new id `own` refused, with the field that gave it."""

    def __init__(self, refused: InvalidInput, field: str) -> None:
        super().__init__(str(refused))
        self.field = field


def _own(agent: str, given: str, field: str) -> str:
    """`own`, its refusal naming ``field`` (`_NewId`)."""
    try:
        return own(agent, given)
    except InvalidInput as exc:
        raise _NewId(exc, field) from None
