"""What ``readmit bench`` refuses in its options, each before any episode runs."""

import math
import os
import re
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


def out_folder(_ctx: click.Context, _param: click.Parameter, value: str) -> Path:
    """``--out``, unless it is empty (``Path("")`` is the folder the run is in)."""
    if not value:
        raise click.BadParameter("an empty path names no folder; give one, e.g. bench-results")
    return Path(value)


def writable(out: Path, names: tuple[str, ...]) -> None:
    """Refuse an ``--out`` the results could not be written into, before any episode runs.

    A folder not there yet is not made (it is, with the results): the folder it would be
    made in must be one that can be written.

    Raises:
        InvalidInput: naming ``--out`` and what is in the way.
    """
    try:
        there = out.is_dir()
        if not there:
            _can_make(out)
    except OSError as exc:  # a name too long for the file system
        raise InvalidInput(f"--out {out}: {exc.strerror or exc}") from None
    if not there:
        return
    if not os.access(out, os.W_OK | os.X_OK):
        raise InvalidInput(f"--out {out}: cannot write into it (permission denied)")
    for name in names:
        if (out / name).is_dir():
            raise InvalidInput(f"--out {out}: {name} there is a directory, not a file to write")
        if (out / name).exists() and not os.access(out / name, os.W_OK):
            raise InvalidInput(f"--out {out}: {name} there cannot be written (permission denied)")


def _can_make(out: Path) -> None:
    """Refuse an ``--out`` that is no folder and could not be made one.

    Raises:
        InvalidInput: naming ``--out`` and what is in the way.
    """
    if os.path.lexists(out):  # a file, or a link to none
        raise InvalidInput(f"--out {out}: it is there and is not a folder")
    above = out.absolute().parent
    while not os.path.lexists(above):
        above = above.parent
    if not above.is_dir():
        raise InvalidInput(f"--out {out}: {above} is not a folder to make it in")
    if not os.access(above, os.W_OK | os.X_OK):
        raise InvalidInput(f"--out {out}: cannot make it in {above} (permission denied)")


def team_sizes(text: str) -> tuple[int, ...]:
    """The team sizes of ``--team`` (positive integers in ASCII digits, comma-separated, each once).

    Python's ``int`` reads other scripts' digits too (``"٤"`` is 4): a size is ``[0-9]+``.
    """
    parts = [t.strip() for t in text.split(",") if t.strip()]
    if not parts or not all(re.fullmatch("[0-9]+", p) and 0 < int(p) <= 10_000 for p in parts):
        raise InvalidInput(
            f"--team {text!r}: write team sizes from 1 to 10000 in the digits 0-9, e.g. 4,8,16"
        )
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
