"""Benchmark data files read strictly row by row: one refused row is that row's problem alone.

`readmit.strict_json` refuses a whole document for a repeated key, a number of more than
`~readmit.strict_json.MAX_NUMBER_CHARS` characters, nesting past
`~readmit.strict_json.MAX_DEPTH` or a lone surrogate. In a data file that refused every row
with the one that had it. `load` reads the document's outer structure itself and each row
of its lists of rows on its own, as strictly: a row refused is a `Refused` in its place,
saying why, and its loader counts it as a malformed row. A file that is not JSON (or not
UTF-8), or whose outer structure is refused, is still refused whole. The text is read once,
as `readmit.strict_json.loads` reads it; a refused row once more, to find where it ends.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

from readmit import strict_json
from readmit.errors import InvalidInput, NotJson, RepeatedKey, TooDeep

EACH = "*"
"""In a path of `load`: every member of the object there."""

_SPACE = re.compile(r"[ \t\n\r]*")
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]+|[\]}]+', re.DOTALL)
"""A string, or a run of opening or of closing brackets: where a row too deep to parse ends."""


def _ignored(_value: Any) -> None:
    return None


_SKIMMER = json.JSONDecoder(
    object_pairs_hook=_ignored, parse_int=_ignored, parse_float=_ignored, parse_constant=_ignored
)
"""Finds where a refused row ends, accepting what strict reading refused, building nothing."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A row of a list of rows that strict JSON refused, in its place: why."""

    reason: str


def load(data: str | bytes, rows_at: tuple[str, ...]) -> Any:
    """The JSON document ``data``, each row of its lists of rows read strictly on its own.

    ``rows_at``: the object keys from the top to the lists of rows (`EACH` for every member);
    ``()`` if the document is itself the list. A row strict JSON refuses is a `Refused`; a
    list of rows that is not a list is read whole, for the loader to refuse.

    Raises:
        InvalidInput: (`NotJson`, `RepeatedKey`, ...) if the file is not UTF-8 JSON, or its
            outer structure (not a row) is refused.
    """
    text = strict_json.utf8(data)
    value, end = _value(text, _space(text, 0), rows_at, 0)
    end = _space(text, end)
    if end != len(text):
        raise NotJson(json.JSONDecodeError("Extra data", text, end))
    return value


def _space(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _value(text: str, at: int, path: tuple[str, ...], depth: int) -> tuple[Any, int]:
    """The value at ``at`` and where it ends: rows read one by one at the end of ``path``."""
    opener = "{" if path else "["
    if not text.startswith(opener, at):
        return strict_json.load_at(text, at, depth)
    if depth >= strict_json.MAX_DEPTH:
        raise TooDeep(strict_json.MAX_DEPTH)
    return _object(text, at, path, depth) if path else _rows(text, at, depth)


def _object(text: str, at: int, path: tuple[str, ...], depth: int) -> tuple[Any, int]:
    """The object at ``at`` (its ``{``) and where it ends; the members on ``path`` descend."""
    members: dict[str, Any] = {}
    at = _space(text, at + 1)
    if text.startswith("}", at):
        return members, at + 1
    while True:
        if not text.startswith('"', at):
            raise NotJson(
                json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
            )
        key, at = strict_json.load_at(text, at, depth + 1)
        at = _space(text, at)
        if not text.startswith(":", at):
            raise NotJson(json.JSONDecodeError("Expecting ':' delimiter", text, at))
        at = _space(text, at + 1)
        if path[0] in (EACH, key):
            value, at = _value(text, at, path[1:], depth + 1)
        else:
            value, at = strict_json.load_at(text, at, depth + 1)
        if key in members:
            raise RepeatedKey(key)
        members[key] = value
        at = _space(text, at)
        if text.startswith("}", at):
            return members, at + 1
        at = _space(text, _delimiter(text, at))


def _rows(text: str, at: int, depth: int) -> tuple[list[Any], int]:
    """The list of rows at ``at`` (its ``[``) and where it ends; a refused row is `Refused`."""
    rows: list[Any] = []
    at = _space(text, at + 1)
    if text.startswith("]", at):
        return rows, at + 1
    while True:
        try:
            row, at = strict_json.load_at(text, at, depth + 1)
        except NotJson:
            raise
        except InvalidInput as exc:
            row, at = Refused(str(exc)), _end(text, at)
        rows.append(row)
        at = _space(text, at)
        if text.startswith("]", at):
            return rows, at + 1
        at = _space(text, _delimiter(text, at))


def _delimiter(text: str, at: int) -> int:
    """Past the ``,`` at ``at``, between two members or rows."""
    if not text.startswith(",", at):
        raise NotJson(json.JSONDecodeError("Expecting ',' delimiter", text, at))
    return at + 1


def _end(text: str, at: int) -> int:
    """Where the row at ``at``, refused by strict reading, ends.

    Raises:
        NotJson: if it is not JSON at all (then the file is not).
    """
    try:
        return _SKIMMER.raw_decode(text, at)[1]
    except json.JSONDecodeError as e:
        raise NotJson(e) from None
    except RecursionError:  # deeper than the parser goes: match its brackets
        level = 0
        for token in _TOKEN.finditer(text, at):
            run = token.group()
            if run[0] in "[{":
                level += len(run)
            elif run[0] != '"':
                if level <= len(run):
                    return token.start() + level
                level -= len(run)
        raise NotJson(json.JSONDecodeError("Expecting value", text, len(text))) from None
