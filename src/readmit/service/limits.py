"""What one agent may ask of the service: sizes, rate, concurrent returns, clock skew, view TTL.

The operator sets these when starting the server (``readmit serve --max-body-bytes …``);
each refusal is a `ReadmitError` (defined in `readmit.errors`) with its own stable
code, so clients can tell "slow down" (429, ``Retry-After``) from "this will never be
accepted" (413, 422).
"""

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import ClassVar

from readmit.errors import (
    Abandoned,
    ClockSkew,
    ConfigError,
    InvalidInput,
    PayloadTooLarge,
    PolicyNotAccepted,
    RateLimited,
)
from readmit.wire.edge import path_part

# The refusals' classes live in `readmit.errors`; re-exported here for older imports.
__all__ = [
    "Abandoned",
    "ClockSkew",
    "Limits",
    "PayloadTooLarge",
    "PolicyNotAccepted",
    "RateLimited",
    "Throttle",
    "check_strings",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The server's limits per request and per agent, with safe defaults."""

    max_body_bytes: int = 8 * 1024 * 1024
    """Largest request body, enforced before authentication and while it is read."""
    max_events: int = 1000
    """Most events one request may record (`check_events`)."""
    max_text_chars: int = 16384
    """Longest string (text, id, reason) one event or memory may carry."""
    rate: float = 50.0
    """Requests per second one agent may sustain (token bucket refill)."""
    burst: int = 100
    """Requests one agent may send at once before the rate applies (bucket size)."""
    event_rate: float = 200.0
    """Events per second one agent may record, sustained. Its bucket holds one maximal
    batch (``max_events``), so a batch is never refused for its size alone; an agent that
    sends maximal batches back to back waits between them, and cannot hold the store's
    write lock (on SQLite, the whole file's) for everyone else."""
    byte_rate: float = 256 * 1024
    """Request-body bytes per second one agent may send, sustained, charged from the
    declared ``Content-Length`` before the body is read (`readmit.service.gate`). Its bucket
    holds one maximal body (``max_body_bytes``), so a body is never refused for its size
    alone. The default is over 1.3 KiB an event at the default ``event_rate``, so batches
    of ordinary events never meet it; an agent sending large bodies back to back (bodies
    the server must parse before it can count their events) waits between them."""
    refusal_pause: float = 1.0
    """Longest a request refused by the byte budget waits before it is answered (its
    ``Retry-After``, at most this). The refused body is still on its way, and the
    connection takes the next request only once the server has read it: answered at once,
    a client resending every refused body kept the server draining them (2.5 ms of its CPU
    each, 211 a second, measured). Waiting, the server reads a few buffers of it and the
    sender waits too. 0 answers at once."""
    concurrent_returns: int = 2
    """Returns one agent may have running at the same time."""
    clock_skew: timedelta = timedelta(minutes=5)
    """How far a client's ``at`` may lie ahead of the server's clock (and, for returns, behind)."""
    max_view_ttl: timedelta = timedelta(days=1)
    """Longest validity an issued view may have, whatever the policy file says."""
    max_labels: int = 64
    """Most members of any one set an event names: an obligation's requirement labels
    (``requires``), an item's ``supports``, premises (``depends_on``), citations
    (``cites``), readers (``readers.principals``, ``readers.roles``) and ``purposes``. A
    return's coverage is measured over every open obligation's labels, and 1,000
    obligations of 600 labels made each return of their role take seconds and answer
    18 MB; an item of 800,000 readers took two seconds of the server's time to parse and
    80 MB to hold, and 4 million premises made every teammate's return four times as slow."""
    max_open_obligations: int = 256
    """Most obligations one principal's agents may hold open at once in a workspace (a batch
    that would open more is refused, counted in its own transaction; resolving some makes
    room)."""
    shared: bool = False
    """Whether every server process over the store keeps the per-agent buckets and return
    slots above together, in the store (`readmit.service.shared_limits`), rather than each
    its own (an agent whose requests reach N processes would get N times each)."""

    def __post_init__(self) -> None:
        counts = {
            "max_body_bytes": self.max_body_bytes,
            "max_events": self.max_events,
            "max_text_chars": self.max_text_chars,
            "burst": self.burst,
            "concurrent_returns": self.concurrent_returns,
            "max_labels": self.max_labels,
            "max_open_obligations": self.max_open_obligations,
        }
        problems = [f"{n} must be a positive integer" for n, v in counts.items() if v < 1]
        if not (math.isfinite(self.rate) and self.rate > 0):
            problems.append("rate must be a positive number of requests per second")
        if not (math.isfinite(self.event_rate) and self.event_rate > 0):
            problems.append("event_rate must be a positive number of events per second")
        if not (math.isfinite(self.byte_rate) and self.byte_rate > 0):
            problems.append("byte_rate must be a positive number of bytes per second")
        if not (math.isfinite(self.refusal_pause) and 0 <= self.refusal_pause <= 60):
            problems.append("refusal_pause must be 0 to 60 seconds")
        if self.clock_skew < timedelta(0):
            problems.append("clock_skew must not be negative")
        if self.max_view_ttl <= timedelta(0):
            problems.append("max_view_ttl must be positive")
        if problems:
            raise ConfigError("invalid limits: " + "; ".join(problems))

    def check_events(self, count: int) -> None:
        """Refuse a request recording ``count`` events, more than `max_events`.

        Raises:
            PayloadTooLarge: ``count`` is over `max_events`.
        """
        if count > self.max_events:
            raise PayloadTooLarge(f"at most {self.max_events} events per request")


CHECKPOINT_ROW_BYTES = 48
"""What a departure is charged to its agent's byte budget for each item its checkpoint
keeps (a row and its index entry, about what they take on disk): one agent departing
over and over made the store grow by 280 MB a minute in a workspace of 5,000 items."""

Monotonic = Callable[[], float]


@dataclass
class _Bucket:
    tokens: float
    at: float


REQUESTS, EVENTS, BYTES = "requests", "events", "bytes"
"""The buckets each agent has: requests, events recorded, request-body bytes."""


@dataclass
class Throttle:
    """Per-agent token buckets and concurrent-return slots, kept by one server process.

    `readmit.service.shared_limits.SharedThrottle` keeps the same in the store, for
    several processes over one database (``readmit serve --shared-limits``).
    """

    limits: Limits
    monotonic: Monotonic = time.monotonic
    _buckets: dict[tuple[str, tuple[str, str]], _Bucket] = field(default_factory=dict)
    _returns: dict[tuple[str, str], list[threading.Event]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    stored: ClassVar[bool] = False
    """Whether its takes and slots are writes to the store (they then wait on it, and the
    server makes them off its event loop); this one keeps them in memory."""

    def admit_request(self, agent: tuple[str, str]) -> None:
        """Take one token from ``agent``'s request bucket.

        Raises:
            RateLimited: if the bucket is empty (with the seconds until a token is back).
        """
        self._admit(REQUESTS, agent, 1)

    def admit_events(self, agent: tuple[str, str], count: int) -> None:
        """Take ``count`` tokens from ``agent``'s event bucket (nothing when it has too few).

        Raises:
            RateLimited: if it has too few (with the seconds until it has enough).
        """
        self._admit(EVENTS, agent, count)

    def admit_bytes(self, agent: tuple[str, str], count: int) -> None:
        """Take ``count`` tokens from ``agent``'s body-byte bucket (nothing when it has too few).

        Raises:
            RateLimited: if it has too few (with the seconds until it has enough).
        """
        self._admit(BYTES, agent, count)

    def charge_bytes(self, agent: tuple[str, str], count: int) -> None:
        """Take ``count`` tokens from ``agent``'s byte bucket after the fact, refusing nothing.

        For what a request made the store keep beyond its body (a departure's checkpoint):
        the bucket may go below empty, and its later requests wait until it refills.
        """
        self._take(BYTES, agent, count, *self.bucket(BYTES), force=True)

    def bucket(self, kind: str) -> tuple[float, float]:
        """The refill rate and the size of the ``kind`` buckets."""
        limits = self.limits
        if kind == REQUESTS:
            return limits.rate, limits.burst
        if kind == EVENTS:
            return limits.event_rate, limits.max_events
        return limits.byte_rate, limits.max_body_bytes

    def _admit(self, kind: str, agent: tuple[str, str], cost: int) -> None:
        rate, size = self.bucket(kind)
        short = self._take(kind, agent, cost, rate, size, force=False)
        if short > 0:
            what = {REQUESTS: "requests", EVENTS: "events", BYTES: "bytes of request body"}[kind]
            raise RateLimited(
                f"more than {rate:g} {what} per second; slow down", math.ceil(short / rate)
            )

    def _take(
        self, kind: str, agent: tuple[str, str], cost: int, rate: float, size: float, force: bool
    ) -> float:
        """Take ``cost`` tokens refilled at ``rate`` up to ``size``.

        Returns the tokens it lacks (nothing taken), or 0. ``force``: take them anyway,
        below empty.
        """
        with self._lock:
            t = self.monotonic()
            bucket = self._buckets.setdefault((kind, agent), _Bucket(tokens=size, at=t))
            bucket.tokens = min(size, bucket.tokens + (t - bucket.at) * rate)
            bucket.at = t
            if bucket.tokens < cost and not force:
                return cost - bucket.tokens
            bucket.tokens -= cost
            return 0.0

    @contextmanager
    def return_slot(self, agent: tuple[str, str]) -> Iterator[threading.Event]:
        """Hold one of ``agent``'s concurrent-return slots; yield the return's cancel flag.

        A departure holds one too: a checkpoint costs what a return does, and departures
        at once all passed the byte budget before any was charged for its checkpoint.

        Raises:
            RateLimited: if all its slots are taken.
        """
        cancel = threading.Event()
        with self._lock:
            running = self._returns.setdefault(agent, [])
            if len(running) >= self.limits.concurrent_returns:
                raise busy(self.limits)
            running.append(cancel)
        try:
            yield cancel
        finally:
            with self._lock:
                running.remove(cancel)

    def running_returns(self, agent: tuple[str, str]) -> list[threading.Event]:
        """The cancel flags of ``agent``'s returns in progress."""
        with self._lock:
            return list(self._returns.get(agent, []))

    def close(self) -> None:
        """Stop what the throttle runs in the background (this one runs nothing)."""


def busy(limits: Limits) -> RateLimited:
    """The refusal of a return or departure past ``--concurrent-returns`` of its agent's."""
    most = limits.concurrent_returns
    return RateLimited(f"at most {most} returns and departures at a time per agent", 1)


def check_strings(value: object, limit: int, where: str, most: int | None = None) -> None:
    """Refuse any string in ``value`` (JSON) longer than ``limit`` or holding a NUL.

    The error names the field (``item.text``; a key by the object holding it), in its
    message and in ``located["fields"]``. The path is made only for what is refused: each
    value on the walk holds its parent and its own key, not a copy of the path. A key that
    is no plain name is shown quoted, escaped and cut (`path_part`). With ``most``, an
    array of more than ``most`` members is refused too, before it is walked.

    Raises:
        PayloadTooLarge: for a string over the limit, or an array over ``most``.
        InvalidInput: for a NUL character (no store keeps it the same way).
    """
    if isinstance(value, str):
        _check_string(value, limit, where, None)
    walks: list[tuple[_Step | None, Iterator[tuple[object, object]], bool]] = []
    _enter(walks, None, value)
    while walks:  # depth first, one iterator a level: memory grows with depth, not size
        step, items, keyed = walks[-1]
        for key, inner in items:
            if keyed:
                _check_string(str(key), limit, where, step)  # a key: named by its object
            if isinstance(inner, str):
                _check_string(inner, limit, where, (step, key))
            elif most is not None and isinstance(inner, list) and len(inner) > most:
                _refuse_array(inner, most, where, (step, key))
            elif _enter(walks, (step, key), inner):
                break
        else:
            walks.pop()


def _enter(
    walks: list[tuple["_Step | None", Iterator[tuple[object, object]], bool]],
    step: "_Step | None",
    value: object,
) -> bool:
    """Push a walk over ``value``'s members if it is an object or an array."""
    if isinstance(value, dict):
        walks.append((step, iter(value.items()), True))
    elif isinstance(value, list):
        walks.append((step, enumerate(value), False))
    else:
        return False
    return True


_Step = tuple["_Step | None", object]
"""Where a value sits: its parent's step, and its key or index there."""


def _path(step: _Step | None) -> str:
    parts: list[str] = []
    while step is not None:
        step, part = step
        parts.append(path_part(part if isinstance(part, int) else str(part)))
    return ".".join(reversed(parts))


_NOUNS = {
    "requires": "labels",
    "critical": "labels",
    "supports": "labels",
    "depends_on": "premises",
    "cites": "citations",
    "principals": "principals",
    "roles": "roles",
    "purposes": "purposes",
}
"""What an event's array holds, by its key."""


def _refuse_array(array: list[object], most: int, where: str, step: _Step) -> None:
    path, key = _path(step), step[1]
    noun = _NOUNS.get(key, "entries") if isinstance(key, str) else "entries"
    error = PayloadTooLarge(f"{where}: {path} names {len(array)} {noun}; at most {most}")
    error.located = {"fields": [path]}
    raise error


def _check_string(text: str, limit: int, where: str, step: _Step | None) -> None:
    error: InvalidInput | None = None
    if len(text) > limit:
        error = PayloadTooLarge(f"a string is longer than {limit} characters")
    elif "\x00" in text:
        error = InvalidInput("a string holds a NUL character")
    if error is not None:
        path = _path(step)
        error.args = (f"{where}: {path}: {error}" if path else f"{where}: {error}",)
        error.located = {"fields": [path] if path else []}
        raise error
