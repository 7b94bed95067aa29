"""Entry-point discovery for verifiers (group ``readmit.verifiers``), and embedders by spec.

Built-ins are registered the same way in our own ``pyproject.toml``. A spec is
``NAME`` or ``NAME:ARGUMENT``; the entry point is called with the argument, or
with nothing when there is none.
"""

import inspect
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path

from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verifier
from readmit.errors import ConfigError

VERIFIER_GROUP = "readmit.verifiers"


def verifier_names() -> list[str]:
    """Names of every installed verifier."""
    return sorted({ep.name for ep in entry_points(group=VERIFIER_GROUP)})


def make_verifier(spec: str, settings: Mapping[str, str] | None = None) -> Verifier:
    """Build the verifier a spec names: ``builtin``, ``openai-compat:MODEL@URL``, ``chain:A,B``.

    ``settings`` (the CLI passes the environment) reach factories that take a
    second argument, for secrets such as ``READMIT_VERIFIER_API_KEY``.

    Raises:
        ConfigError: if no installed verifier has that name, or it rejects the argument.
    """
    name, _, argument = spec.partition(":")
    found = [ep for ep in entry_points(group=VERIFIER_GROUP) if ep.name == name]
    if not found:
        known = ", ".join(verifier_names()) or "none"
        raise ConfigError(f"unknown verifier {name!r} (installed: {known})")
    factory = found[0].load()
    takes_settings = len(inspect.signature(factory).parameters) >= 2
    try:
        if takes_settings:
            verifier: Verifier = factory(argument, settings or {})
        else:
            verifier = factory(argument) if argument else factory()
    except TypeError as exc:
        raise ConfigError(f"verifier {name!r} does not take the argument {argument!r}") from exc
    return verifier


def make_embedder(spec: str, settings: Mapping[str, str] | None = None) -> Embedder:
    """Build the embedder a spec names: ``wordllama[:DIM]``, ``openai-compat:M@URL``, ``gguf:PATH``.

    Raises:
        ConfigError: for an unknown kind or a malformed argument.
    """
    kind, _, argument = spec.partition(":")
    if kind == "wordllama":
        from readmit.verifiers import wordllama_embedder

        return wordllama_embedder.load(argument)
    if kind not in ("openai-compat", "gguf"):
        known = "wordllama[:DIM], openai-compat:MODEL@URL, gguf:PATH"
        raise ConfigError(f"unknown embedder {spec!r} (known: {known})")
    from readmit.verifiers.embedders import API_KEY_ENV, OpenAICompatEmbedder
    from readmit.verifiers.gguf import serve
    from readmit.verifiers.openai_compat import endpoint

    if kind == "openai-compat":
        model, url = endpoint(argument, "openai-compat:")
        return OpenAICompatEmbedder(
            model=model, base_url=url, api_key=(settings or {}).get(API_KEY_ENV)
        )
    server, label = serve(argument, embedding=True)
    return OpenAICompatEmbedder(
        model=Path(argument).stem, base_url=server.base_url, keepalive=server, label=label
    )


def make_dependency_scan(spec: str, settings: Mapping[str, str] | None = None) -> DependencyScan:
    """Build the dependency scan a spec names: ``openai-compat:MODEL@URL``.

    ``settings`` may hold ``READMIT_VERIFIER_API_KEY`` for the endpoint.

    Raises:
        ConfigError: for an unknown kind or a malformed argument.
    """
    kind, _, argument = spec.partition(":")
    if kind != "openai-compat":
        raise ConfigError(f"unknown dependency scan {spec!r} (known: openai-compat:MODEL@URL)")
    from readmit.verifiers.llm_scan import factory

    return factory(argument, settings)
