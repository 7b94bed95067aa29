"""Embedding proposals for the scanner: the earlier items nearest to a later observation.

An `Embedder` turns texts into vectors: ``readmit.verifiers.wordllama_embedder``
runs a packaged static model in-process, ``readmit.verifiers.embedders`` asks any
OpenAI-compatible ``/embeddings`` endpoint or a GGUF file served in-process. The
scanner adds each observation's ``k`` nearest older items by cosine similarity to
its lexical proposals: this is how a premise change that shares no word with the
item it breaks ("the flight moved to Friday" and "pickup at 8:00 from the hotel")
can reach the verifier at all. A proposal is a hypothesis; the verifier decides.
"""

import math
from collections.abc import Sequence
from operator import mul
from typing import Protocol

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


def ranked(
    queries: Sequence[str], candidates: Sequence[str], embedder: Embedder
) -> list[list[int]]:
    """For each query, the indices of the candidates from most to least similar.

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
    unit = dict(zip(texts, (_normalized(v, embedder.name) for v in vectors), strict=True))
    found = []
    for query in queries:
        q = unit[query]
        scores = [sum(map(mul, q, unit[c])) for c in candidates]
        found.append(sorted(range(len(candidates)), key=lambda n: -scores[n]))
    return found


def _normalized(vector: list[float], name: str) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if not math.isfinite(norm) or norm == 0.0:
        raise VerifierUnavailable(f"{name}: a zero or non-finite vector")
    return [x / norm for x in vector]
