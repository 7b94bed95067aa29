"""Strict JSON parsing for input that comes from outside (CLI files, HTTP bodies).

`json.loads` accepts things a signed document must never contain: a repeated
object key (the last one wins, so a reader and a verifier can see different
documents), `NaN` and `Infinity`, numbers so long that `int()` refuses them
with a bare `ValueError`, nesting deep enough to exhaust the stack, and text
that is not UTF-8. `loads` refuses each of these with `InvalidInput` and a
message that says which, so no caller ever sees a traceback for bad input.
"""

import json
import math
from typing import Any

from readmit.errors import InvalidInput, LongNumber, NotJson, RepeatedKey, TooDeep

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted (no readmit document nests past ~6)."""

MAX_NUMBER_CHARS = 100
"""Longest number literal accepted, in every JSON readmit reads from outside: files, every
HTTP body (`readmit.service.strict_route`), ``/v1/verify``'s and MCP's views. Well above any
timestamp, budget, epoch or coverage a view or request holds, and far below
Python's own limit (``sys.get_int_max_str_digits()``, 4,300 digits unless an operator
changes it, and none at 0), so ``int()`` never refuses, nor spends quadratic time on, a
number this lets through, whatever the interpreter is set to."""


def loads(data: str | bytes) -> Any:
    """Parse one JSON document, refusing anything ambiguous or unbounded.

    Args:
        data: The document, as text or as UTF-8 bytes.

    Returns:
        The parsed value (dicts, lists, str, int, float, bool, None).

    Raises:
        NotJson: The input is not JSON at all (an `InvalidInput`).
        RepeatedKey: An object names one key twice (an `InvalidInput`).
        LongNumber: A number is longer than `MAX_NUMBER_CHARS` (an `InvalidInput`).
        TooDeep: It nests deeper than `MAX_DEPTH` (an `InvalidInput`).
        InvalidInput: The input is not UTF-8, has a non-finite number, or a string with a
            lone surrogate.
    """
    text = utf8(data)
    try:
        value = parse(text)
    except json.JSONDecodeError as e:
        raise NotJson(e) from None
    except RecursionError:
        raise TooDeep(MAX_DEPTH) from None
    _check_tree(value)
    return value


def parse(text: str) -> Any:
    """``json.loads`` with the hooks every JSON readmit reads from outside is read with.

    They refuse, as they read, a repeated key (`RepeatedKey`), a number longer than
    `MAX_NUMBER_CHARS` (`LongNumber`), ``NaN``, ``Infinity`` and a number out of range
    (`InvalidInput`); the rest is ``json.loads``' to refuse.
    """
    return json.loads(
        text,
        object_pairs_hook=unique_keys,
        parse_constant=_no_constant,
        parse_int=bounded_int,
        parse_float=_finite_float,
    )


def load_at(text: str, at: int, depth: int = 0) -> tuple[Any, int]:
    """The one JSON value that starts at ``text[at]``, read as `loads` reads, and where it ends.

    For a reader that parses a document's parts one by one: ``depth`` is how deep the value
    sits in its document, so `MAX_DEPTH` counts from the document's top, as `loads` counts.
    What follows the value is the caller's to read.

    Raises:
        NotJson: No JSON value starts at ``at``, or it is cut short.
        RepeatedKey, LongNumber, TooDeep, InvalidInput: as `loads`.
    """
    try:
        value, end = _DECODER.raw_decode(text, at)
    except json.JSONDecodeError as e:
        raise NotJson(e) from None
    except RecursionError:
        raise TooDeep(MAX_DEPTH) from None
    _check_tree(value, depth)
    return value, end


def utf8(data: str | bytes) -> str:
    """``data`` as text: UTF-8 bytes, with no byte order mark (`InvalidInput` saying why)."""
    try:
        text = data if isinstance(data, str) else data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidInput(f"not valid UTF-8 at byte {e.start}") from None
    if text.startswith("\ufeff"):  # Python's own word for it advises the server's code
        raise InvalidInput("it starts with a byte order mark: send UTF-8 JSON without one")
    return text


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` that refuses a repeated key (`RepeatedKey`)."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise RepeatedKey(key)
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise InvalidInput(f"JSON may not contain {name}")


def bounded_int(literal: str) -> int:
    """``json.loads``' ``parse_int``: the integer, or `LongNumber` past `MAX_NUMBER_CHARS`."""
    _check_length(literal)
    return int(literal)


def _finite_float(literal: str) -> float:
    """``json.loads``' ``parse_float``: the float, refusing a long or out-of-range one.

    `LongNumber` past `MAX_NUMBER_CHARS`; `InvalidInput` out of range (``1e400``).
    """
    _check_length(literal)
    value = float(literal)
    if not math.isfinite(value):
        raise InvalidInput(f"JSON number {literal!r} is out of range")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=unique_keys,
    parse_constant=_no_constant,
    parse_int=bounded_int,
    parse_float=_finite_float,
)
"""`parse`'s decoder, for `load_at` (``raw_decode`` reads one value where it starts)."""


def _check_length(literal: str) -> None:
    if len(literal) > MAX_NUMBER_CHARS:
        raise LongNumber(MAX_NUMBER_CHARS)


def nests_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether parsed JSON ``value`` nests arrays and objects more than ``limit`` levels deep.

    Measured without recursion, so a value of any depth the parser built can be told.
    """
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        container, level = todo.pop()
        if not isinstance(container, dict | list):
            continue
        if level > limit:
            return True
        children = container.values() if isinstance(container, dict) else container
        todo.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return False


def _check_tree(value: Any, depth: int = 0) -> None:
    """Refuse nesting past `MAX_DEPTH` and strings that cannot be written as UTF-8."""
    if isinstance(value, str):
        _check_text(value)
        return
    if not isinstance(value, dict | list):
        return
    if depth >= MAX_DEPTH:
        raise TooDeep(MAX_DEPTH)
    if isinstance(value, dict):
        for key in value:
            _check_text(key)
        value = list(value.values())
    for child in value:
        _check_tree(child, depth + 1)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("JSON string contains a lone surrogate (\\ud800-\\udfff)") from None
