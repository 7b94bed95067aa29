"""The field types every edge shares: names, free text and times, each checked one way.

A `Name` is an id or a name as a store, a terminal and a log line can take it; a
`Text` is free text; an `Instant` is an RFC 3339 time with its offset. Event
models (`readmit.wire.edge`) and the service's request bodies use these, and
`check_name` / `check_text` apply them to values that arrive outside a model (CLI
arguments, MCP tool arguments).
"""

import re
import unicodedata
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BeforeValidator,
    Field,
    TypeAdapter,
    ValidationError,
)

from readmit.clock import RFC3339, in_utc
from readmit.errors import InvalidInput
from readmit.model import blank

_NAME_CONTROL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u034f\u115f\u1160\u17b4\u17b5\u3164\ufe00-\ufe0e\uffa0"
    r"\U000e0100-\U000e01ef\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]"
)
"""Control characters; invisible ones that are no format character (`_HIDDEN` has those):
the grapheme joiner, Hangul and Khmer fillers, variation selectors but the emoji one
(U+FE0F, common in names typed on phones); and every space but the ASCII one, which
would make ``a\u00a0b`` read as ``a b``."""
_HIDDEN = frozenset({"Cf", "Zl", "Zp"})
"""Unicode categories of the invisible characters that make a name read as another:
format characters (zero-width spaces and joiners, soft hyphens, tags, the marks and
overrides of bidirectional text: ``a\u202eb`` shows as ``ab`` reversed) and line and
paragraph separators."""


def says_nothing(text: str) -> bool:
    """Whether ``text`` shows nothing: blank, or only invisible characters.

    Those a name refuses as invisible (`_NAME_CONTROL`, `_HIDDEN`), and the emoji variation
    selector and the blank Braille pattern alone: a lone U+202E or a zero-width space reads
    as empty yet is not blank. For what is written (`readmit.wire.domain`, before the store
    takes an event or memory): what is read back is checked only for blankness, as it
    always was, so an older store still reads.
    """
    if blank(text):
        return True
    return not text.isascii() and all(map(_unseen, text))


def _unseen(char: str) -> bool:
    return (
        char.isspace()
        or char in "\ufe0f\u2800"
        or unicodedata.category(char) in _HIDDEN
        or _NAME_CONTROL.match(char) is not None
    )


_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_TEXT_LIMIT = 100_000


def _refuse(
    pattern: re.Pattern[str], allowed: str, hidden: frozenset[str] = frozenset()
) -> Callable[[str], str]:
    """A validator refusing characters no store, terminal or log line should receive.

    Those ``pattern`` matches, and those of the Unicode categories ``hidden``.
    """

    def check(value: str) -> str:
        found = pattern.search(value)
        char = None if found is None else found.group()
        if char is None and hidden and not value.isascii():
            char = next((c for c in value if unicodedata.category(c) in hidden), None)
        if char is not None:
            raise ValueError(f"may not contain U+{ord(char):04X} ({allowed})")
        return value

    return check


_NAME_CHARS = _refuse(
    _NAME_CONTROL, "no control or invisible formatting characters in a name or id", _HIDDEN
)


def name_characters(value: str) -> bool:
    """Whether ``value`` holds no character a name or id refuses (control or invisible)."""
    try:
        _NAME_CHARS(value)
    except ValueError:
        return False
    return True


def name_shape(value: object) -> object:
    """A name's characters and ends, checked before its pattern says the same less plainly.

    A name with a space at either end is told so, not that it fails the name pattern.
    """
    if isinstance(value, str) and value:
        _NAME_CHARS(value)
        if value[0].isspace() or value[-1].isspace():
            raise ValueError("may not start or end with a space")
    return value


Name = Annotated[
    str,
    Field(min_length=1, max_length=200, pattern=r"^\S(.*\S)?$"),
    BeforeValidator(name_shape),
]
"""An id or name: no surrounding whitespace, no control characters (NUL breaks PostgreSQL)
and no invisible ones (`_NAME_CONTROL`)."""

Text = Annotated[
    str,
    Field(min_length=1, max_length=_TEXT_LIMIT),
    AfterValidator(
        _refuse(_TEXT_CONTROL, "text allows tab and newline, no other control character")
    ),
]
"""Free text: tab and newline allowed, no other control character."""

Wild = Literal["*"]
"""The wildcard: any principal, role or purpose."""

_NAME: TypeAdapter[str] = TypeAdapter(Name)
_TEXT: TypeAdapter[str] = TypeAdapter(Text)


plain_name = re.compile(r"[!-~](?:[ -~]{0,198}[!-~])?").fullmatch
"""Whether a string is a `Name` in printable ASCII: the common case, told in one match (a
false answer leaves it to `check_name`; a value that is no string raises `TypeError`)."""


def plain_text(value: str) -> bool:
    """Whether ``value`` is a `Text` (``False`` leaves the exact answer to `check_text`)."""
    return 0 < len(value) <= _TEXT_LIMIT and not _TEXT_CONTROL.search(value)


def check_name(value: object, what: str) -> str:
    """Validate ``value`` as a `Name` outside a pydantic model.

    For CLI arguments, MCP tool arguments and values built in Python (`readmit.wire.domain`).

    Raises:
        InvalidInput: naming ``what`` and the problem.
    """
    if type(value) is str and plain_name(value) is not None:
        return value
    try:
        return _NAME.validate_python(value)
    except ValidationError as exc:
        raise InvalidInput(f"{what}: {plain(exc.errors()[0]['msg'])}") from None


def check_returning(
    task: str | None, purpose: str | None, what: tuple[str, str] = ("task", "purpose")
) -> tuple[str, str] | None:
    """What an agent says it returns to: both names, validated, or neither (``None``).

    Raises:
        InvalidInput: if only one is given, or one is not a `Name` (``what`` names them).
    """
    if task is None or purpose is None:
        if task is not None or purpose is not None:
            raise InvalidInput(f"give {what[0]} and {what[1]} together, or neither")
        return None
    return check_name(task, what[0]), check_name(purpose, what[1])


def check_text(value: object, what: str) -> str:
    """Validate ``value`` as a `Text` outside a pydantic model.

    Raises:
        InvalidInput: naming ``what`` and the problem.
    """
    if type(value) is str and plain_text(value):
        return value
    try:
        return _TEXT.validate_python(value)
    except ValidationError as exc:
        raise InvalidInput(f"{what}: {plain(exc.errors()[0]['msg'])}") from None


def plain(message: str) -> str:
    """A validator's message without pydantic's ``Value error, `` prefix."""
    return message.removeprefix("Value error, ")


def _rfc3339(value: object) -> object:
    """Only an RFC 3339 time with its offset (a number is not read as a Unix time)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or RFC3339.fullmatch(value) is None:
        raise ValueError("must be an RFC 3339 time with an offset, e.g. 2026-05-01T08:00:00Z")
    return value


def _in_calendar(value: datetime) -> datetime:
    in_utc(value)
    return value


Instant = Annotated[
    AwareDatetime,
    Field(strict=False),
    BeforeValidator(_rfc3339),
    AfterValidator(_in_calendar),
]
"""An RFC 3339 time with a UTC offset whose UTC form is a real date (not year 1 at +14:00)."""
