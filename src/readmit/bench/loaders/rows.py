"""Rows a loader skipped: one malformed row of benchmark data is counted, never fatal.

The ManBench loader keeps its own record (a task, its file and an ``idx``); the file loaders
(STALE, Memora) name the file and where in it the row is.
"""

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from readmit.wire.fields import plain


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
