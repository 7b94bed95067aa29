"""Embedders for the scanner: ``openai-compat:MODEL@BASE_URL`` and ``gguf:PATH``.

``openai-compat`` posts to ``/embeddings`` of any OpenAI-compatible server
(vLLM, Ollama, llama.cpp, hosted APIs; key from ``READMIT_EMBEDDINGS_API_KEY``).
``gguf`` serves a GGUF file you already have in-process with llama.cpp's server
in embedding mode (``pip install 'readmit[gguf]'``); `readmit.plugins.make_embedder`
builds either from its spec. Vectors are kept per text,
so an item is embedded once per process, not once per return. Any transport
error, timeout or malformed answer raises `VerifierUnavailable`, and the
scanner withholds what it could not screen.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from readmit.admission.invalidation.embeddings import VectorCache
from readmit.errors import VerifierUnavailable
from readmit.verifiers.openai_compat import post_with_retries

API_KEY_ENV = "READMIT_EMBEDDINGS_API_KEY"


@dataclass
class OpenAICompatEmbedder:
    """`Embedder` over ``/embeddings`` of one model."""

    model: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    retries: int = 2
    batch: int = 64
    """Texts per request."""
    calls: int = 0
    tokens_used: int = 0
    keepalive: object | None = field(default=None, repr=False)
    label: str | None = None
    """The identity to report, when the URL is not one (a loopback port)."""
    cache: VectorCache = field(default_factory=VectorCache, repr=False)

    @property
    def name(self) -> str:
        return self.label or f"openai-compat:{self.model}@{self.base_url}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.cache.vectors(texts, self._post_in_batches)

    def _post_in_batches(self, texts: list[str]) -> list[list[float]]:
        found: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            found.extend(self._post(texts[start : start + self.batch]))
        return found

    def _post(self, texts: list[str]) -> list[list[float]]:
        response = post_with_retries(
            f"{self.base_url}/embeddings",
            {"model": self.model, "input": texts},
            name=self.name,
            api_key=self.api_key,
            timeout=self.timeout,
            retries=self.retries,
            inspect=self._count,
        )
        vectors, tokens = parse_embeddings(response, len(texts))
        self.tokens_used += tokens
        return vectors

    def _count(self, response: httpx.Response) -> None:
        self.calls += 1


def parse_embeddings(response: httpx.Response, count: int) -> tuple[list[list[float]], int]:
    """The vectors of an ``/embeddings`` answer, in input order, and the tokens it used.

    Raises:
        VerifierUnavailable: if the answer is malformed or holds the wrong number of vectors.
    """
    try:
        body: dict[str, Any] = response.json()
        rows = sorted(body["data"], key=lambda row: int(row["index"]))
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
        usage = body.get("usage") or {}
        tokens = int(usage.get("total_tokens") or usage.get("prompt_tokens") or 0)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise VerifierUnavailable(f"malformed embeddings: {exc!r}") from exc
    if len(vectors) != count or any(not v for v in vectors):
        raise VerifierUnavailable(f"{len(vectors)} vectors for {count} texts")
    return vectors, tokens
