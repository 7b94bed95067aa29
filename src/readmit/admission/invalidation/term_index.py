"""Term postings over the observations of one return, built with array operations.

Indexing a return's observations term by term in Python costs a dictionary
update per (observation, term), every return. Here each text's terms become an
array of term hashes once per process (cached by text, as the terms themselves
are), and a return's index is one concatenation and one stable sort of those
arrays: looking a term up is a binary search.

Terms are identified by their string hash. Two different terms with the same
64-bit hash would only make the scanner propose an observation it need not
(a hypothesis the verifier then judges), never hide one.
"""

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from readmit.terms import content_tokens, distinctive_terms

Ids = npt.NDArray[np.intp]


def _hashes(terms: frozenset[str]) -> npt.NDArray[np.int64]:
    return np.fromiter((hash(t) for t in terms), dtype=np.int64, count=len(terms))


@lru_cache(maxsize=1 << 17)
def content_hashes(text: str) -> npt.NDArray[np.int64]:
    """The hashes of `content_tokens` of ``text``."""
    return _hashes(content_tokens(text))


@lru_cache(maxsize=1 << 17)
def distinctive_hashes(text: str) -> npt.NDArray[np.int64]:
    """The hashes of `distinctive_terms` of ``text``."""
    return _hashes(distinctive_terms(text))


class Postings:
    """For each term, the numbers of the texts that hold it, ascending."""

    def __init__(
        self, texts: Sequence[str], hashes: Callable[[str], npt.NDArray[np.int64]], first: int = 0
    ) -> None:
        arrays = [hashes(t) for t in texts]
        self.sizes = np.fromiter(map(len, arrays), dtype=np.intp, count=len(arrays))
        """How many terms each text holds."""
        flat = np.concatenate(arrays) if arrays else np.array([], dtype=np.int64)
        order = np.argsort(flat, kind="stable")  # stable: texts stay ascending per term
        self.keys = flat[order]
        """Every (text, term) pair's term hash, ascending."""
        numbers = np.arange(first, first + len(arrays), dtype=np.intp)
        self.texts: Ids = np.repeat(numbers, self.sizes)[order]
        """The text of each entry of ``keys`` (numbered from ``first``)."""

    def extended(
        self, texts: Sequence[str], hashes: Callable[[str], npt.NDArray[np.int64]]
    ) -> "Postings":
        """These postings and those of ``texts``, numbered after these (neither is changed).

        The very postings of all the texts, made without reading these texts again.
        """
        added = Postings(texts, hashes, len(self.sizes))
        # After every equal key already here: a term's texts stay ascending.
        at = self.keys.searchsorted(added.keys, side="right")
        grown = object.__new__(Postings)
        grown.sizes = np.concatenate([self.sizes, added.sizes])
        grown.keys = np.insert(self.keys, at, added.keys)
        grown.texts = np.insert(self.texts, at, added.texts)
        return grown

    def get(self, term: str) -> Ids | None:
        """The texts that hold ``term``, or ``None``."""
        key = hash(term)
        low = int(self.keys.searchsorted(key, side="left"))
        high = int(self.keys.searchsorted(key, side="right"))
        return self.texts[low:high] if high > low else None


class Bm25:
    """Okapi BM25 over the content words of texts (k1 = 1.2, b = 0.75, binary term frequency)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._weigh(Postings(texts, content_hashes))

    def _weigh(self, postings: Postings) -> None:
        self.postings = postings
        self.total = len(postings.sizes)
        sizes = postings.sizes.astype(np.float64)
        average = float(sizes.mean()) if len(sizes) else 0.0
        self.weight = 2.2 / (1 + 1.2 * (0.25 + 0.75 * sizes / max(average, 1e-12)))
        """Each text's term weight, length-normalized."""

    def extended(self, texts: Sequence[str]) -> "Bm25":
        """BM25 over these texts and ``texts`` after them (this one is not changed)."""
        grown = object.__new__(Bm25)
        grown._weigh(self.postings.extended(texts, content_hashes))
        return grown

    def scores(self, text: str) -> npt.NDArray[np.float64]:
        """Each text's score for the content words of ``text`` (the query)."""
        scores = np.zeros(self.total, dtype=np.float64)
        keys = content_hashes(text)
        if not len(keys) or not self.total:
            return scores
        # Every word's postings found at once; added word by word in the query's order.
        postings = self.postings
        lows = postings.keys.searchsorted(keys, side="left").tolist()
        highs = postings.keys.searchsorted(keys, side="right").tolist()
        for low, high in zip(lows, highs, strict=True):
            if high > low:
                posting = postings.texts[low:high]
                found = high - low
                idf = math.log(1 + (self.total - found + 0.5) / (found + 0.5))
                scores[posting] += idf * self.weight[posting]
        return scores
