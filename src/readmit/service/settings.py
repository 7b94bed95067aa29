"""The operator's settings for a server: its policy file and its limits.

The policy is the operator's, never a returning agent's: ``readmit serve
--policy FILE`` reads a JSON or TOML object of policy settings (the names of
`Policy.with_overrides`, e.g. ``gamma``, ``view_ttl_seconds``) once at startup.
"""

import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Any

from readmit.errors import ConfigError, NotJson, TooDeep
from readmit.policy import Policy
from readmit.service.limits import Limits
from readmit.strict_json import MAX_DEPTH, loads, nests_deeper


def load_policy(path: str | Path | None) -> Policy:
    """The policy in ``path`` (JSON, or TOML if it ends in ``.toml``), or the default one.

    Raises:
        ConfigError: if the file cannot be read or holds an invalid policy.
    """
    if path is None:
        return Policy()
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        values = _toml(text) if path.endswith(".toml") else loads(text)
    except OSError as exc:  # said as every other file a command reads is
        raise ConfigError(f"cannot read policy file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"policy file {path}: not UTF-8 text") from None
    except TooDeep as exc:  # valid JSON or TOML, but no policy setting nests like that
        raise ConfigError(
            f"policy file {path} nests deeper than {exc.limit} levels: it is read no deeper"
        ) from None
    except ValueError as exc:  # a policy file is JSON, or TOML by its name
        kind = "TOML" if path.endswith(".toml") else "JSON (or TOML, named *.toml)"
        said = f"{exc.problem} (at character {exc.at})" if isinstance(exc, NotJson) else exc
        raise ConfigError(f"policy file {path}: not {kind}: {said}") from None
    if not isinstance(values, dict):
        raise ConfigError(f"policy file {path}: expected an object of policy settings")
    return Policy().with_overrides(values)


def _toml(text: str) -> Any:
    """``text`` parsed as TOML, nesting no deeper than JSON may (`MAX_DEPTH`).

    Raises:
        TooDeep: if it nests deeper, however deep (``tomllib`` recurses once a level).
        ValueError: if it is not TOML (``tomllib.TOMLDecodeError``).
    """
    try:
        values = tomllib.loads(text)
    except RecursionError:
        raise TooDeep(MAX_DEPTH) from None
    if nests_deeper(values):
        raise TooDeep(MAX_DEPTH)
    return values


_DEFAULT = Limits()


def limits_from_flags(
    *,
    max_body_bytes: int = _DEFAULT.max_body_bytes,
    max_events: int = _DEFAULT.max_events,
    max_text_chars: int = _DEFAULT.max_text_chars,
    rate: float = _DEFAULT.rate,
    burst: int = _DEFAULT.burst,
    event_rate: float = _DEFAULT.event_rate,
    byte_rate: float = _DEFAULT.byte_rate,
    refusal_pause: float = _DEFAULT.refusal_pause,
    concurrent_returns: int = _DEFAULT.concurrent_returns,
    clock_skew: float = _DEFAULT.clock_skew.total_seconds(),
    max_view_ttl: float = _DEFAULT.max_view_ttl.total_seconds(),
    max_labels: int = _DEFAULT.max_labels,
    max_open_obligations: int = _DEFAULT.max_open_obligations,
    shared_limits: bool = _DEFAULT.shared,
) -> Limits:
    """`Limits` from ``readmit serve``'s flags (durations in seconds).

    Raises:
        ConfigError: for a value out of range.
    """
    durations = {"clock_skew": clock_skew, "max_view_ttl": max_view_ttl}
    for name, seconds in durations.items():
        if not 0 <= seconds <= 366 * 86400:  # NaN fails too
            raise ConfigError(f"--{name.replace('_', '-')} must be 0 to 31622400 seconds")
    return Limits(
        max_body_bytes=max_body_bytes,
        max_events=max_events,
        max_text_chars=max_text_chars,
        rate=rate,
        burst=burst,
        event_rate=event_rate,
        byte_rate=byte_rate,
        refusal_pause=refusal_pause,
        concurrent_returns=concurrent_returns,
        clock_skew=timedelta(seconds=clock_skew),
        max_view_ttl=timedelta(seconds=max_view_ttl),
        max_labels=max_labels,
        max_open_obligations=max_open_obligations,
        shared=shared_limits,
    )
