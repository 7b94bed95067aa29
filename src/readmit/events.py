"""Events: recorded revisions of the shared state, as a tagged union on ``op``.

Events are append-only. The store assigns each one an epoch; an item asserted by
an event gets a `Receipt` binding it to that event, its author, epoch and text
digest. Private experiences and departures are not shared-state revisions and
are recorded through their own store methods.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from readmit.canonical import digest_text, json_string
from readmit.errors import InvalidInput
from readmit.model import ANY, Item, Kind, Obligation, Receipt, Scope, Validity, blank, typed


def text_digest(item_id: str, text: str) -> str:
    """The digest a receipt binds: the item's id and text as canonical JSON.

    Joined from canonical pieces (the bytes of ``digest({"id": ..., "text": ...})``);
    the provenance gate remembers the items it binds (`readmit.admission.gates`).
    """
    return digest_text(f'{{"id":{json_string(item_id)},"text":{json_string(text)}}}')


WITHDRAWING_OPS = frozenset({"supersede", "revoke", "close"})
"""The ops of events that withdraw a target item (`Supersede`, `Revoke`, `Close`): code
that tells events apart by tag tests this set (an event's ``op`` is fixed by its class)."""


def _hold_sets(draft: object, names: tuple[str, ...], what: str) -> None:
    """Hold each of ``draft``'s fields ``names`` as a frozenset of strings.

    A library caller's list, tuple or set is taken as its set; one string is refused (it
    would be read as a set of its characters), as is ``None`` (but for ``principals``,
    where it means the author's) and a collection that holds anything but strings.
    """
    for name in names:
        values = getattr(draft, name)
        if values is None and name == "principals":  # the author's principal
            continue
        if type(values) is not frozenset:
            if isinstance(values, str) or not isinstance(values, list | tuple | set):
                shown = type(values).__name__
                raise InvalidInput(f"{what}: {name} must be a set of strings, not {shown}")
            values = frozenset(values)
            object.__setattr__(draft, name, values)
        if not all(type(v) is str for v in values):
            if not all(isinstance(v, str) for v in values):
                raise InvalidInput(f"{what}: {name} must hold only strings")
            object.__setattr__(draft, name, frozenset(map(str, values)))  # a StrEnum's, say


_DRAFT_SETS = ("supports", "depends_on", "cites", "principals", "roles", "purposes")
_EVERYONE = frozenset({ANY})


def _everyone(draft: "ItemDraft") -> None:
    """Make readers, roles or purposes that include ``*`` everyone: ``{"*"}``.

    As the store writes and reads them back: what one process appended then equals what
    another parses from the log.
    """
    for name in ("principals", "roles", "purposes"):
        values = getattr(draft, name)
        if values is not None and ANY in values and len(values) > 1:
            object.__setattr__(draft, name, _EVERYONE)


def _require_text(text: str, what: str, name: str) -> None:
    """A statement must say something: a blank one could match nothing, or everything."""
    if blank(text):  # and, where it is written, no invisible text (`readmit.wire.domain`)
        raise InvalidInput(f"{what} {name!r}: the text is blank")


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemDraft:
    """An item as an author states it, before the store gives it an epoch and a receipt."""

    id: str
    text: str
    kind: Kind = Kind.FACT
    key: str | None = None
    supports: frozenset[str] = frozenset()
    depends_on: frozenset[str] = frozenset()
    cites: frozenset[str] = frozenset()
    principals: frozenset[str] | None = None
    """Readers' principals; ``None`` means the author's principal."""
    roles: frozenset[str] = frozenset({ANY})
    task: str = ANY
    purposes: frozenset[str] = frozenset({ANY})
    validity: Validity = field(default_factory=Validity)
    unconfirmed: bool = False
    """Hearsay with no receipt: it fails the provenance gate."""

    def __post_init__(self) -> None:
        for name in ("id", "text", "task"):  # 5 would fail later, as an AttributeError
            typed(getattr(self, name), str, f"item {name}")
        typed(self.key, str, "item key", optional=True)
        _hold_sets(self, _DRAFT_SETS, f"item {self.id!r}")
        _everyone(self)
        _require_text(self.text, "item", self.id)
        if type(self.kind) is not Kind:  # a library caller's string: stored, it broke reads
            if self.kind not in Kind.__members__.values():
                known = ", ".join(k for k in Kind if k is not Kind.OBLIGATION)
                raise InvalidInput(f"item {self.id!r}: kind {self.kind!r} is not one of {known}")
            object.__setattr__(self, "kind", Kind(self.kind))
        if self.kind is Kind.OBLIGATION:
            raise InvalidInput(f"item {self.id!r}: open obligations with the obligation op")
        # What `Item` and `Scope` would refuse, refused here, so the store can write a
        # draft's row without building the item (readmit.store.encoding). A draft that
        # depends on itself is left to the store, which refuses it as naming an unknown
        # premise or a taken id.
        if blank(self.id):
            raise InvalidInput("item id must not be empty")
        if self.roles and self.purposes and (self.principals is None or self.principals):
            return
        for name, values in (
            ("readers.principals", self.principals),
            ("readers.roles", self.roles),
            ("purposes", self.purposes),
        ):
            if values is not None and not values:
                raise InvalidInput(f"{name} must not be empty")

    def readers(self, principal: str | None) -> tuple[frozenset[str], frozenset[str]]:
        """Who may read the item: its principals and roles.

        Without principals of its own, the author's (``principal``; none if unknown).
        """
        if self.principals is not None:
            return self.principals, self.roles
        return frozenset() if principal is None else frozenset({principal}), self.roles

    def readable_by(self, stated_by: str, principal: str, role: str) -> bool:
        """Whether ``principal`` in ``role`` may read the item once stated by ``stated_by``'s agent.

        The rule of the item's `Scope`; ``stated_by`` is the author's principal.
        """
        principals, roles = self.readers(stated_by)
        return Scope(principals=principals, roles=roles).readable_by(principal, role)

    def materialize(self, *, event_id: str, author: str, principal: str, epoch: int) -> Item:
        """Bind the draft to the event that recorded it."""
        receipt = None
        if not self.unconfirmed:
            receipt = Receipt(
                event_id=event_id,
                author=author,
                epoch=epoch,
                digest=text_digest(self.id, self.text),
            )
        principals, roles = self.readers(principal)
        scope = Scope(
            principals=principals,
            roles=roles,
            task=self.task,
            purposes=self.purposes,
        )
        return Item(
            id=self.id,
            text=self.text,
            kind=self.kind,
            epoch=epoch,
            author=author,
            scope=scope,
            validity=self.validity,
            key=self.key,
            receipt=receipt,
            depends_on=self.depends_on,
            supports=self.supports,
            cites=self.cites,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ObligationDraft:
    """An obligation as opened by an author: R_o, K_o and its progress frontier."""

    id: str
    text: str
    role: str
    requires: frozenset[str]
    critical: frozenset[str]
    frontier_id: str
    frontier_text: str

    def __post_init__(self) -> None:
        _hold_sets(self, ("requires", "critical"), f"obligation {self.id!r}")
        _require_text(self.text, "obligation", self.id)
        _require_text(self.frontier_text, "frontier", self.frontier_id)
        if not self.critical <= self.requires:
            raise InvalidInput(f"obligation {self.id!r}: critical must be a subset of requires")

    def materialize(self, *, event_id: str, author: str, principal: str, epoch: int) -> Obligation:
        """Bind the obligation and its frontier to the event that opened them."""

        def as_item(item_id: str, text: str, kind: Kind) -> Item:
            receipt = Receipt(
                event_id=event_id, author=author, epoch=epoch, digest=text_digest(item_id, text)
            )
            return Item(
                id=item_id,
                text=text,
                kind=kind,
                epoch=epoch,
                author=author,
                scope=Scope(principals=frozenset({principal})),
                receipt=receipt,
                for_role=self.role,
            )

        return Obligation(
            id=self.id,
            role=self.role,
            requires=self.requires,
            critical=self.critical,
            item=as_item(self.id, self.text, Kind.OBLIGATION),
            frontier=as_item(self.frontier_id, self.frontier_text, Kind.FRONTIER),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """A raw source (message, document, tool output) that items can cite."""

    op: Literal["evidence"] = field(default="evidence", init=False)
    id: str
    at: datetime
    author: str
    source_id: str
    text: str

    def __post_init__(self) -> None:
        _require_text(self.text, "evidence", self.id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Assert:
    """A new item; an active item with the same key is replaced by it."""

    op: Literal["assert"] = field(default="assert", init=False)
    id: str
    at: datetime
    author: str
    item: ItemDraft


@dataclass(frozen=True, slots=True, kw_only=True)
class Supersede:
    """A new item that explicitly replaces ``target``."""

    op: Literal["supersede"] = field(default="supersede", init=False)
    id: str
    at: datetime
    author: str
    target: str
    item: ItemDraft


def restates(event: Assert | Supersede) -> bool:
    """Whether ``event``'s item, stating a withdrawn text again, brings that premise back.

    Hearsay (``unconfirmed``) states nothing again, as it replaces nothing; nor does a
    statement for one task or some purposes only, one that will end or has yet to begin
    as it is made, or one that rests on other items (``depends_on``), which falls when
    they do: the premise a verdict rests on held for every use, and a verdict that
    lapsed would not come back when the statement ends.
    """
    item = event.item
    return (
        not item.unconfirmed
        and not item.depends_on
        and item.task == ANY
        and ANY in item.purposes
        and item.validity.valid_to is None
        and item.validity.started(event.at)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Revoke:
    """``target`` is withdrawn."""

    op: Literal["revoke"] = field(default="revoke", init=False)
    id: str
    at: datetime
    author: str
    target: str
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Close:
    """``target``'s validity ends at ``at``."""

    op: Literal["close"] = field(default="close", init=False)
    id: str
    at: datetime
    author: str
    target: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenObligation:
    """Opens an obligation (and its frontier) for a role."""

    op: Literal["obligation"] = field(default="obligation", init=False)
    id: str
    at: datetime
    author: str
    obligation: ObligationDraft


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolve:
    """Closes an obligation."""

    op: Literal["resolve"] = field(default="resolve", init=False)
    id: str
    at: datetime
    author: str
    target: str


Event = Evidence | Assert | Supersede | Revoke | Close | OpenObligation | Resolve
"""A recorded revision of the shared state."""


def events_only(events: Sequence[object]) -> None:
    """Refuse a batch holding anything but events: a dict would fail later, an AttributeError.

    Raises:
        InvalidInput: saying how a dict becomes an event.
    """
    if not all(isinstance(event, Event) for event in events):
        raise InvalidInput(
            "append takes events (readmit.Assert, …): a dict becomes one with "
            "readmit.wire.parse_event(d, 0)"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordExperience:
    """A private memory of ``agent``, bound to the work-state item ``source``."""

    op: Literal["experience"] = field(default="experience", init=False)
    id: str
    at: datetime
    agent: str
    experience_id: str
    text: str
    source: str

    def __post_init__(self) -> None:
        _require_text(self.text, "experience", self.experience_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Depart:
    """Checkpoint the agent's view; its private bank is quarantined."""

    op: Literal["depart"] = field(default="depart", init=False)
    id: str
    at: datetime
    agent: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReturnRequest:
    """The agent returns to ``task`` for ``purpose``: run the pipeline once."""

    op: Literal["return"] = field(default="return", init=False)
    id: str
    at: datetime
    agent: str
    task: str
    purpose: str
    policy: tuple[tuple[str, object], ...] = ()
    """Policy overrides for this return, as (name, value) pairs."""


Step = Event | RecordExperience | Depart | ReturnRequest
"""One line of a workspace history: a shared-state event or an agent's action."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    """An event with the epoch the store assigned it."""

    epoch: int
    event: Event
