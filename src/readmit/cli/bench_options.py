"""What ``readmit bench`` refuses in its options, each before any episode runs."""

import math
import os
from collections.abc import Sequence
from pathlib import Path

import click
from click.core import ParameterSource

from readmit.errors import ConfigError, InvalidInput


def not_nan(_ctx: click.Context, _param: click.Parameter, value: float | None) -> float | None:
    """``--threshold``, unless it is nan (click's range lets nan through, the run refused it)."""
    if value is not None and math.isnan(value):
        raise click.BadParameter("nan is not a number from 0 to 1")
    return value


def writable(out: Path, names: tuple[str, ...]) -> None:
    """Refuse an ``--out`` the results could not be written into, before any episode runs.

    Raises:
        InvalidInput: naming ``--out`` and what is in the way.
    """
    if not os.access(out, os.W_OK | os.X_OK):
        raise InvalidInput(f"--out {out}: cannot write into it (permission denied)")
    for name in names:
        if (out / name).is_dir():
            raise InvalidInput(f"--out {out}: {name} there is a directory, not a file to write")
        if (out / name).exists() and not os.access(out / name, os.W_OK):
            raise InvalidInput(f"--out {out}: {name} there cannot be written (permission denied)")


def team_sizes(text: str) -> tuple[int, ...]:
    """The team sizes of ``--team`` (positive integers, comma-separated, each once)."""
    parts = [t.strip() for t in text.split(",") if t.strip()]
    if not parts or not all(p.isdecimal() and 0 < int(p) <= 10_000 for p in parts):
        raise InvalidInput(f"--team {text!r}: write team sizes from 1 to 10000, e.g. 4,8,16")
    sizes = tuple(int(p) for p in parts)
    given_once("--team", [str(n) for n in sizes])
    return sizes


def given_once(option: str, values: Sequence[str], keys: Sequence[object] = ()) -> None:
    """Refuse a value given twice, or of the same ``keys``: it would run, and count, twice.

    Raises:
        ConfigError: naming the option and the value.
    """
    keys = keys or values
    twice = next((k for k in range(len(keys)) if keys[k] in keys[:k]), None)
    if twice is not None:
        raise ConfigError(f"{option} {values[twice]} is given twice; give each once")


def backend_only(ctx: click.Context) -> None:
    """Refuse options the portability study does not use: it runs TRACE and answers no probe.

    ``--llm`` from the environment is no choice made for this run, and is not refused.

    Raises:
        ConfigError: naming them.
    """
    options = {"method_names": "--method", "threshold": "--threshold", "llm": "--llm"}
    source = ctx.get_parameter_source
    given = [o for p, o in options.items() if source(p) is ParameterSource.COMMANDLINE]
    if given:
        raise ConfigError(
            f"{', '.join(given)}: not used with --backend (the portability study runs TRACE "
            "at each suite's threshold through each backend and answers no probe); drop it"
        )
