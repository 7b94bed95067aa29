"""The scanner: bounded proposals of (later event, earlier item) pairs (TRACE §3.2).

A proposal is a hypothesis, not a decision. The scanner is target-centric: for
one earlier item it looks up the later observations that may change a premise
of it. An observation is proposed when it withdrew an item the target depends
on, when it shares a distinctive term with the target (a name, number or
identifier), when it is among the target's best BM25 matches (bounded, so
topic words propose only the best few), or, with an embedder, when the target
is among the observation's nearest older items (ranked once per return). At
most ``Limits.per_item`` observations are proposed per target,
strongest links first: premise withdrawals, then shared terms (withdrawals
before other news, higher BM25 first, newest first), then BM25, then
embeddings. Work therefore grows with the targets a return judges, not with
the store: the index over the observations is built once per return.

Obligations and frontiers are the mandatory structure of the view and are
never challenged. Two kinds of observation are never proposed against an item,
because they take it as true: news that only restates it (the same text,
withdrawing nothing: a teammate repeating it), and an item that declares it
depends on it (an answer built on a question cannot make the question unsafe).
"""

import bisect
import copy
import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import numpy.typing as npt

from readmit.admission.invalidation.embeddings import Embedder, ranked
from readmit.admission.invalidation.implicit import Later, Pair
from readmit.admission.invalidation.term_index import Bm25, Postings, distinctive_hashes
from readmit.model import Item, Kind
from readmit.terms import content_tokens, distinctive_terms

STRUCTURE = frozenset({Kind.OBLIGATION, Kind.FRONTIER})
"""Kinds that are never challenged."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """How many observations the scanner proposes for one target."""

    top_k: int = 8
    """Best BM25 matches."""
    per_item: int = 16
    """At most this many observations in all."""


class Observations:
    """The later observations one return can screen against, indexed once.

    Raises:
        VerifierUnavailable: from `proposals`, if the embedder fails.
    """

    def __init__(
        self,
        laters: Sequence[Later],
        embedder: Embedder | None = None,
        candidates: Sequence[Item] = (),
        embed_top_k: int = 4,
    ) -> None:
        self.laters = sorted(laters, key=_epoch)
        self.embedder = embedder
        self.candidates = (
            [c for c in candidates if c.kind not in STRUCTURE] if embedder is not None else []
        )
        """The items an embedder ranks for each observation (its nearest ``embed_top_k``)."""
        self.embed_top_k = embed_top_k
        self._near: dict[str, list[int]] | None = None
        self.texts = [_query(later) for later in self.laters]
        count = len(self.laters)
        self.epochs = np.fromiter(map(_epoch, self.laters), dtype=np.int64, count=count)
        self._epochs = self.epochs.tolist()
        """The same, for one lookup at a time (`bisect` on a list is cheaper than NumPy)."""
        self.news = _news(self.laters)
        """Whether an observation withdrew nothing (withdrawals rank first)."""
        self._lists = _lists(self.laters, 0)
        self._postings()
        # With nothing to index (a verifier shown no news, a Δ that withdrew nothing), the
        # empty indexes are shared: building them cost more than a return's other screening.
        worded = [_worded(later) for later in self.laters]
        self.by_term = Postings(worded, distinctive_hashes) if count else _NO_TERMS
        self.bm25 = Bm25(worded) if count else _NO_BM25

    def _postings(self) -> None:
        premises, subjects, restating, dependents = self._lists
        self.by_premise = _Postings(premises)
        self.by_subject = _Postings(subjects)
        """What each observation withdrew or brought: never proposed against that item."""
        self.restating = _Postings(restating)
        """News by its text: news that only restates an item cannot invalidate it."""
        self.dependents = _Postings(dependents)
        """Observations by what they depend on: an item built on another cannot invalidate it."""

    def extended(self, added: Sequence[Later]) -> "Observations":
        """This index with ``added`` after its observations (none earlier than its last).

        The very index `Observations` would build over all of them, made from this one's
        parts: what was indexed is not read again. Nothing of this index changes, so a
        return still using it is not disturbed. Only for an index without an embedder.
        """
        if self.embedder is not None or not self.laters:
            raise ValueError("only an index of some observations, without an embedder, grows")
        if not in_epoch_order([self.laters[-1], *added], 0):
            raise ValueError("the added observations must follow the indexed ones, in order")
        grown = copy.copy(self)  # every part is replaced below, or is the same (no embedder)
        grown.laters = [*self.laters, *added]
        grown.texts = self.texts + [_query(later) for later in added]
        epochs = np.fromiter(map(_epoch, added), dtype=np.int64, count=len(added))
        grown.epochs = np.concatenate([self.epochs, epochs])
        grown._epochs = self._epochs + epochs.tolist()
        grown.news = np.concatenate([self.news, _news(added)])
        (p, s, r, d), (p2, s2, r2, d2) = self._lists, _lists(added, len(self.laters))
        grown._lists = (_merged(p, p2), _merged(s, s2), _merged(r, r2), _merged(d, d2))
        grown._postings()
        worded = [_worded(later) for later in added]
        grown.by_term = self.by_term.extended(worded, distinctive_hashes)
        grown.bm25 = self.bm25.extended(worded)
        return grown

    def _first(self, after: int, target: Item) -> int:
        return bisect.bisect_right(self._epochs, max(after, target.epoch))

    def first_after(self, after: int, target: Item) -> Later | None:
        """The first observation after epoch ``after`` and after ``target``, if any."""
        first = self._first(after, target)
        return self.laters[first] if first < len(self.laters) else None

    def touches(self, target: Item, after: int) -> bool:
        """Whether anything after epoch ``after`` could be proposed against ``target``.

        A cheap over-approximation of ``bool(proposals(...))``: it never says no when
        there is a proposal, so what it clears needs no judgment.
        """
        first = self._first(after, target)
        if target.kind in STRUCTURE or first >= len(self.laters):
            return False
        if self.embedder is not None and target.id in self._nearest():
            return True
        postings = (
            *(self.by_premise.get(p) for p in target.depends_on),
            *(self.by_term.get(t) for t in distinctive_terms(target.text)),
            *(self.bm25.postings.get(w) for w in content_tokens(target.text)),
        )
        return any(p is not None and p[-1] >= first for p in postings)

    def proposals(self, target: Item, after: int, limits: Limits) -> list[Later]:
        """The observations after epoch ``after`` worth judging against ``target``, best first."""
        first = self._first(after, target)
        if target.kind in STRUCTURE or first >= len(self.laters):
            return []
        own = {n for found in self._affirming(target) if found is not None for n in found.tolist()}
        scores = self.bm25.scores(target.text)
        premise = _window([self.by_premise.get(p) for p in sorted(target.depends_on)], first, own)
        termed = _window([self.by_term.get(t) for t in distinctive_terms(target.text)], first, own)
        termed = termed[np.lexsort((-termed, -scores[termed], self.news[termed]))]
        matched = _window([first + np.flatnonzero(scores[first:])], first, own)
        matched = matched[np.lexsort((-matched, -scores[matched]))][: limits.top_k]
        chosen = [*premise.tolist(), *termed[: limits.per_item].tolist(), *matched.tolist()]
        if self.embedder is not None:
            chosen += [n for n in self._nearest().get(target.id, ()) if n >= first and n not in own]
        return [self.laters[n] for n in dict.fromkeys(chosen)][: limits.per_item]

    def unproposed(
        self, target: Item, after: int, proposed: Sequence[Later], window: int
    ) -> list[Later]:
        """At most ``window`` observations after ``after`` that `proposals` left out.

        For the dependency scan: distinct texts only (the newest of each), never what
        ``target`` itself brought or withdrew, news that restates it or items built on
        it; nearest to
        ``target`` first with an embedder, else newest first.

        Raises:
            VerifierUnavailable: if the embedder fails.
        """
        first = self._first(after, target)
        if target.kind in STRUCTURE or first >= len(self.laters) or window <= 0:
            return []
        skip = {later.event_id for later in proposed}
        skip.update(
            self.laters[n].event_id
            for found in self._affirming(target)
            if found is not None
            for n in found.tolist()
        )
        by_text: dict[str, Later] = {}
        for n in range(len(self.laters) - 1, first - 1, -1):
            if self.laters[n].event_id not in skip:
                by_text.setdefault(self.texts[n], self.laters[n])
        left = list(by_text.values())
        if self.embedder is not None and len(left) > window:
            order = ranked([target.text], [_query(x) for x in left], self.embedder, [window])[0]
            left = [left[n] for n in order]
        return left[:window]

    def _affirming(self, target: Item) -> tuple[npt.NDArray[np.intp] | None, ...]:
        """Observations never proposed against ``target``, which take it as true.

        What brought or withdrew it, news restating it, and items that depend on it.
        """
        return (
            self.by_subject.get(target.id, _NONE),
            self.restating.get(target.text),
            self.dependents.get(target.id),
        )

    def _nearest(self) -> dict[str, list[int]]:
        """For each candidate, the observations that have it among their nearest items.

        Ranked once per index: each observation's ``embed_top_k`` nearest candidates
        older than it (not what it withdrew or brought), so an observation proposes
        only the few items closest to it, as lexical terms do.

        Raises:
            VerifierUnavailable: if the embedder fails.
        """
        if self._near is not None:
            return self._near
        near: dict[str, list[int]] = {}
        if self.embedder is not None and self.candidates and self.laters:
            epochs = np.sort(np.array([c.epoch for c in self.candidates], dtype=np.int64))
            newer = len(epochs) - np.searchsorted(epochs, self.epochs)
            rankings = ranked(
                self.texts,
                [c.text for c in self.candidates],
                self.embedder,
                limits=[self.embed_top_k + int(n) + 2 for n in newer],
            )
            for n, (later, ranking) in enumerate(zip(self.laters, rankings, strict=True)):
                mine = (
                    c
                    for c in (self.candidates[i] for i in ranking)
                    if c.epoch < later.epoch
                    and c.id not in (later.withdrawn_id, later.replacement_id)
                    and c.id not in later.depends_on
                )
                for c in itertools.islice(mine, self.embed_top_k):
                    near.setdefault(c.id, []).append(n)
        self._near = near
        return near


_NONE: npt.NDArray[np.intp] = np.array([], dtype=np.intp)


def _window(
    found: Sequence[npt.NDArray[np.intp] | None], first: int, own: set[int]
) -> npt.NDArray[np.intp]:
    """The observations of ``found`` from ``first`` on, ascending, less ``own``."""
    kept = [f for f in found if f is not None]
    if not kept:
        return _NONE
    # One posting is already sorted and distinct; several need joining.
    joined = kept[0] if len(kept) == 1 else np.unique(np.concatenate(kept))
    joined = joined[joined >= first]
    if not own or not joined.size:
        return joined
    # A Python set test: np.isin costs tens of microseconds even on a few elements.
    keep = np.fromiter((n not in own for n in joined.tolist()), dtype=bool, count=joined.size)
    kept_ids: npt.NDArray[np.intp] = joined[keep]
    return kept_ids


class _Postings:
    """Observation numbers by key, as arrays made on first lookup.

    A return looks up the keys of the few targets it judges, so making an array for
    every key of Δ up front (thousands of small arrays) would cost more than the lookups.
    """

    def __init__(self, lists: dict[str, list[int]]) -> None:
        self._lists = lists
        self._arrays: dict[str, npt.NDArray[np.intp]] = {}

    @overload
    def get(self, key: str) -> npt.NDArray[np.intp] | None: ...
    @overload
    def get(self, key: str, default: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]: ...
    def get(
        self, key: str, default: npt.NDArray[np.intp] | None = None
    ) -> npt.NDArray[np.intp] | None:
        found = self._arrays.get(key)
        if found is None:
            listed = self._lists.get(key)
            if listed is None:
                return default
            found = self._arrays[key] = np.array(listed, dtype=np.intp)
        return found


def propose(
    laters: Sequence[Later],
    candidates: Sequence[Item],
    top_k: int = 8,
    embedder: Embedder | None = None,
    embed_top_k: int = 4,
    per_item: int = 16,
) -> list[Pair]:
    """Every candidate's proposals against ``laters``, grouped by candidate.

    Raises:
        VerifierUnavailable: if the embedder fails.
    """
    index = Observations(laters, embedder, candidates, embed_top_k)
    limits = Limits(top_k=top_k, per_item=per_item)
    return [
        Pair(later=later, earlier=item)
        for item in candidates
        for later in index.proposals(item, 0, limits)
    ]


def in_epoch_order(laters: Sequence[Later], start: int = 0) -> bool:
    """Whether ``laters`` from ``start`` on are in epoch order, after those before it."""
    epochs = [later.epoch for later in laters[max(start - 1, 0) :]]
    return all(map(operator.le, epochs, epochs[1:]))


def _news(laters: Sequence[Later]) -> npt.NDArray[np.bool_]:
    return np.fromiter(
        (later.withdrawn_id is None for later in laters), dtype=bool, count=len(laters)
    )


_Lists = tuple[
    dict[str, list[int]], dict[str, list[int]], dict[str, list[int]], dict[str, list[int]]
]


def _lists(laters: Sequence[Later], offset: int) -> _Lists:
    """``laters``' numbers (from ``offset``) by what each withdrew, brought or depends on.

    By what they withdrew (premises), by what they withdrew or brought (subjects), news by
    its text (restating), and by what they depend on (dependents).
    """
    premises: dict[str, list[int]] = {}
    subjects: dict[str, list[int]] = {}
    restating: dict[str, list[int]] = {}
    dependents: dict[str, list[int]] = {}
    # One pass, fields unpacked: Δ can hold thousands of observations a return.
    for n, (_, _, _, text, withdrawn, _, replacement, _, depends_on, _, _, _) in enumerate(
        laters, offset
    ):
        for premise in depends_on:
            dependents.setdefault(premise, []).append(n)
        if withdrawn is None:
            restating.setdefault(text, []).append(n)
        else:
            premises.setdefault(withdrawn, []).append(n)
            subjects.setdefault(withdrawn, []).append(n)
        if replacement is not None and replacement != withdrawn:
            subjects.setdefault(replacement, []).append(n)
    return premises, subjects, restating, dependents


def _merged(earlier: dict[str, list[int]], later: dict[str, list[int]]) -> dict[str, list[int]]:
    """``earlier``'s lists with ``later``'s numbers after them; neither is changed."""
    merged = dict(earlier)
    for key, numbers in later.items():
        merged[key] = merged[key] + numbers if key in merged else numbers
    return merged


def _epoch(later: Later) -> int:
    return later.epoch


def _query(later: Later) -> str:
    text, withdrawn, replacement = later.text, later.withdrawn_text, later.replacement_text
    if withdrawn is None and replacement is None:
        return text
    return " ".join([t for t in (text, withdrawn, replacement) if t])


def _worded(later: Later) -> str:
    """The texts an observation's terms come from, one line each and each once.

    Its own text, and what it withdrew and brought. On lines of their own, a name never
    runs from one text into the next ("... to Room Beacon" then "Atlas is booked" is no
    "Room Beacon Atlas"). Terms are sets, so a text read twice (a replacement is usually
    the observation's own text) adds nothing.
    """
    text, withdrawn, replacement = later.text, later.withdrawn_text, later.replacement_text
    if withdrawn is None and replacement is None:
        return text
    return "\n".join(dict.fromkeys(t for t in (text, withdrawn, replacement) if t))


_NO_TERMS = Postings([], distinctive_hashes)
_NO_BM25 = Bm25([])
