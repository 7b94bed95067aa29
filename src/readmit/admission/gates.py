"""Stage 3, gates: ``E = {m ∈ P : A(m) ∧ T(m) ∧ U(m) ∧ P(m)}`` and a size budget (TRACE §3.3).

A gate is a predicate over one item: the reason it fails, or ``None``. The
first failing gate decides the reason, so gate order is the order of precedence
of reason codes in ``readmit explain``.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from readmit.admission.context import ReturnContext
from readmit.events import text_digest
from readmit.model import Item, Scope, Validity
from readmit.reasons import Exclusion, Reason, Stage

Gate = Callable[[Item, ReturnContext], Reason | None]
"""A predicate over one item: the reason it fails, or ``None`` if it passes."""


def authorization(item: Item, ctx: ReturnContext) -> Reason | None:
    """A: the returning principal and role may read the item."""
    who = ctx.returner
    return None if item.scope.readable_by(who.principal, who.role) else Reason.UNAUTHORIZED


def temporal(item: Item, ctx: ReturnContext) -> Reason | None:
    """T: the item belongs to C's epochs and its validity interval covers the return time."""
    at = ctx.returner.at
    if item.epoch > ctx.epoch or not item.validity.started(at):
        return Reason.NOT_YET_VALID
    return Reason.EXPIRED if item.validity.ended(at) else None


def applicability(item: Item, ctx: ReturnContext) -> Reason | None:
    """U: the item serves the returning task and purpose, and is meant for its role."""
    who = ctx.returner
    if not item.scope.applies_to(who.task, who.purpose):
        return Reason.NOT_APPLICABLE
    if item.for_role is not None and item.for_role != who.role:
        return Reason.NOT_APPLICABLE
    return None


def provenance(item: Item, ctx: ReturnContext) -> Reason | None:
    """P: a receipt binds the item's text to its recording event, and cited sources exist.

    A receipt proves where a statement came from, not that it is true.
    """
    receipt = item.receipt
    if receipt is None or receipt.epoch != item.epoch or receipt.author != item.author:
        return Reason.MISSING_RECEIPT
    if receipt.digest != text_digest(item.id, item.text):
        return Reason.MISSING_RECEIPT
    return None if item.cites <= ctx.evidence else Reason.MISSING_RECEIPT


@dataclass(frozen=True, slots=True)
class _MaxChars:
    limit: int

    def __call__(self, item: Item, ctx: ReturnContext) -> Reason | None:
        return Reason.OVER_ITEM_BUDGET if len(item.text) > self.limit else None


def max_chars(limit: int) -> Gate:
    """Item size budget: reject items whose text is longer than ``limit`` characters."""
    return _MaxChars(limit)


DEFAULT_GATES: tuple[Gate, ...] = (authorization, temporal, applicability, provenance)


def apply_gates(
    items: Iterable[Item], ctx: ReturnContext, gates: Sequence[Gate] = DEFAULT_GATES
) -> tuple[list[Item], list[Exclusion]]:
    """Split ``items`` into those every gate passes and the exclusions of the rest."""
    check = _combined(ctx, gates)
    kept: list[Item] = []
    excluded: list[Exclusion] = []
    for item in items:
        reason = check(item)
        if reason is None:
            kept.append(item)
        else:
            evidence = (item.receipt.event_id,) if item.receipt else ()
            excluded.append(
                Exclusion(item=item.id, reason=reason, stage=Stage.GATES, evidence=evidence)
            )
    return kept, excluded


def _combined(ctx: ReturnContext, gates: Sequence[Gate]) -> Callable[[Item], Reason | None]:
    """One check for the whole sequence: the first failing gate's reason, or ``None``."""
    gates = tuple(gates)
    extra = gates[len(DEFAULT_GATES) :]
    if gates[: len(DEFAULT_GATES)] == DEFAULT_GATES and all(
        isinstance(g, _MaxChars) for g in extra
    ):
        limits = [g.limit for g in extra if isinstance(g, _MaxChars)]
        return _DefaultGates(ctx, min(limits) if limits else None)

    def check(item: Item) -> Reason | None:
        for gate in gates:
            reason = gate(item, ctx)
            if reason is not None:
                return reason
        return None

    return check


class _DefaultGates:
    """A ∧ T ∧ U ∧ P (and a size budget) as one check, deciding each scope and interval once.

    Gives the reason the gates give one by one, in the same precedence. Items of one
    store share their `Scope` and `Validity` values, so A, the task and purpose part of U,
    and the interval part of T are decided once per distinct value (keyed by identity,
    which is cheaper than hashing the value) rather than once per item.
    """

    def __init__(self, ctx: ReturnContext, limit: int | None) -> None:
        self.ctx = ctx
        self.epoch = ctx.epoch
        self.role = ctx.returner.role
        self.limit = limit
        self.scopes: dict[int, tuple[Scope, Reason | None, Reason | None]] = {}
        self.validities: dict[int, tuple[Validity, Reason | None]] = {}

    def __call__(self, item: Item) -> Reason | None:
        scope = self.scopes.get(id(item.scope)) or self._scope(item.scope)
        if scope[1] is not None:
            return scope[1]
        if item.epoch > self.epoch:
            return Reason.NOT_YET_VALID
        validity = self.validities.get(id(item.validity)) or self._validity(item.validity)
        if validity[1] is not None:
            return validity[1]
        if scope[2] is not None or (item.for_role is not None and item.for_role != self.role):
            return Reason.NOT_APPLICABLE
        if (reason := provenance(item, self.ctx)) is not None:
            return reason
        if self.limit is not None and len(item.text) > self.limit:
            return Reason.OVER_ITEM_BUDGET
        return None

    def _scope(self, scope: Scope) -> tuple[Scope, Reason | None, Reason | None]:
        who = self.ctx.returner
        readable = scope.readable_by(who.principal, who.role)
        applies = scope.applies_to(who.task, who.purpose)
        decided = (
            scope,
            None if readable else Reason.UNAUTHORIZED,
            None if applies else Reason.NOT_APPLICABLE,
        )
        self.scopes[id(scope)] = decided  # the value is kept, so its id is not reused
        return decided

    def _validity(self, validity: Validity) -> tuple[Validity, Reason | None]:
        at = self.ctx.returner.at
        if not validity.started(at):
            decided: tuple[Validity, Reason | None] = (validity, Reason.NOT_YET_VALID)
        else:
            decided = (validity, Reason.EXPIRED if validity.ended(at) else None)
        self.validities[id(validity)] = decided
        return decided
