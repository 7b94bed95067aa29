"""The scanner: high-recall proposals of (later event, earlier item) pairs (TRACE §3.2).

A proposal is a hypothesis, not a decision. The scanner links a later event in
Δ to an earlier candidate when the item depends on what the event withdrew,
when they share a distinctive term, when the item is among the best BM25
matches of the event's words (bounded, so topic words do not propose every
pair), or, with an embedder, among its nearest neighbours. Obligations and
frontiers are the mandatory structure of the view and are never challenged.

Fail closed: when the embedder cannot answer, the scanner cannot vouch that it
proposed every pair worth judging, so each candidate older than a later
observation is withheld as ``verifier_unavailable`` (the lexical proposals are
still judged, and a confirmed invalidation is reported as such).
"""

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.embeddings import Embedder, ranked
from readmit.admission.invalidation.implicit import Later, Pair
from readmit.errors import VerifierUnavailable
from readmit.events import Assert, Close, Evidence, Recorded, Revoke, Supersede
from readmit.model import Item, Kind
from readmit.reasons import Exclusion, Reason, Stage
from readmit.terms import content_tokens, distinctive_terms

_STRUCTURE = frozenset({Kind.OBLIGATION, Kind.FRONTIER})


def observations(ctx: ReturnContext) -> list[Later]:
    """The later observations of Δ that can change a premise, in epoch order."""
    by_key: dict[str, list[Item]] = {}
    for item in ctx.items:
        if item.key is not None:
            by_key.setdefault(item.key, []).append(item)
    found = (_observation(recorded, ctx, by_key) for recorded in ctx.delta)
    return [later for later in found if later is not None]


@dataclass(frozen=True, slots=True)
class Screening:
    """The scanner's proposals, and the candidates it could not screen."""

    pairs: list[Pair]
    unscreened: list[Exclusion]
    """``verifier_unavailable`` for every candidate, when the embedder failed."""


def scan(
    pool: Sequence[Item],
    ctx: ReturnContext,
    top_k: int = 8,
    embedder: Embedder | None = None,
    embed_top_k: int = 4,
) -> Screening:
    """Propose the (later, earlier) pairs that may share a premise, in a deterministic order."""
    candidates = [item for item in pool if item.kind not in _STRUCTURE]
    laters = observations(ctx)
    try:
        return Screening(propose(laters, candidates, top_k, embedder, embed_top_k), [])
    except VerifierUnavailable as exc:
        return Screening(propose(laters, candidates, top_k), _unscreened(laters, candidates, exc))


def propose(
    laters: Sequence[Later],
    candidates: Sequence[Item],
    top_k: int = 8,
    embedder: Embedder | None = None,
    embed_top_k: int = 4,
) -> list[Pair]:
    """For each later observation, the earlier candidates worth a verifier's look.

    An earlier item is proposed when it depends on what the observation withdrew,
    shares a distinctive term with it (a name, number or identifier), ranks
    among the ``top_k`` by BM25 over content words, or (with an embedder) among
    the ``embed_top_k`` nearest by cosine similarity. Topic words alone therefore
    propose only the best few matches, not every item that mentions "hotel".

    Raises:
        VerifierUnavailable: if the embedder fails.
    """
    queries = [_query(later) for later in laters]
    rankings = (
        ranked(
            queries,
            [c.text for c in candidates],
            embedder,
            limits=_enough(laters, candidates, embed_top_k),
        )
        if embedder is not None and laters
        else [[] for _ in laters]
    )
    index = _Bm25(candidates)
    by_premise: dict[str, list[Item]] = {}
    by_term: dict[str, list[Item]] = {}
    for item in candidates:
        for premise in item.depends_on:
            by_premise.setdefault(premise, []).append(item)
        for term in distinctive_terms(item.text):
            by_term.setdefault(term, []).append(item)
    pairs: list[Pair] = []
    for later, text, ranking in zip(laters, queries, rankings, strict=True):
        linked: dict[str, Item] = {}
        nearest = (candidates[n] for n in ranking if _earlier(candidates[n], later))
        chosen = [
            *by_premise.get(later.withdrawn_id or "", ()),
            *(i for term in sorted(distinctive_terms(text)) for i in by_term.get(term, ())),
            *index.top(content_tokens(text), top_k),
            *itertools.islice(nearest, embed_top_k),
        ]
        for item in chosen:
            if _earlier(item, later):
                linked.setdefault(item.id, item)
        pairs.extend(Pair(later=later, earlier=item) for item in linked.values())
    return pairs


def _enough(laters: Sequence[Later], candidates: Sequence[Item], k: int) -> list[int]:
    """How many nearest candidates to rank per observation so that ``k`` of them are earlier.

    At most the candidates not older than the observation, and what it withdrew or
    brought, fail `_earlier`.
    """
    epochs = np.sort(np.array([c.epoch for c in candidates], dtype=np.int64))
    newer = len(epochs) - np.searchsorted(epochs, [later.epoch for later in laters])
    return [k + int(n) + 2 for n in newer]


def _earlier(item: Item, later: Later) -> bool:
    """Whether ``item`` came before ``later`` and is not what it withdrew or brought."""
    return item.epoch < later.epoch and item.id not in (later.withdrawn_id, later.replacement_id)


def _query(later: Later) -> str:
    return " ".join(t for t in (later.text, later.withdrawn_text, later.replacement_text) if t)


def _unscreened(
    laters: Sequence[Later], candidates: Sequence[Item], error: VerifierUnavailable
) -> list[Exclusion]:
    found = []
    for item in candidates:
        after = [later.event_id for later in laters if later.epoch > item.epoch]
        if after:
            found.append(
                Exclusion(
                    item=item.id,
                    reason=Reason.VERIFIER_UNAVAILABLE,
                    stage=Stage.IMPLICIT,
                    evidence=(after[0],),
                    detail=f"not screened against later events: {error}",
                )
            )
    return found


class _Bm25:
    """Okapi BM25 over the content words of the candidates (k1 = 1.2, b = 0.75)."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.items = list(items)
        words = [content_tokens(i.text) for i in self.items]
        postings: dict[str, list[int]] = {}
        for n, found in enumerate(words):
            for word in found:
                postings.setdefault(word, []).append(n)
        self.postings = {w: np.array(ns, dtype=np.intp) for w, ns in postings.items()}
        average = sum(len(w) for w in words) / max(1, len(words))
        self.weight = np.array(
            [2.2 / (1 + 1.2 * (0.25 + 0.75 * len(w) / average)) for w in words], dtype=np.float64
        )
        """Each item's term weight (binary term frequency, length-normalized)."""
        by_id = sorted(range(len(self.items)), key=lambda n: self.items[n].id)
        self.id_rank = np.empty(len(by_id), dtype=np.intp)
        """Each item's place in id order: equal scores rank by id."""
        self.id_rank[by_id] = np.arange(len(by_id))

    def top(self, query: frozenset[str], k: int) -> list[Item]:
        total = len(self.items)
        scores = np.zeros(total, dtype=np.float64)
        for word in query:
            posting = self.postings.get(word)
            if posting is not None:
                idf = math.log(1 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
                scores[posting] += idf * self.weight[posting]
        found = np.flatnonzero(scores)
        best = found[np.lexsort((self.id_rank[found], -scores[found]))[:k]]
        return [self.items[n] for n in best]


def _observation(
    recorded: Recorded, ctx: ReturnContext, by_key: dict[str, list[Item]]
) -> Later | None:
    event, epoch = recorded.event, recorded.epoch
    match event:
        case Assert():
            old = _predecessor(by_key.get(event.item.key or "", []), epoch)
            return Later(
                event_id=event.id,
                epoch=epoch,
                op=event.op,
                text=event.item.text,
                withdrawn_id=old.id if old else None,
                withdrawn_text=old.text if old else None,
                replacement_id=event.item.id,
                replacement_text=event.item.text,
            )
        case Supersede():
            old = ctx.by_id.get(event.target)
            return Later(
                event_id=event.id,
                epoch=epoch,
                op=event.op,
                text=event.item.text,
                withdrawn_id=event.target,
                withdrawn_text=old.text if old else None,
                replacement_id=event.item.id,
                replacement_text=event.item.text,
            )
        case Revoke() | Close():
            old = ctx.by_id.get(event.target)
            why = f" Reason: {event.why}" if isinstance(event, Revoke) else ""
            return Later(
                event_id=event.id,
                epoch=epoch,
                op=event.op,
                text=f"No longer valid: {old.text if old else event.target}.{why}",
                withdrawn_id=event.target,
                withdrawn_text=old.text if old else None,
            )
        case Evidence():
            return Later(event_id=event.id, epoch=epoch, op=event.op, text=event.text)
        case _:
            return None


def _predecessor(same_key: list[Item], epoch: int) -> Item | None:
    return max((i for i in same_key if i.epoch < epoch), key=lambda i: i.epoch, default=None)
