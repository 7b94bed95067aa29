"""The only module that reads the clocks; everything else takes time as a parameter."""

import re
import time
from datetime import UTC, datetime

from readmit.errors import InvalidEvent


def now() -> datetime:
    """Return the current time as a timezone-aware UTC datetime."""
    return datetime.now(UTC)


def elapsed() -> float:
    """Seconds on a monotonic clock, for measuring how long something took (not when)."""
    return time.monotonic()


RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)",
    re.ASCII,
)
"""An RFC 3339 time with its offset (seconds may be left out): not the other ISO 8601
forms Python reads, such as week dates (``2026-W22-2``) or days of the year, nor an offset
of 60 minutes or more (Python reads ``+00:60`` as an hour; a review)."""


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp; naive times are rejected.

    Raises:
        ValueError: if ``text`` is not an RFC 3339 time with a UTC offset, or its UTC
            time is before year 1 or after year 9999.
    """
    if RFC3339.fullmatch(text) is None:
        raise ValueError(f"time {text!r} is not an RFC 3339 time with an offset")
    value = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1] in "Zz" else text)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        # 0001-01-01T00:00+01:00 or 9999-12-31T23:59-01:00 has no UTC time
        raise ValueError(f"time {text!r} is outside the years 1 to 9999 in UTC") from None


def aware(at: object, event_id: str) -> datetime:
    """``at``, which event ``event_id`` is recorded at: it must have a time zone.

    Raises:
        InvalidEvent: if it has none (a time without a zone cannot be ordered), or it is
            not a ``datetime`` (a string from a library caller).
    """
    if not isinstance(at, datetime):
        problem = f"at: give a datetime with a time zone, not {type(at).__name__} {at!r}"[:200]
        raise InvalidEvent(event_id, problem, fields=("at",))
    if naive(at):
        problem = "its time has no time zone (give an aware one, e.g. datetime.now(UTC))"
        raise InvalidEvent(event_id, problem, fields=("at",))
    return at


def in_utc(at: datetime) -> datetime:
    """``at`` in UTC, the form readmit stores and signs times in.

    Raises:
        ValueError: if it has none in years 1 to 9999 (``9999-12-31T23:00-14:00``).
    """
    try:
        return at.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time is outside the years 1 to 9999 in UTC") from None


def in_calendar(at: datetime, event_id: str) -> datetime:
    """``at``, an aware time recorded for ``event_id``, if it has a UTC form (`in_utc`).

    Raises:
        InvalidEvent: if it has none.
    """
    try:
        in_utc(at)
    except ValueError as exc:
        raise InvalidEvent(event_id, str(exc), fields=("at",)) from None
    return at


def naive(at: datetime) -> bool:
    """Whether ``at`` has no time zone (a library caller's ``datetime.now()``)."""
    return at.tzinfo is None or at.utcoffset() is None


def format_time(value: datetime) -> str:
    """Format ``value`` as RFC 3339 in UTC with a trailing ``Z``."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
