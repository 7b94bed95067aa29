"""Readmit annotations an application passes through an integration's own channel.

An integration records an item's text and key from what the library stores. Everything
else readmit judges an item by is the application's to state, as a JSON object under
the integration's channel: LangGraph, the stored value's ``"_readmit"`` key; Mem0,
``metadata["_readmit"]``; the Agents SDK, `Learned.annotations`. Fields (all optional,
the scenario format's item fields, spec section 7, less ``id``, ``text`` and ``key``):

- ``kind``: ``"fact"`` (default), ``"constraint"``, ``"frontier"`` or ``"interface"``;
- ``supports``: the dependency ids the item is evidence for (what obligations require);
- ``depends_on``: its premises, each a readmit item id, ``{"key": K}`` (the newest active
  item with readmit key ``K`` the agent may read), or the integration's own reference:
  ``{"path": [*namespace, key]}`` (LangGraph) or ``{"memory": id}`` (Mem0), each the
  current version the agent may read when the write is made;
- ``cites``: evidence ids;
- ``readers`` (``{"principals": [...] | "*", "roles": [...] | "*"}`` or ``"*"``), ``task``
  and ``purposes``: its scope;
- ``valid_from``, ``valid_to``: RFC 3339 times;
- ``unconfirmed``: hearsay with no receipt (it fails the provenance gate).

They are validated before anything is written: a bad one raises `InvalidInput` naming
the write and the field, and neither store is touched. A reference that names nothing
the agent may read is refused the same way.
"""

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from readmit.errors import InvalidInput
from readmit.events import ItemDraft
from readmit.integrations.team import Member
from readmit.model import ANY, Item, Kind, Validity
from readmit.wire import Instant, Name, Wild
from readmit.wire.edge import unknown_field
from readmit.wire.fields import plain

ANNOTATIONS = "_readmit"
"""The key the annotations travel under (a LangGraph value's, a Mem0 memory's metadata)."""

RefKind = Literal["key", "path", "memory"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _ReadersIn(_Strict):
    principals: list[Name] | Wild | None = None
    roles: list[Name] | Wild = "*"


class _RefIn(_Strict):
    key: Name | None = None
    path: list[str] | None = Field(default=None, min_length=1)
    memory: Name | None = None

    @model_validator(mode="after")
    def _one(self) -> "_RefIn":
        if sum(v is not None for v in (self.key, self.path, self.memory)) != 1:
            raise ValueError("a reference has exactly one of key, path, memory")
        return self


class _AnnotationsIn(_Strict):
    kind: Literal["fact", "constraint", "frontier", "interface"] = "fact"
    supports: list[Name] = []
    depends_on: list[Name | _RefIn] = []
    cites: list[Name] = []
    readers: _ReadersIn | Wild | None = None
    task: Name = "*"
    purposes: list[Name] | Wild = "*"
    valid_from: Instant | None = None
    valid_to: Instant | None = None
    unconfirmed: bool = False


@dataclass(frozen=True, slots=True)
class Ref:
    """A premise named the integration's way: resolved to an item id at write time."""

    kind: RefKind
    value: str | tuple[str, ...]

    def __str__(self) -> str:
        shown = list(self.value) if isinstance(self.value, tuple) else self.value
        return f"{{{self.kind!r}: {shown!r}}}"


def _names(values: list[str] | Wild) -> frozenset[str]:
    return frozenset({ANY}) if values == "*" else frozenset(values)


@dataclass(frozen=True, slots=True)
class Annotations:
    """Validated annotations: everything of an item but its id, text and key."""

    kind: Kind = Kind.FACT
    supports: frozenset[str] = frozenset()
    depends_on: tuple[str | Ref, ...] = ()
    cites: frozenset[str] = frozenset()
    principals: frozenset[str] | None = None
    roles: frozenset[str] = frozenset({ANY})
    task: str = ANY
    purposes: frozenset[str] = frozenset({ANY})
    validity: Validity = field(default_factory=Validity)
    unconfirmed: bool = False

    @property
    def refs(self) -> list[Ref]:
        """The premises named by reference rather than by item id."""
        return [d for d in self.depends_on if isinstance(d, Ref)]

    def draft(
        self, item: str, text: str, key: str | None, premises: Mapping[Ref, str]
    ) -> ItemDraft:
        """The item ``item`` with ``text`` and ``key``, annotated (``premises``: refs -> ids).

        Raises:
            InvalidInput: if it names its own key as a premise, confirmed: it replaces what
                that names, and would rest on what it withdrew (accepted, it was never
                shown again, a probe).
        """
        if key is not None and not self.unconfirmed and Ref("key", key) in self.refs:
            raise InvalidInput(
                f"{text[:60]!r}: readmit annotations: depends_on {Ref('key', key)} names the "
                "key this statement replaces; it cannot rest on the version it overwrites"
            )
        return ItemDraft(
            id=item,
            text=text,
            kind=self.kind,
            key=key,
            supports=self.supports,
            depends_on=frozenset(d if isinstance(d, str) else premises[d] for d in self.depends_on),
            cites=self.cites,
            principals=self.principals,
            roles=self.roles,
            task=self.task,
            purposes=self.purposes,
            validity=self.validity,
            unconfirmed=self.unconfirmed,
        )


def draft(
    annotations: Annotations | None,
    item: str,
    text: str,
    key: str | None,
    premises: Mapping[Ref, str],
) -> ItemDraft:
    """``annotations.draft(...)``, or a plain draft without annotations."""
    if annotations is None:
        return ItemDraft(id=item, text=text, key=key)
    return annotations.draft(item, text, key, premises)


def parse(raw: object, *, where: str, refs: frozenset[RefKind]) -> Annotations:
    """Validate ``raw`` (the channel's JSON object) as annotations of the write ``where``.

    Args:
        raw: What the application put under the channel.
        where: The write, as the error should name it (a path, a memory id).
        refs: The reference kinds the integration resolves.

    Raises:
        InvalidInput: naming ``where`` and every problem.
    """
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{where}: readmit annotations must be a JSON object")
    try:
        parsed = _AnnotationsIn.model_validate(dict(raw))
    except ValidationError as exc:
        raise InvalidInput(f"{where}: readmit annotations: {_problems(exc)}") from None
    premises: list[str | Ref] = []
    for n, premise in enumerate(parsed.depends_on):
        if isinstance(premise, str):
            premises.append(premise)
            continue
        ref = _ref(premise)
        if ref.kind not in refs:
            taken = ", ".join(sorted(refs))
            raise InvalidInput(
                f"{where}: readmit annotations: depends_on.{n}: a {ref.kind!r} reference is "
                f"not this integration's (it takes an item id or: {taken})"
            )
        premises.append(ref)
    try:
        return _annotations(parsed, tuple(premises))
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: readmit annotations: {exc}") from None


def _ref(premise: _RefIn) -> Ref:
    if premise.key is not None:
        return Ref("key", premise.key)
    if premise.path is not None:
        return Ref("path", tuple(premise.path))
    return Ref("memory", str(premise.memory))


def _annotations(parsed: _AnnotationsIn, premises: tuple[str | Ref, ...]) -> Annotations:
    principals: frozenset[str] | None = None
    roles = frozenset({ANY})
    if parsed.readers == "*":
        principals = frozenset({ANY})
    elif parsed.readers is not None:
        roles = _names(parsed.readers.roles)
        if parsed.readers.principals is not None:
            principals = _names(parsed.readers.principals)
    return Annotations(
        kind=Kind(parsed.kind),
        supports=frozenset(parsed.supports),
        depends_on=premises,
        cites=frozenset(parsed.cites),
        principals=principals,
        roles=roles,
        task=parsed.task,
        purposes=_names(parsed.purposes),
        validity=Validity(valid_from=parsed.valid_from, valid_to=parsed.valid_to),
        unconfirmed=parsed.unconfirmed,
    )


_FIELD = re.compile(r"[a-z_][a-z0-9_]*")


def _problems(error: ValidationError) -> str:
    """Each field's problem, once: a union's "not a string" gives way to its other branch's."""
    found: dict[str, list[str]] = {}
    for e in error.errors():
        where = ".".join(str(x) for x in e["loc"] if isinstance(x, int) or _FIELD.fullmatch(x))
        unknown = e["type"] == "extra_forbidden"
        message = unknown_field(_AnnotationsIn, e["loc"]) if unknown else plain(e["msg"])
        found.setdefault(where or "value", []).append(plain(message))
    parts = []
    for where, messages in found.items():
        specific = [m for m in messages if m != "Input should be a valid string"] or messages
        parts += [f"{where}: {m}" for m in dict.fromkeys(specific)]
    return "; ".join(parts)


Matches = Callable[[Ref, Item], bool]
"""Whether an item the agent may read is what a reference names."""


def by_key(ref: Ref, item: Item) -> bool:
    """``{"key": K}``: an item with readmit key ``K``."""
    return ref.kind == "key" and item.key == ref.value


def resolve(
    annotated: Iterable[tuple[str, Annotations | None]],
    member: Member,
    matches: Matches = by_key,
    local: Callable[[Ref], str | None] | None = None,
) -> dict[Ref, str]:
    """Each reference of ``annotated`` ((write, annotations) pairs) as an item id.

    A reference resolves to ``local(ref)`` when that names an item written in the same
    batch, else to the newest active item the agent may read that ``matches`` it (the
    agent's visible state is read once, and only if some reference needs it).

    Raises:
        InvalidInput: for a reference nothing matches, naming the write.
    """
    wanted = [(where, ref) for where, a in annotated if a is not None for ref in a.refs]
    found: dict[Ref, str] = {}
    visible: list[Item] | None = None
    for where, ref in wanted:
        if ref in found:
            continue
        named = local(ref) if local is not None else None
        if named is None:
            visible = member.visible() if visible is None else visible
            candidates = [i for i in visible if matches(ref, i)]
            if not candidates:
                raise InvalidInput(
                    f"{where}: readmit annotations: depends_on {ref} names no active item "
                    f"{member.agent!r} may read"
                )
            named = max(candidates, key=lambda i: i.epoch).id
        found[ref] = named
    return found


def kept_until(draft: ItemDraft, end: datetime | None, why: Callable[[datetime], str]) -> ItemDraft:
    """``draft``, valid no longer than its backend keeps the value (until ``end``, if any).

    The annotations' own earlier ``valid_to`` stands.

    Raises:
        InvalidInput: ``why(end)`` and that it is before the readmit ``valid_from``, if the
            annotations' ``valid_from`` is not before ``end``.
    """
    validity = draft.validity
    if end is None or (validity.valid_to is not None and validity.valid_to <= end):
        return draft
    if validity.valid_from is not None and validity.valid_from >= end:
        raise InvalidInput(f"{why(end)} before its readmit valid_from")
    return replace(draft, validity=Validity(valid_from=validity.valid_from, valid_to=end))
