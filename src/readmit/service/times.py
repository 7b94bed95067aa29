"""Which times (``at``) the service takes from a client, measured against its own clock.

A client may date what it records (events, memories, departures) in the past, as
long as the workspace's timeline stays in order, but never more than the allowed
skew ahead of the server's clock: one event dated in the year 9999 would
otherwise push the timeline there for everyone.

A return happens when the server handles it. Its ``at`` is only checked (a
client whose clock is off by more than the skew is told so) and the decision is
made at the server's time. A return can therefore never be dated in the past,
so an item that has expired by the server's clock is never admitted, and never
before the agent's own earlier departures and decisions, which were dated no
later than the server's clock allowed.

Differences are compared rather than times shifted by the skew, so dates at the
calendar's ends (year 1, year 9999) are refused with a message, never overflow.
"""

from datetime import UTC, datetime, timedelta

from readmit.clock import format_time, naive
from readmit.errors import ClockSkew, InvalidInput


def in_calendar(at: datetime | None, what: str) -> None:
    """Refuse a time without a zone, or whose UTC form falls outside years 1-9999.

    Raises:
        InvalidInput: if it has no zone, or falls outside (e.g. year 1 at +14:00).
    """
    if at is None:
        return
    if naive(at):
        raise InvalidInput(f"{what}: {at.isoformat()} has no time zone (e.g. datetime.now(UTC))")
    try:
        at.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"{what}: {at.isoformat()} is outside the calendar in UTC") from None


def not_ahead(at: datetime, server: datetime, skew: timedelta, what: str) -> datetime:
    """``at``, if it is at most ``skew`` ahead of the server's time.

    Raises:
        ClockSkew: if it lies further ahead.
        InvalidInput: if it is outside the calendar in UTC.
    """
    in_calendar(at, what)
    if at - server > skew:
        raise ClockSkew(
            f"{what}: at {format_time(at)} is more than {skew} ahead of the server's "
            f"clock ({format_time(server)})"
        )
    return at


def return_time(at: datetime | None, server: datetime, skew: timedelta) -> datetime:
    """The time a return is decided at: the server's, once a client's ``at`` agrees with it.

    Raises:
        ClockSkew: if ``at`` is more than ``skew`` from the server's time either way.
        InvalidInput: if it is outside the calendar in UTC.
    """
    in_calendar(at, "return")
    if at is not None and abs(at - server) > skew:
        raise ClockSkew(
            f"return: at {format_time(at)} is more than {skew} from the server's clock "
            f"({format_time(server)}); a return is decided at the server's time"
        )
    return server
