"""Rows a loader skipped: one malformed row of benchmark data is counted, never fatal.

The ManBench loader keeps its own record (a task, its file and an ``idx``); the file loaders
(STALE, Memora) name the file and where in it the row is. A loader's `Plan` holds them with
the episodes it would make. `label` makes a folder's name one an episode's workspace may carry.
"""

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from readmit.bench.episode import Planned
from readmit.errors import InvalidInput
from readmit.wire.fields import check_name, plain

LABEL_CHARS = 150
"""The longest `label`: a workspace name (a `Name`, 200 at most) holds it and a few more."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedRow:
    """A row of a data file that could not make (its part of) an episode."""

    file: Path
    row: str
    """Where in the file: ``record 3``, ``conversation[7]``; empty for the whole file."""
    reason: str

    def __str__(self) -> str:
        where = f"{self.file} {self.row}" if self.row else str(self.file)
        return f"{where}: {self.reason}"


Skipped = TypeVar("Skipped")


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan(Generic[Skipped]):
    """What a loader found: the episodes it would make (unbuilt), and the rows it did not use."""

    episodes: list[Planned]
    skipped: tuple[Skipped, ...]
    """Malformed rows."""
    left_out: tuple[SkippedRow, ...] = ()
    """Well-formed rows of a kind the suite does not run (STALE: not Type I)."""
    files: dict[str, Path] = field(default_factory=dict)
    """Episode id → the file it was made of (to name it if the episode fails later)."""


def shape(value: Any) -> str:
    """What JSON ``value`` is, in a file's words: ``an object``, ``a list``, ``null``..."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else "a number"


def problem(exc: ValidationError, whole: str = "") -> str:
    """The first problem pydantic found in a row, as ``field: message``.

    A problem with the row itself (not an object) is ``whole: message``, or the message alone.
    """
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"]) or whole
    message = plain(str(error["msg"]))
    if error["type"] == "model_type":  # not "... or instance of _Turn": a file has no classes
        message = "Input should be a valid dictionary"
    return f"{field}: {message}" if field else message


def label(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` as part of a name: itself if a `Name` may hold it, else a safe, distinct form.

    Folder names become workspace and principal names; one with a control or invisible
    character, a space at an end or too long would stop the run when its history is
    replayed. Then all but ``[A-Za-z0-9._-]`` becomes ``_``, the rest is cut to fit, and a
    digest of ``text`` keeps two such names apart. An empty ``text`` is its digest alone.
    """
    if 0 < len(text) <= limit:
        try:
            return check_name(text, "name")
        except InvalidInput:
            pass
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    kept = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[: limit - len(digest) - 1]
    return f"{kept}~{digest}" if kept else digest
