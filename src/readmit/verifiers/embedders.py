"""Embedders for the scanner: ``openai-compat:MODEL@BASE_URL`` and ``gguf:PATH``.

``openai-compat`` posts to ``/embeddings`` of any OpenAI-compatible server
(vLLM, Ollama, llama.cpp, hosted APIs; key from ``READMIT_EMBEDDINGS_API_KEY``).
``gguf`` serves a GGUF file you already have with llama.cpp's server (in a child process)
in embedding mode (``pip install '.[gguf]'``). Both are entry points of the
group ``readmit.embedders``, which `readmit.plugins.make_embedder` searches. Vectors
are kept per text, so an item is embedded once per process, not once per return.
Any transport error, timeout or malformed answer raises `VerifierUnavailable`, and
the scanner withholds what it could not screen.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from readmit.admission.invalidation.embeddings import VectorCache
from readmit.errors import VerifierUnavailable
from readmit.verifiers.client import Endpoint, endpoint
from readmit.verifiers.gguf import serve

API_KEY_ENV = "READMIT_EMBEDDINGS_API_KEY"


@dataclass
class OpenAICompatEmbedder(Endpoint):
    """`Embedder` over ``/embeddings`` of one model."""

    batch: int = 64
    """Texts per request."""
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
        body = self.client.post("/embeddings", {"model": self.model, "input": texts})
        return parse_embeddings(body, len(texts))


def parse_embeddings(body: Mapping[str, Any], count: int) -> list[list[float]]:
    """The vectors of an ``/embeddings`` answer, in input order.

    Raises:
        VerifierUnavailable: if the answer is malformed or holds the wrong number of vectors.
    """
    try:
        rows = sorted(body["data"], key=lambda row: int(row["index"]))
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise VerifierUnavailable(f"malformed embeddings: {exc!r}") from exc
    if len(vectors) != count or any(not v for v in vectors):
        raise VerifierUnavailable(f"{len(vectors)} vectors for {count} texts")
    return vectors


def factory(argument: str, settings: Mapping[str, str] | None = None) -> OpenAICompatEmbedder:
    """Build from ``MODEL@BASE_URL`` (entry point ``openai-compat``).

    Raises:
        ConfigError: if the argument is not ``MODEL@http(s)://...``.
    """
    model, url = endpoint(argument, "openai-compat:")
    return OpenAICompatEmbedder(
        model=model, base_url=url, api_key=(settings or {}).get(API_KEY_ENV)
    )


def gguf_factory(argument: str) -> OpenAICompatEmbedder:
    """Serve the GGUF file ``PATH`` in embedding mode (entry point ``gguf``).

    Raises:
        ConfigError: if no path is given, the file is missing or xllamacpp is not installed.
    """
    server, label = serve(argument, embedding=True)
    return OpenAICompatEmbedder(
        model=Path(argument).stem, base_url=server.base_url, keepalive=server, label=label
    )
