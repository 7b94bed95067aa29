"""Error answers of the HTTP service: the status of each error, and the JSON body.

Routes answer through FastAPI's exception handlers (`readmit.service.app`); the ASGI
guards that run before routing (`readmit.service.body`, `readmit.service.gate`) answer
here directly, with the same status, body and ``Retry-After``.
"""

import json
import logging
import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from functools import cache

from starlette.types import Send

from readmit.errors import (
    Abandoned,
    Forbidden,
    Internal,
    InvalidInput,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ReadmitError,
    StoreError,
    Unauthenticated,
    VerifierUnavailable,
    ViewRejected,
    WorkerLost,
)
from readmit.store.deadline import UNKNOWN

STATUS: dict[type[ReadmitError], int] = {
    PayloadTooLarge: 413,
    MethodNotAllowed: 405,
    RateLimited: 429,
    Abandoned: 499,
    InvalidInput: 422,
    ViewRejected: 422,
    Unauthenticated: 401,
    Forbidden: 403,
    NotFound: 404,
    StoreError: 503,
    VerifierUnavailable: 503,
    WorkerLost: 503,
    Internal: 500,
}
"""HTTP status by error class (the most specific base wins); any other `ReadmitError` is 500."""


def status_of(error: ReadmitError) -> int:
    """The HTTP status for ``error``."""
    return next((STATUS[c] for c in type(error).__mro__ if c in STATUS), 500)


class _Seldom:
    """A log that writes each kind of message at most once a second, then how many it left out.

    While the database is down every request fails: one line each (280 in 20 s, a review)
    buried what came before. Messages are of a kind when their first lines agree but for
    numbers (a process or transaction id); another kind is written at once.
    """

    KINDS = 64
    """The most kinds followed at once; past it, the kinds whose second is over are let go
    (their count written), and a new kind is written every time."""

    def __init__(self, log: logging.Logger, clock: Callable[[], float] = time.monotonic) -> None:
        self.log, self.clock, self.lock = log, clock, threading.Lock()
        self.due: dict[str, tuple[float, int, str]] = {}
        """Each kind -> when it may be written again, how many were left out since, the last."""

    def warning(self, message: str, *args: object) -> None:
        said, at = message % args, self.clock()
        kind = _NUMBERS.sub("#", said.split("\n", 1)[0])
        with self.lock:
            due, left_out, _ = self.due.get(kind, (-math.inf, 0, said))
            if at < due:
                self.due[kind] = (due, left_out + 1, said)
                return
            over = self._over(at) if len(self.due) >= self.KINDS else []
            if len(self.due) < self.KINDS:
                self.due[kind] = (at + 1.0, 0, said)
        for line, count in [*over, (said, left_out)]:
            more = f" ({count} more like it left out of the log)" if count else ""
            self.log.warning("%s%s", line, more)

    def _over(self, at: float) -> list[tuple[str, int]]:
        """Let go of the kinds whose second is over; the last of each left out, and how many."""
        over = [kind for kind, (due, _, _) in self.due.items() if due <= at]
        counts = [(self.due[kind][2], self.due[kind][1]) for kind in over]
        for kind in over:
            del self.due[kind]
        return [(line, count) for line, count in counts if count]


_NUMBERS = re.compile(r"\d+")
_log = logging.getLogger(__name__)
_logged = _Seldom(_log)

UNAVAILABLE = "the store's database failed; try again later (the server's log has why)"
"""What a client is told of a database's own error: its text names the database's host
and port, and sometimes the statement, to any caller (``/health`` and a key lookup answer
before authentication)."""
UNSURE = (
    "whether it was recorded is unknown: events sent again with their ids are answered with "
    "their epochs if they were; a return decided is listed by GET /v1/decisions"
)
"""Added where a COMMIT was sent and never answered."""


def message_of(error: ReadmitError) -> str:
    """The message a client is shown for ``error``: its own, but for a database's error.

    That one is logged here, where the operator reads it, and answered as `UNAVAILABLE`.
    """
    cause = error.__cause__
    if isinstance(error, StoreError) and isinstance(cause, sqlite3.Error | _driver_error()):
        _logged.warning("the store's database failed: %s", error)
        return f"{UNAVAILABLE}; {UNSURE}" if UNKNOWN in str(error) else UNAVAILABLE
    return str(error)


@cache  # where psycopg is not installed, a failed import at every store error
def _driver_error() -> type[Exception]:
    """PostgreSQL's driver's base error, where it is installed (else SQLite's)."""
    try:
        import psycopg
    except ImportError:
        return sqlite3.Error
    return psycopg.Error


def retry_after(error: ReadmitError) -> dict[str, str] | None:
    """The ``Retry-After`` header of a `RateLimited` refusal (no header for any other)."""
    return {"Retry-After": str(error.retry_after)} if isinstance(error, RateLimited) else None


async def answer(send: Send, error: ReadmitError, *, close: bool = False) -> None:
    """Send ``error`` as a whole JSON answer on a raw ASGI ``send``.

    Args:
        send: the request's ASGI send.
        error: the refusal; its status, code, message and ``Retry-After``.
        close: ask for the connection to be closed after the answer (the client is still
            sending a body nobody will read, with no length that bounds it).
    """
    refusal = {"code": error.code, "message": message_of(error), "details": None}
    # As the app's own JSON answers are written (Starlette's JSONResponse): compact, UTF-8.
    body = json.dumps(refusal, ensure_ascii=False, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in (retry_after(error) or {}).items()]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status_of(error), "headers": headers})
    await send({"type": "http.response.body", "body": body})
