"""Entry-point discovery for verifiers (group ``readmit.verifiers``).

Built-ins are registered the same way in our own ``pyproject.toml``. A spec is
``NAME`` or ``NAME:ARGUMENT``; the entry point is called with the argument, or
with nothing when there is none.
"""

import inspect
from collections.abc import Mapping
from importlib.metadata import entry_points

from readmit.admission.invalidation.implicit import Verifier
from readmit.errors import ConfigError

VERIFIER_GROUP = "readmit.verifiers"


def verifier_names() -> list[str]:
    """Names of every installed verifier."""
    return sorted({ep.name for ep in entry_points(group=VERIFIER_GROUP)})


def make_verifier(spec: str, settings: Mapping[str, str] | None = None) -> Verifier:
    """Build the verifier a spec names, e.g. ``builtin`` or ``openai-compat:MODEL@URL``.

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
