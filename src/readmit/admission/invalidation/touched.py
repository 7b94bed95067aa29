"""`Observations.touches` for many targets at once, in array passes.

Once a return's judgment budget is spent, the selector still walks its candidates for
items nothing later could be proposed against (those need no judgment), and withholds
the others as ``unscreened``. Asked one target at a time, that walk looked up every term
of every candidate: at 100k items, half of such a return. Here the latest observation of
each indexed term is found once, and every target's terms are looked up in one sorted
search.
"""

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from readmit.admission.invalidation.scanner import STRUCTURE, Observations
from readmit.admission.invalidation.term_index import (
    Postings,
    content_hashes,
    distinctive_hashes,
)
from readmit.model import Item

_NO_HASHES: npt.NDArray[np.int64] = np.array([], dtype=np.int64)


def touched(index: Observations, targets: Sequence[Item], afters: Sequence[int]) -> list[bool]:
    """``[index.touches(t, a) for t, a in zip(targets, afters)]``, the same answers.

    With an embedder, target by target (its nearest items are ranked per observation).
    """
    if index.embedder is not None:
        return [index.touches(t, a) for t, a in zip(targets, afters, strict=True)]
    count = len(targets)
    epochs = np.fromiter((t.epoch for t in targets), dtype=np.int64, count=count)
    starts = np.maximum(epochs, np.asarray(afters, dtype=np.int64).reshape(count))
    firsts = np.searchsorted(index.epochs, starts, side="right")
    latest = np.full(count, -1, dtype=np.intp)
    for postings, hashes in (
        (index.by_term, distinctive_hashes),
        (index.bm25.postings, content_hashes),
    ):
        arrays = [hashes(t.text) for t in targets]
        np.maximum(latest, _latest_of(postings, arrays), out=latest)
    for n, target in enumerate(targets):
        for premise in target.depends_on:  # few items depend on any: looked up one by one
            found = index.by_premise.get(premise)
            if found is not None:
                latest[n] = max(int(latest[n]), int(found[-1]))
    structure = np.fromiter((t.kind in STRUCTURE for t in targets), dtype=bool, count=count)
    return ((latest >= firsts) & ~structure).tolist()  # type: ignore[no-any-return]


def _latest_of(postings: Postings, arrays: Sequence[npt.NDArray[np.int64]]) -> npt.NDArray[np.intp]:
    """For each array of term hashes, the latest observation holding any of them, or -1."""
    count = len(arrays)
    latest = np.full(count, -1, dtype=np.intp)
    keys, texts = postings.keys, postings.texts
    if not count or not len(keys):
        return latest
    # A term's observations are ascending: the last entry of each run of a key is its latest.
    ends = np.flatnonzero(np.append(keys[1:] != keys[:-1], True))
    terms, last = keys[ends], texts[ends]
    sizes = np.fromiter(map(len, arrays), dtype=np.intp, count=count)
    flat = np.concatenate(arrays) if sizes.any() else _NO_HASHES
    at = np.searchsorted(terms, flat).clip(max=len(terms) - 1)
    values = np.where(terms[at] == flat, last[at], -1)
    held = sizes > 0
    if held.any():
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        latest[held] = np.maximum.reduceat(values, offsets[held])
    return latest


ONE_BY_ONE = 64
"""Targets asked one at a time before the whole pool is answered at once (that pass costs
about what a few hundred single answers do, and most returns ask a few or none)."""


def screened_from(departed: int | None, through: Mapping[str, int], item: Item) -> int:
    """The epoch ``item`` is screened through: judge only what came after it.

    ``through``: by item, where the verifier's screening reached; ``departed``: the
    departure's epoch, where an item never screened starts when there is no history to
    screen it against before (``None``: its own).
    """
    default = item.epoch if departed is None else departed
    return max(item.epoch, through.get(item.id, default))


class Touching:
    """`Observations.touches` for the items of one return's pool, as the selector asks.

    Target by target for the first `ONE_BY_ONE` asked (and always with an embedder), then
    for every item of the pool at once (`touched`). ``start``: the epoch an item is
    screened through.
    """

    def __init__(self, pool: Sequence[Item], start: Callable[[Item], int]) -> None:
        self.pool = pool
        self.start = start
        self.asked = 0
        self.known: dict[str, bool] = {}

    def __call__(self, item: Item, index: Callable[[int], Observations]) -> bool:
        """Whether anything ``index(after)`` holds could be proposed against ``item``."""
        found = self.known.get(item.id)
        if found is not None:
            return found
        self.asked += 1
        start = self.start(item)
        # With an embedder, each answer ranks observations against the item: one by one.
        if self.asked > ONE_BY_ONE and not self.known and index(start).embedder is None:
            targets = [i for i in self.pool if i.kind not in STRUCTURE]
            starts = [self.start(i) for i in targets]
            whole = index(min(starts, default=start))  # the index every one of them needs
            self.known = dict(zip(map(_ID, targets), touched(whole, targets, starts), strict=True))
            found = self.known.get(item.id)
            if found is not None:
                return found
        return index(start).touches(item, start)


_ID = attrgetter("id")
