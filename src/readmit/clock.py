"""The only module that reads the clocks; everything else takes time as a parameter."""

import time
from datetime import UTC, datetime

from readmit.errors import InvalidEvent


def now() -> datetime:
    """Return the current time as a timezone-aware UTC datetime."""
    return datetime.now(UTC)


def elapsed() -> float:
    """Seconds on a monotonic clock, for measuring how long something took (not when)."""
    return time.monotonic()


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp; naive times are rejected.

    Raises:
        ValueError: if ``text`` is not an RFC 3339 time with a UTC offset, or its UTC
            time is before year 1 or after year 9999.
    """
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"time {text!r} has no UTC offset (write e.g. 2026-05-01T08:00:00Z)")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        # 0001-01-01T00:00+01:00 or 9999-12-31T23:59-01:00 has no UTC time
        raise ValueError(f"time {text!r} is outside the years 1 to 9999 in UTC") from None


def aware(at: datetime, event_id: str) -> datetime:
    """``at``, which event ``event_id`` is recorded at: it must have a time zone.

    Raises:
        InvalidEvent: if it has none (a time without a zone cannot be ordered).
    """
    if naive(at):
        problem = "its time has no time zone (give an aware one, e.g. datetime.now(UTC))"
        raise InvalidEvent(event_id, problem)
    return at


def naive(at: datetime) -> bool:
    """Whether ``at`` has no time zone (a library caller's ``datetime.now()``)."""
    return at.tzinfo is None or at.utcoffset() is None


def format_time(value: datetime) -> str:
    """Format ``value`` as RFC 3339 in UTC with a trailing ``Z``."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
