"""Stage 3, gates: ``E = {m ∈ P : A(m) ∧ T(m) ∧ U(m) ∧ P(m)}`` and a size budget (TRACE §3.3).

A gate is a predicate over one item: the reason it fails, or ``None``. The
first failing gate decides the reason, so gate order is the order of precedence
of reason codes in ``readmit explain``.
"""

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from readmit.admission.context import ReturnContext
from readmit.admission.gate_details import GateDetails
from readmit.admission.memo import ITEMS, Passes, keep
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
    if not _sound(item, _remembered(ctx)):
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
    items = list(items)  # alive while they are split: their values' ids stay their own
    fused = _DefaultGates.of(ctx, gates)
    if fused is None:
        return _one_by_one(items, ctx, gates)
    inputs = (*fused.key(), ctx.evidence)
    at = ctx.returner.at
    known = _SPLITS.get(items, inputs)
    if known is not None and all(v.started(at) is s and v.ended(at) is e for v, s, e in known[0]):
        return list(known[1]), list(known[2])
    kept, failing = fused.split(items)
    excluded = _one_by_one(failing, ctx, gates)[1]
    if len(fused.validities) <= _MAX_VALIDITIES:
        states = tuple((v, v.started(at), v.ended(at)) for v, _ in fused.validities.values())
        _SPLITS.put(items, inputs, None, (states, tuple(kept), tuple(excluded)), owned=True)
    return kept, excluded


_SPLITS: Passes[
    tuple[tuple[tuple[Validity, bool, bool], ...], tuple[Item, ...], tuple[Exclusion, ...]]
] = Passes()
"""Recent pools' splits by the default gates, by what the split read besides the items (the
returner's principal, role, task and purpose, C's epoch, the size budget, the evidence),
with where the return's time stood in each distinct validity interval (begun, ended): a
return by the same agent at the same epoch passes the same pool through the gates, and a
100k-item split cost 15% of such a return."""
_MAX_VALIDITIES = 256
"""Distinct validity intervals past which a split is not remembered (each is checked)."""


def _one_by_one(
    items: Iterable[Item], ctx: ReturnContext, gates: Sequence[Gate]
) -> tuple[list[Item], list[Exclusion]]:
    kept: list[Item] = []
    excluded: list[Exclusion] = []
    describe = GateDetails(ctx)
    for item in items:
        for gate in gates:
            reason = gate(item, ctx)
            if reason is not None:
                evidence = (item.receipt.event_id,) if item.receipt else ()
                detail = describe(reason, item)
                excluded.append(
                    Exclusion(
                        item=item.id,
                        reason=reason,
                        stage=Stage.GATES,
                        evidence=evidence,
                        detail=detail,
                    )
                )
                break
        else:
            kept.append(item)
    return kept, excluded


class _DefaultGates:
    """Whether A ∧ T ∧ U ∧ P (and the size budget) all pass, in one pass over the items.

    Only the items it fails run the gates one by one, for the first failing gate's
    reason. Items of one store share their `Scope` and `Validity` values, so A, the
    task and purpose part of U, and the interval part of T are decided once per
    distinct value (keyed by identity, cheaper than hashing the value; a run of items
    sharing the previous item's values is not even looked up), not per item; and the
    items whose receipt binds their text are remembered (`_Remembered`).
    """

    def __init__(self, ctx: ReturnContext, limit: int) -> None:
        self.ctx = ctx
        self.limit = limit
        self.scopes: dict[int, tuple[Scope, bool]] = {}
        self.validities: dict[int, tuple[Validity, bool]] = {}

    @classmethod
    def of(cls, ctx: ReturnContext, gates: Sequence[Gate]) -> "_DefaultGates | None":
        """The fused check of ``gates`` if they are the default ones (and size budgets)."""
        gates = tuple(gates)
        extra = gates[len(DEFAULT_GATES) :]
        if gates[: len(DEFAULT_GATES)] != DEFAULT_GATES:
            return None
        limits = [g.limit for g in extra if isinstance(g, _MaxChars)]
        if len(limits) != len(extra):
            return None
        return cls(ctx, min(limits, default=sys.maxsize))

    def key(self) -> tuple[object, ...]:
        """What the split reads of the return besides the evidence and the time."""
        who = self.ctx.returner
        return (who.principal, who.role, who.task, who.purpose, self.ctx.epoch, self.limit)

    def split(self, items: Iterable[Item]) -> tuple[list[Item], list[Item]]:
        """The items every gate passes, and the others, each in their order."""
        memo = _remembered(self.ctx)
        limit, sound = self.limit, memo.items
        epoch, role, evidence = self.ctx.epoch, self.ctx.returner.role, self.ctx.evidence
        kept: list[Item] = []
        failing: list[Item] = []
        learned: list[Item] = []
        keep, fail, learn = kept.append, failing.append, learned.append
        scope: Scope | None = None
        validity: Validity | None = None
        scope_passes = validity_passes = False
        for item in items:
            if item.scope is not scope:
                scope = item.scope
                scope_passes = (self.scopes.get(id(scope)) or self._scope(scope))[1]
            if item.validity is not validity:
                validity = item.validity
                validity_passes = (self.validities.get(id(validity)) or self._validity(validity))[1]
            if (
                scope_passes
                and validity_passes
                and item.epoch <= epoch
                and (item.for_role is None or item.for_role == role)
                and (not item.cites or item.cites <= evidence)
                and len(item.text) <= limit
            ):
                if id(item) in sound:
                    keep(item)
                    continue
                if _binds(item):  # remembered below, all together
                    learn(item)
                    keep(item)
                    continue
            fail(item)
        memo.learn(learned)
        return kept, failing

    def _scope(self, scope: Scope) -> tuple[Scope, bool]:
        who = self.ctx.returner
        passes = scope.readable_by(who.principal, who.role) and scope.applies_to(
            who.task, who.purpose
        )
        self.scopes[id(scope)] = (scope, passes)  # the value is kept, so its id is not reused
        return self.scopes[id(scope)]

    def _validity(self, validity: Validity) -> tuple[Validity, bool]:
        self.validities[id(validity)] = (validity, validity.covers(self.ctx.returner.at))
        return self.validities[id(validity)]


class _Remembered:
    """Items whose receipt binds their text, by identity, at most ``limit`` of them.

    An item is kept, so while it is remembered no other object has its id, and a
    membership test of its id suffices. An item is immutable; the digest of its text cost
    the fused gates a third of their time at every return. Past the limit it starts over.
    """

    __slots__ = ("items", "limit")

    def __init__(self, limit: int) -> None:
        self.items: dict[int, Item] = {}
        self.limit = limit

    def learn(self, items: Sequence[Item]) -> None:
        """Remember ``items`` as sound, all at once, in C.

        One call an item to remember it cost as much as checking it.
        """
        if len(self.items) + len(items) > self.limit:
            self.items.clear()
            items = items[: self.limit]
        self.items.update(zip(map(id, items), items, strict=True))


_STORED = _Remembered(ITEMS)
"""For the contexts a store makes: its items are the objects it keeps decoded, alive
anyway, so as many as it keeps (with 131,072, a process serving sixteen workspaces of 10k
items started over at every few returns and checked every receipt again)."""
_OWN = _Remembered(1 << 17)
"""For contexts a caller makes itself: their items are new objects at every return, which
only this memo would keep alive. With the store's bound, deciding Memora's contexts one
after another grew a process by 35 MiB every 45 contexts, to 686 MiB before it started
over; with this one, to about 130k items."""


def _remembered(ctx: ReturnContext) -> _Remembered:
    """The memo for ``ctx``'s items: a store's (it reads the log back) or a caller's."""
    return _OWN if ctx.history is None else _STORED


_DIGESTS: dict[str, tuple[str, str]] = {}
"""The last text seen under each item id, with the digest of the two. A return to a context
decided before finds its items in `_Remembered`; a first return to a new context gets new
objects, but their ids and texts recur from one context to the next (each of a Memora
persona's 45 contexts holds the same 1,274), and their digests were 2.8 ms of a context's
first decision. Found by id, then the text compared: hashing each new text object for a
key of id and text took a tenth of a first decision, comparing it is a memcmp."""
_DIGESTS_LIMIT = 1 << 14
"""Fewer than a `_Remembered` holds: a store's items are the same objects from one return to the
next, and a 100k-item store would keep 100k texts' digests here for nothing."""


def _sound(item: Item, memo: _Remembered) -> bool:
    """Gate P's part that depends on the item alone: a receipt of its epoch, author and text."""
    if id(item) in memo.items:
        return True
    if _binds(item):
        memo.learn((item,))
        return True
    return False


def _binds(item: Item) -> bool:
    """Whether ``item``'s receipt names its epoch and author and the digest of its text.

    An item that fails is not remembered (it is rare): it is checked again at each return.
    """
    receipt = item.receipt
    if receipt is None or receipt.epoch != item.epoch or receipt.author != item.author:
        return False
    text = item.text
    known = _DIGESTS.get(item.id)
    if known is not None and known[0] == text:
        return receipt.digest == known[1]
    try:
        made = text_digest(item.id, text)
    except UnicodeEncodeError:  # a lone surrogate (the store refuses one): nothing binds it
        return False
    keep(_DIGESTS, item.id, (text, made), _DIGESTS_LIMIT)
    return receipt.digest == made
