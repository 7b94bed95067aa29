"""Entry-point discovery: verifiers, embedders and dependency scans are found the same way.

Each kind has its group (``readmit.verifiers``, ``readmit.embedders``,
``readmit.dependency_scans``); the built-ins are registered in our own
``pyproject.toml`` exactly as a third-party package registers its own. A spec is
``NAME`` or ``NAME:ARGUMENT``; the entry point is called with the argument (or with
nothing when there is none), and with the settings too when it takes a second
parameter (the CLI passes the environment, for keys such as
``READMIT_VERIFIER_API_KEY``).
"""

import inspect
from collections.abc import Mapping
from difflib import get_close_matches
from importlib.metadata import entry_points
from typing import Any

from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verifier
from readmit.canonical import UNSTORABLE
from readmit.errors import ConfigError, install_hint
from readmit.urls import shown

VERIFIER_GROUP = "readmit.verifiers"
EMBEDDER_GROUP = "readmit.embedders"
SCAN_GROUP = "readmit.dependency_scans"
_EXTRAS = {"httpx": "openai", "xllamacpp": "gguf", "wordllama": "wordllama"}
"""The extra that installs each library a plugin may import when it is loaded."""


def names(group: str) -> list[str]:
    """Names of every installed entry point of ``group``."""
    return sorted({ep.name for ep in entry_points(group=group)})


def verifier_names() -> list[str]:
    """Names of every installed verifier."""
    return names(VERIFIER_GROUP)


def embedder_names() -> list[str]:
    """Names of every installed embedder."""
    return names(EMBEDDER_GROUP)


def make_verifier(spec: str, settings: Mapping[str, str] | None = None) -> Verifier:
    """Build the verifier a spec names: ``builtin``, ``openai-compat:MODEL@URL``, ``chain:A,B``.

    Raises:
        ConfigError: if no installed verifier has that name, or it rejects the argument.
    """
    verifier: Verifier = _make(VERIFIER_GROUP, "verifier", spec, settings)
    return verifier


def make_embedder(spec: str, settings: Mapping[str, str] | None = None) -> Embedder:
    """Build the embedder a spec names: ``wordllama[:DIM]``, ``openai-compat:M@URL``, ``gguf:PATH``.

    Raises:
        ConfigError: if no installed embedder has that name, or it rejects the argument.
    """
    embedder: Embedder = _make(EMBEDDER_GROUP, "embedder", spec, settings)
    return embedder


def make_dependency_scan(spec: str, settings: Mapping[str, str] | None = None) -> DependencyScan:
    """Build the dependency scan a spec names: ``openai-compat:MODEL@URL``.

    Raises:
        ConfigError: if no installed scan has that name, or it rejects the argument.
    """
    scan: DependencyScan = _make(SCAN_GROUP, "dependency scan", spec, settings)
    return scan


def _make(group: str, what: str, spec: str, settings: Mapping[str, str] | None) -> Any:
    if UNSTORABLE.search(spec):  # its name keys stored rows: each return then failed (a review)
        raise ConfigError(
            f"{what} {shown(spec)!r} holds a NUL or a lone surrogate (a byte not UTF-8)"
        )
    name, _, argument = spec.partition(":")
    found = [ep for ep in entry_points(group=group) if ep.name == name]
    if not found:
        close = get_close_matches(name, names(group), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        known = ", ".join(names(group)) or "none"
        raise ConfigError(f"unknown {what} {shown(spec)!r} ({hint}installed: {known})")
    try:
        factory = found[0].load()
    except ImportError as exc:  # a library of an extra that is not installed
        raise _missing(what, name, exc) from exc
    try:
        if len(inspect.signature(factory).parameters) >= 2:
            return factory(argument, settings or {})
        return factory(argument) if argument else factory()
    except TypeError as exc:
        raise ConfigError(
            f"{what} {name!r} does not take the argument {shown(argument)!r}"
        ) from exc
    except ImportError as exc:  # imported as it is made (gguf: the HTTP client it serves)
        raise _missing(what, name, exc) from exc


def _missing(what: str, name: str, exc: ImportError) -> ConfigError:
    """The error naming the extra that installs what plugin ``name`` failed to import."""
    missing = exc.name or "a library"
    extra = name if name in _EXTRAS.values() else _EXTRAS.get(missing)
    hint = install_hint(extra) if extra else f"pip install {missing}"
    return ConfigError(f"{what} {name!r} needs {missing}: {hint}")
