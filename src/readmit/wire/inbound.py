"""The event format of spec §7 as pydantic models: what an untrusted event may hold.

One model per op, told apart by ``op`` (`Op`, a discriminated union). Models are
strict (no coercion: ``"1"`` is not a number, ``0`` not a boolean) and refuse
unknown fields. `readmit.wire.edge` validates against them and turns the result
into domain values.
"""

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from readmit.wire.fields import Instant, Name, Text, Wild


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ReadersIn(_Strict):
    """Who may read an item."""

    principals: list[Name] | Wild | None = None
    """Default: every agent of the author's principal."""
    roles: list[Name] | Wild = "*"


class ItemIn(_Strict):
    """A work-state item as an event carries it."""

    id: Name
    text: Text
    kind: Literal["fact", "constraint", "frontier", "interface"] = "fact"
    key: Name | None = None
    supports: list[Name] = []
    depends_on: list[Name] = []
    cites: list[Name] = []
    readers: ReadersIn | Wild | None = None
    task: Name = "*"
    purposes: list[Name] | Wild = "*"
    valid_from: Instant | None = None
    valid_to: Instant | None = None
    unconfirmed: bool = False


class SourceIn(_Strict):
    """A raw source that items can cite."""

    id: Name
    text: Text


class FrontierIn(_Strict):
    """An obligation's progress frontier."""

    id: Name
    text: Text


class ObligationIn(_Strict):
    """An obligation for a role: what it requires, what of that is critical."""

    id: Name
    text: Text
    role: Name
    requires: list[Name]
    critical: list[Name] = []
    frontier: FrontierIn


class ExperienceIn(_Strict):
    """A private memory bound to a work-state item."""

    id: Name
    text: Text
    source: Name


class _Op(_Strict):
    id: Name | None = None
    at: Instant


class EvidenceOp(_Op):
    """``evidence``: a raw source."""

    op: Literal["evidence"]
    author: Name
    source: SourceIn


class AssertOp(_Op):
    """``assert``: a new item."""

    op: Literal["assert"]
    author: Name
    item: ItemIn


class SupersedeOp(_Op):
    """``supersede``: a new item that replaces ``target``."""

    op: Literal["supersede"]
    author: Name
    target: Name
    item: ItemIn


class RevokeOp(_Op):
    """``revoke``: ``target`` is withdrawn."""

    op: Literal["revoke"]
    author: Name
    target: Name
    why: Text


class CloseOp(_Op):
    """``close``: ``target``'s validity ends."""

    op: Literal["close"]
    author: Name
    target: Name


class ObligationOp(_Op):
    """``obligation``: opens an obligation."""

    op: Literal["obligation"]
    author: Name
    obligation: ObligationIn


class ResolveOp(_Op):
    """``resolve``: closes an obligation."""

    op: Literal["resolve"]
    author: Name
    target: Name


class ExperienceOp(_Op):
    """``experience``: a private memory of ``agent``."""

    op: Literal["experience"]
    agent: Name
    experience: ExperienceIn


class DepartOp(_Op):
    """``depart``: ``agent`` checkpoints its view."""

    op: Literal["depart"]
    agent: Name


class ReturnOp(_Op):
    """``return``: ``agent`` comes back; the pipeline runs."""

    op: Literal["return"]
    agent: Name
    task: Name
    purpose: Name
    policy: dict[str, Any] | None = None


Op = Annotated[
    EvidenceOp
    | AssertOp
    | SupersedeOp
    | RevokeOp
    | CloseOp
    | ObligationOp
    | ResolveOp
    | ExperienceOp
    | DepartOp
    | ReturnOp,
    Field(discriminator="op"),
]
"""Any event, told apart by its ``op``."""

OP: TypeAdapter[Op] = TypeAdapter(Op)
"""Validates any event (`Op`)."""
OPS: tuple[str, ...] = (
    "evidence",
    "assert",
    "supersede",
    "revoke",
    "close",
    "obligation",
    "resolve",
    "experience",
    "depart",
    "return",
)
"""The known ops, in the order the spec lists them."""

OP_MODELS: dict[str, type[BaseModel]] = {
    get_args(model.model_fields["op"].annotation)[0]: model for model in get_args(get_args(Op)[0])
}
"""The model of each op, by its ``op`` value: what fields an event with that op may have."""
