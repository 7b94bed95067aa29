"""The embedder that needs no server and no download: WordLlama (``--embeddings wordllama``).

WordLlama (MIT, by its author Lee Miller) is a static model: token vectors,
trained for sentence similarity from the token embeddings of Llama 2 and Phi-3
models (its README says so; their terms may matter to a user), mean-pooled. Its
wheel carries the 256-dimension ``l2_supercat`` weights (16 MB) and their
tokenizer, so it embeds in-process, on the CPU, in well under a millisecond per
text. Install it with ``pip install '.[wordllama]'``.

The model is loaded from the installed package only: downloads are disabled, so
a missing file is a `ConfigError`, never a request to a hub. (WordLlama looks for
its tokenizer in a ``tokenizer/`` folder but ships it in ``tokenizers/``; naming
the package folder as the cache makes it find both files there.)
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from readmit.admission.invalidation.embeddings import VectorCache
from readmit.errors import ConfigError, VerifierUnavailable, install_hint
from readmit.urls import shown

DIMENSIONS = (64, 128, 256)


@dataclass
class WordLlamaEmbedder:
    """`Embedder` over WordLlama's packaged ``l2_supercat`` model; vectors kept per text."""

    model: Any = field(repr=False)
    dimensions: int
    version: str
    cache: VectorCache = field(default_factory=VectorCache, repr=False)

    @property
    def name(self) -> str:
        return f"wordllama-{self.version}:l2_supercat_{self.dimensions}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.cache.vectors(texts, self._embed)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        try:
            rows: list[list[float]] = self.model.embed(texts).tolist()
        except Exception as exc:  # a local model's failure is the scanner's to withhold
            raise VerifierUnavailable(f"{self.name}: {exc}") from exc
        return rows


def load(argument: str = "") -> WordLlamaEmbedder:
    """Load the packaged model, truncated to ``argument`` dimensions if one is given.

    Raises:
        ConfigError: if wordllama is not installed, its files are missing, or the
            dimension is not one of 64, 128, 256.
    """
    dimensions = _dimensions(argument)
    try:
        import wordllama
    except ImportError as exc:
        raise ConfigError(
            f"the wordllama embedder needs its package: {install_hint('wordllama')}"
        ) from exc
    try:
        model = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent,
            disable_download=True,
            trunc_dim=dimensions if dimensions != 256 else None,
        )
    except (FileNotFoundError, ValueError) as exc:
        raise ConfigError(f"wordllama: cannot load its packaged model: {exc}") from exc
    return WordLlamaEmbedder(model, dimensions, metadata.version("wordllama"))


def _dimensions(argument: str) -> int:
    if not argument:
        return 256
    if argument.isdigit() and int(argument) in DIMENSIONS:
        return int(argument)
    raise ConfigError(f"wordllama:{shown(argument)}: the dimension must be one of {DIMENSIONS}")
