"""Domain values: work-state items, receipts, scopes, validity, obligations, experiences.

Values are immutable and valid by construction: ``__post_init__`` checks every
invariant and raises `InvalidInput`. Values do no I/O and know nothing of storage.
"""

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from readmit.errors import InvalidInput

ANY = "*"
"""Wildcard for readers, task and purposes: anyone / any task / any purpose."""


class Kind(StrEnum):
    """What an item states."""

    FACT = "fact"
    CONSTRAINT = "constraint"
    OBLIGATION = "obligation"
    FRONTIER = "frontier"
    INTERFACE = "interface"


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidInput(message)


def blank(text: str) -> bool:
    """Whether ``text`` holds nothing but whitespace: ``not text.strip()``, without the copy."""
    return not text or text.isspace()


def _aware(value: datetime | None, name: str) -> None:
    typed(value, datetime, name, "a datetime", optional=True)
    _require(value is None or value.tzinfo is not None, f"{name} must be timezone-aware")


def typed(
    value: object, kind: type, name: str, said: str = "a string", optional: bool = False
) -> None:
    """Refuse ``value`` unless it is a ``kind`` (or, if ``optional``, ``None``).

    A library caller's 5 or "2026-…" is told so, not met later by an ``AttributeError``.

    Raises:
        InvalidInput: naming ``name`` and what it must be.
    """
    held = isinstance(value, kind) or (optional and value is None)
    _require(held, f"{name} must be {said}, not {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Validity:
    """Validity interval ``[valid_from, valid_to)``; ``None`` leaves a side open."""

    valid_from: datetime | None = None
    valid_to: datetime | None = None

    def __post_init__(self) -> None:
        _aware(self.valid_from, "valid_from")
        _aware(self.valid_to, "valid_to")
        if self.valid_from is not None and self.valid_to is not None:
            _require(self.valid_from < self.valid_to, "valid_from must be before valid_to")

    def started(self, at: datetime) -> bool:
        """Whether the interval has begun at ``at``."""
        return self.valid_from is None or self.valid_from <= at

    def ended(self, at: datetime) -> bool:
        """Whether the interval has ended at ``at``."""
        return self.valid_to is not None and self.valid_to <= at

    def covers(self, at: datetime) -> bool:
        """Whether ``at`` lies inside the interval."""
        return self.started(at) and not self.ended(at)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """Who may read an item and which task and purposes it serves."""

    principals: frozenset[str] = frozenset({ANY})
    roles: frozenset[str] = frozenset({ANY})
    task: str = ANY
    purposes: frozenset[str] = frozenset({ANY})

    def __post_init__(self) -> None:
        _require(bool(self.principals), "readers.principals must not be empty")
        _require(bool(self.roles), "readers.roles must not be empty")
        _require(bool(self.purposes), "purposes must not be empty")

    def readable_by(self, principal: str, role: str) -> bool:
        """A: whether ``principal`` acting in ``role`` may read the item."""
        return _allows(self.principals, principal) and _allows(self.roles, role)

    def read_within(self, principals: frozenset[str], roles: frozenset[str]) -> bool:
        """Whether every reader of this scope is among ``principals`` and ``roles``."""
        return _wider(principals, self.principals) and _wider(roles, self.roles)

    def applies_to(self, task: str, purpose: str) -> bool:
        """U (task and purpose part): whether the item serves ``task`` and ``purpose``."""
        return self.task in (ANY, task) and _allows(self.purposes, purpose)


def _allows(allowed: frozenset[str], value: str) -> bool:
    return ANY in allowed or value in allowed


def _wider(outer: frozenset[str], inner: frozenset[str]) -> bool:
    return ANY in outer or (ANY not in inner and inner <= outer)


@dataclass(frozen=True, slots=True, kw_only=True)
class Receipt:
    """Source evidence binding an item to the event, author and epoch that recorded it."""

    event_id: str
    author: str
    epoch: int
    digest: str
    """Tagged SHA-256 digest of the item's canonical content at recording time."""

    def __post_init__(self) -> None:
        if self.epoch >= 1 and self.digest.startswith("sha256:"):
            return  # the common case, decided without building a message
        _require(self.epoch >= 1, "receipt epoch must be >= 1")
        _require(self.digest.startswith("sha256:"), "receipt digest must be a sha256: digest")


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    """One statement of shared work state."""

    id: str
    text: str
    kind: Kind = Kind.FACT
    epoch: int
    """Revision of the shared state that produced this item."""
    author: str
    scope: Scope = field(default_factory=Scope)
    validity: Validity = field(default_factory=Validity)
    key: str | None = None
    """Identity of the thing described; a later item with the same key replaces this one."""
    receipt: Receipt | None = None
    """Provenance; ``None`` for hearsay (``unconfirmed``), which fails gate P."""
    depends_on: frozenset[str] = frozenset()
    """Ids of the premise items this one relies on."""
    supports: frozenset[str] = frozenset()
    """D(m): the dependency ids this item provides evidence for."""
    cites: frozenset[str] = frozenset()
    """Ids of raw evidence sources the item was drawn from."""
    for_role: str | None = None
    """Obligations and frontiers apply only to the role that must continue them."""

    def __post_init__(self) -> None:
        if (
            not blank(self.id)
            and not blank(self.text)
            and self.epoch >= 1
            and self.id not in self.depends_on
        ):
            return  # the common case: the store decodes every item of a return's context
        _require(not blank(self.id), "item id must not be empty")
        _require(not blank(self.text), f"item {self.id!r}: text must not be empty")
        _require(self.epoch >= 1, f"item {self.id!r}: epoch must be >= 1")
        _require(self.id not in self.depends_on, f"item {self.id!r} cannot depend on itself")


@dataclass(frozen=True, slots=True, kw_only=True)
class Obligation:
    """Something the returning role must continue, with its progress frontier."""

    id: str
    role: str
    item: Item
    """The obligation as a view item (kind ``obligation``)."""
    frontier: Item
    """The progress frontier: what remains unresolved (kind ``frontier``)."""
    requires: frozenset[str]
    """R_o: required dependencies."""
    critical: frozenset[str] = frozenset()
    """K_o ⊆ R_o: critical dependencies."""

    def __post_init__(self) -> None:
        _require(self.critical <= self.requires, f"obligation {self.id!r}: critical ⊄ requires")
        _require(self.item.kind is Kind.OBLIGATION, "obligation item must have kind obligation")
        _require(self.frontier.kind is Kind.FRONTIER, "frontier item must have kind frontier")


@dataclass(frozen=True, slots=True, kw_only=True)
class Experience:
    """A private memory in one agent's own bank, bound to the item that sourced it."""

    id: str
    agent: str
    text: str
    source_item_id: str
    epoch: int
    """The shared-state epoch when it was recorded."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Agent:
    """A member of a workspace: who it acts for and its role."""

    id: str
    principal: str
    role: str

    def __post_init__(self) -> None:
        for name in ("id", "principal", "role"):
            typed(getattr(self, name), str, f"agent {name}")
            _require(bool(getattr(self, name).strip()), f"agent {name} must not be empty")


@dataclass(frozen=True, slots=True, kw_only=True)
class Returner:
    """The returning agent and the workload it returns to."""

    agent: str
    principal: str
    role: str
    task: str
    purpose: str
    at: datetime

    def __post_init__(self) -> None:
        _aware(self.at, "return time")


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """D_a: the state visible to an agent at departure, with the epoch and a digest of receipts."""

    agent: str
    epoch: int
    at: datetime
    item_ids: tuple[str, ...]
    digest: str
    left_out: int = field(default=0, compare=False)
    """How many items its agent could read that it left out as no longer valid, when made
    (each is kept too, `readmit.store.left_out`); 0 when read back."""
