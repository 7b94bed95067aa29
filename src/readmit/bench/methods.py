"""The comparison methods behind one `ReturnMethod` interface (spec §4).

Each method sees the same post-absence checkpoint C and returns the items and
private memories it would give the returning agent. Static, MemStrata-like and
MemTX-like rank what they keep by word overlap with the returning task's query,
then recency, under the same item and character budgets as TRACE.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import get_close_matches
from typing import Protocol

from readmit.admission import admit
from readmit.admission.capture import capture
from readmit.admission.context import ReturnContext
from readmit.admission.coverage import relevance
from readmit.admission.decision import Issued
from readmit.admission.gates import temporal
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.admission.invalidation.implicit import (
    Pair,
    Verdict,
    Verifier,
    judges_news,
    tokens_used,
)
from readmit.admission.invalidation.propagation import propagate
from readmit.errors import ConfigError
from readmit.model import Item
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.terms import content_tokens

_SIGNER = HmacSha256Signer(b"readmit-bench-signing-key")


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodView:
    """What one method gives the returning agent, and what it cost."""

    items: tuple[str, ...]
    memories: tuple[str, ...]
    outcome: str = "issued"
    verifier_calls: int = 0
    verifier_pairs: int = 0
    tokens: int = 0
    seconds: float = 0.0
    """Wall time of the method's decision (the runner measures it)."""


class ReturnMethod(Protocol):
    """A way of deciding what a returning agent may use."""

    name: str

    def view(self, ctx: ReturnContext, query: str, policy: Policy) -> MethodView:
        """The agent's context after the return, for a task described by ``query``."""
        ...


def rank(items: Sequence[Item], query: str, policy: Policy) -> tuple[str, ...]:
    """Relevance retrieval: overlap with the query, then recency, within B_n and B_c."""
    ordered = sorted(items, key=relevance(content_tokens(query)))
    kept: list[str] = []
    chars = 0
    for item in ordered:
        if len(kept) < policy.max_items and chars + len(item.text) <= policy.max_chars:
            kept.append(item.id)
            chars += len(item.text)
    return tuple(kept)


def _all_memories(ctx: ReturnContext) -> tuple[str, ...]:
    return tuple(e.id for e in ctx.experiences)


class Static:
    """Ordinary retrieval over everything, with no lifecycle at return."""

    name = "Static"

    def view(self, ctx: ReturnContext, query: str, policy: Policy) -> MethodView:
        return MethodView(items=rank(capture(ctx), query, policy), memories=_all_memories(ctx))


class Restore:
    """Reinstate the departure checkpoint in full."""

    name = "Restore"

    def view(self, ctx: ReturnContext, query: str, policy: Policy) -> MethodView:
        kept = set(ctx.departure.item_ids)
        items = tuple(i.id for i in ctx.items if i.id in kept)
        return MethodView(items=items, memories=_all_memories(ctx))


class Reset:
    """Start from empty memory."""

    name = "Reset"

    def view(self, ctx: ReturnContext, query: str, policy: Policy) -> MethodView:
        return MethodView(items=(), memories=())


class MemStrataLike:
    """Temporal-validity retrieval: validity intervals and same-key supersession only."""

    name = "MemStrata"

    def view(self, ctx: ReturnContext, query: str, policy: Policy) -> MethodView:
        current, _ = resolve_explicit(list(capture(ctx)), ctx)
        valid = [m for m in current if temporal(m, ctx) is None]
        return MethodView(items=rank(valid, query, policy), memories=_all_memories(ctx))


class MemTxLike:
    """Transactional belief commit with dependent repair on writes."""

    name = "MemTX"

    def view(self, ctx: ReturnContext, query: str, policy: Policy) -> MethodView:
        current, withdrawn = resolve_explicit(list(capture(ctx)), ctx)
        repaired, _ = propagate(current, withdrawn)
        valid = [m for m in repaired if temporal(m, ctx) is None]
        return MethodView(items=rank(valid, query, policy), memories=_all_memories(ctx))


class _Counting:
    """A verifier wrapper that counts calls, pairs and (where reported) tokens."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.pairs = 0
        self.before = _spent(inner)

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.calls += 1
        self.pairs += len(pairs)
        return self.inner.judge(pairs)

    @property
    def tokens(self) -> int:
        """Tokens the inner verifier spent since this wrapper was made (one return)."""
        return _spent(self.inner) - self.before

    @property
    def tokens_used(self) -> int:
        return _spent(self.inner)

    @property
    def judges_news(self) -> bool:
        return judges_news(self.inner)


def _spent(verifier: Verifier) -> int:
    return tokens_used(verifier)


class Trace:
    """TRACE, or one of its ablations."""

    def __init__(self, verifier: Verifier, ablation: str | None = None) -> None:
        self.verifier = verifier
        self.ablation = ablation
        self.name = "TRACE" if ablation is None else f"TRACE w/o {ablation}"

    def view(self, ctx: ReturnContext, query: str, policy: Policy) -> MethodView:
        chosen = policy if self.ablation is None else policy.ablate(self.ablation)
        counting = _Counting(self.verifier)
        decision = admit(ctx, policy=chosen, verifier=counting, signer=_SIGNER, query=query)
        cost = MethodView(
            items=(),
            memories=(),
            outcome=decision.outcome,
            verifier_calls=counting.calls,
            verifier_pairs=counting.pairs,
            tokens=counting.tokens,
        )
        if isinstance(decision, Issued):
            return replace(
                cost,
                items=tuple(i.id for i in decision.items),
                memories=tuple(e.id for e in decision.readmitted),
            )
        return cost


ABLATIONS = ("I", "OAS", "CVG", "SBPR")
BASELINES = ("Static", "Restore", "Reset", "MemStrata", "MemTX")


def methods(names: Sequence[str] | None, verifier: Verifier) -> list[ReturnMethod]:
    """The named methods (default: all six and the four ablations), in a stable order.

    Raises:
        ConfigError: for an unknown method name.
    """
    every: list[ReturnMethod] = [
        Static(),
        Restore(),
        Reset(),
        MemStrataLike(),
        MemTxLike(),
        Trace(verifier),
        *(Trace(verifier, a) for a in ABLATIONS),
    ]
    if not names:
        return every
    by_name = {m.name: m for m in every}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        folded = {m.casefold(): m for m in by_name}  # 'trace' is TRACE before 'Static'
        close = [
            folded.get(n.casefold()) or next(iter(get_close_matches(n, by_name, 1, 0.3)), None)
            for n in unknown
        ]
        ablation = [f"TRACE w/o {n}" for n in unknown if n in ABLATIONS]
        meant = ablation or [c for c in close if c is not None]
        hint = f"did you mean {', '.join(map(repr, meant))}? " if meant else ""
        known = ", ".join(by_name)
        raise ConfigError(f"unknown method(s) {unknown} ({hint}known: {known})")
    return [by_name[n] for n in names]
