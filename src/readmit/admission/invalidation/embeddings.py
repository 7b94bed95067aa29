"""Embedding proposals for the scanner: the earlier items nearest to a later observation.

An `Embedder` turns texts into vectors: ``readmit.verifiers.wordllama_embedder``
runs a packaged static model in-process, ``readmit.verifiers.embedders`` asks any
OpenAI-compatible ``/embeddings`` endpoint or a GGUF file served in-process. The
scanner adds each observation's ``k`` nearest older items by cosine similarity to
its lexical proposals: this is how a premise change that shares no word with the
item it breaks ("the flight moved to Friday" and "pickup at 8:00 from the hotel")
can reach the verifier at all. A proposal is a hypothesis; the verifier decides.
"""

import threading
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from readmit.errors import VerifierUnavailable


class Embedder(Protocol):
    """Maps texts to vectors of one fixed dimension."""

    @property
    def name(self) -> str:
        """Identity of the model (used in explanations)."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order.

        Raises:
            VerifierUnavailable: if no trustworthy vectors can be given.
        """
        ...


class VectorCache:
    """Vectors kept per text as float32, least recently used dropped first, thread-safe.

    An item is embedded once per process, not once per return. At 768 dimensions
    the default capacity holds about 300 MB.
    """

    def __init__(self, capacity: int = 100_000) -> None:
        self.capacity = capacity
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(
        self, texts: Sequence[str], compute: Callable[[list[str]], list[list[float]]]
    ) -> list[list[float]]:
        """The vector of each text, from ``compute`` (called once, on the new texts) or kept."""
        with self._lock:
            kept = self._vectors
            missing = list(dict.fromkeys(t for t in texts if t not in kept))
            if missing:
                for text, vector in zip(missing, compute(missing), strict=True):
                    kept[text] = np.asarray(vector, dtype=np.float32)
            for text in dict.fromkeys(texts):
                kept[text] = kept.pop(text)  # most recently used last
            found = [kept[t].tolist() for t in texts]
            while len(kept) > self.capacity:
                del kept[next(iter(kept))]
            return found


def ranked(
    queries: Sequence[str],
    candidates: Sequence[str],
    embedder: Embedder,
    limits: Sequence[int] | None = None,
) -> list[list[int]]:
    """For each query, the indices of the candidates from most to least similar (ties by index).

    With ``limits``, only the first ``limits[i]`` indices for query ``i``: the same
    prefix, found without sorting every candidate.

    Raises:
        VerifierUnavailable: if the embedder fails or answers with vectors that do not
            fit (wrong count, mixed dimensions, zero or non-finite vectors).
    """
    if not queries or not candidates:
        return [[] for _ in queries]
    texts = list(dict.fromkeys([*queries, *candidates]))
    vectors = embedder.embed(texts)
    if len(vectors) != len(texts) or len({len(v) for v in vectors}) != 1:
        raise VerifierUnavailable(f"{embedder.name}: wrong number or shape of vectors")
    matrix = np.asarray(vectors, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(matrix, axis=1)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0.0):
        raise VerifierUnavailable(f"{embedder.name}: a zero or non-finite vector")
    unit = matrix / norms[:, np.newaxis]
    row = {text: n for n, text in enumerate(texts)}
    scores = unit[[row[q] for q in queries]] @ unit[[row[c] for c in candidates]].T
    wanted = limits if limits is not None else [len(candidates)] * len(queries)
    return [_best_first(-line, limit) for line, limit in zip(scores, wanted, strict=True)]


def _best_first(cost: npt.NDArray[np.float64], limit: int) -> list[int]:
    """The ``limit`` indices of least cost, by (cost, index): a prefix of the stable sort."""
    if limit <= 0:
        return []
    if limit >= len(cost):
        return list(np.argsort(cost, kind="stable").tolist())
    bound = np.partition(cost, limit - 1)[limit - 1]
    head = np.flatnonzero(cost <= bound)  # every tie at the bound, in index order
    return list(head[np.argsort(cost[head], kind="stable")][:limit].tolist())
