"""Exceptions raised by readmit.

Our exception hierarchy::

    ReadmitError
    ├── InvalidInput (also ValueError)   bad event, config, request or dataset; nothing was stored
    │   ├── InvalidEvent                 one event (named by id) is malformed or inconsistent
    │   │   └── InvalidEventAt           … at events[i] of the batch sent, with the fields at fault
    │   ├── ConfigError                  a setting, verifier spec or store URL is wrong
    │   ├── NotJson                      text is not JSON at all (a syntax error)
    │   ├── RepeatedKey                  a JSON object names one key twice
    │   ├── LongNumber                   a JSON number is longer than readmit reads
    │   ├── TooDeep                      JSON nests deeper than readmit reads
    │   ├── InvalidRequest               an HTTP body does not match the API schema
    │   ├── PayloadTooLarge              a body, batch or string is over the server's limit
    │   ├── ClockSkew                    an ``at`` is further from the server's clock than allowed
    │   └── PolicyNotAccepted            a returning agent tried to choose its policy
    ├── StoreError                       the work-state store could not do what was asked
    │   ├── MigrationError
    │   └── DepartedMeanwhile            the agent departed again while its return was decided
    ├── VerifierUnavailable              the implicit-invalidation verifier gave no answer
    ├── ViewRejected                     a Return View failed its signature/digest/expiry check
    ├── Unauthenticated                  no valid agent key came with a request
    ├── Forbidden                        the caller tried to act as someone else
    ├── NotFound                         the caller has no such decision
    ├── RateLimited                      an agent is over its request rate or concurrent returns
    ├── Abandoned                        the client went away; its return stopped, nothing recorded
    ├── WorkerLost                       a return worker died before answering; nothing recorded
    └── Internal                         a bug: the service answers a JSON 500 with no detail

An item that is kept out of a Return View is *not* an exception: it is an
`Exclusion` with a `Reason` (see `readmit.reasons`). Exceptions are for
"could not decide", never for "decided no".
"""

import json
from typing import Any, ClassVar


class ReadmitError(Exception):
    """Base class for every error readmit raises on purpose."""

    code: ClassVar[str] = "readmit_error"
    """Stable, snake_case identifier used in CLI output and HTTP error bodies."""
    located: dict[str, Any] | None = None
    """Where the refusal was found, the HTTP answer's ``details``: an event's id (as stored;
    ``None`` for one the sender gave none), and in a batch its ``index`` and ``fields``.
    Every `InvalidEvent` says it; a refusal of another class (a string too long, another
    author) when the batch locates it (`readmit.service.batch.located`)."""


class InvalidInput(ReadmitError, ValueError):
    """Input was rejected before anything was stored."""

    code = "invalid_input"


class InvalidEvent(InvalidInput):
    """One event is malformed, out of order or refers to something unknown."""

    code = "invalid_event"

    def __init__(
        self,
        event_id: str,
        problem: str,
        *,
        unknown: str | None = None,
        fields: tuple[str, ...] = (),
    ) -> None:
        # an id is named, not echoed: a hostile one may be megabytes long
        shown = event_id if len(event_id) <= 100 else event_id[:100] + "…"
        super().__init__(f"event {shown!r}: {problem}")
        self.event_id = event_id
        self.problem = problem
        self.unknown = unknown
        """The reference that named nothing the author may read (a target, premise or cited
        source), when that is the refusal; ``None`` for any other."""
        self.fields = fields
        """The field paths at fault, as written (``item.readers.roles.0``); empty if none."""
        self.located = {"event_id": event_id}


class InvalidEventAt(InvalidEvent):
    """An `InvalidEvent` at a known position of its batch, with the fields at fault.

    ``index`` counts from 0 in the ``events`` array that was sent (a request body or a
    scenario file); the message names it as ``events[index]``, so an event the sender
    gave no id (or one the server rewrote) can still be found.
    """

    def __init__(
        self,
        event_id: str,
        problem: str,
        *,
        index: int,
        fields: tuple[str, ...] = (),
        named: bool = True,
        unknown: str | None = None,
    ) -> None:
        super().__init__(event_id, problem, unknown=unknown, fields=fields)
        self.index = index
        self.named = named
        """Whether the sender gave the event its id (else ``event_id`` is only a placeholder)."""
        # An event sent without an id is found by its position: no id the sender never saw.
        self.located = {
            "event_id": event_id if named else None,
            "index": index,
            "fields": list(fields),
        }
        where = f"events[{index}]"
        shown = event_id if len(event_id) <= 100 else event_id[:100] + "…"
        self.args = (f"event {shown!r} ({where}): {problem}" if named else f"{where}: {problem}",)


class NotJson(InvalidInput):
    """Text that is not JSON at all (`readmit.strict_json`): what the parser expected, and where."""

    def __init__(self, error: json.JSONDecodeError) -> None:
        super().__init__(f"not JSON: {error}")
        self.problem = error.msg
        """What the parser found wrong (``Expecting value``), without the place."""
        self.at = error.pos
        """The character (from 0) where it did."""


class RepeatedKey(InvalidInput):
    """A JSON object names one key twice (`readmit.strict_json`).

    ``json.loads`` keeps the last: whoever reads the first (a gateway, an audit tool, a
    view's consumer) would see another document than the one readmit read.
    """

    def __init__(self, key: str) -> None:
        super().__init__(f"JSON object repeats the key {key[:80]!r}")
        self.key = key
        """The key named twice (the message shows at most its first 80 characters)."""


class LongNumber(InvalidInput):
    """A JSON number longer than `readmit.strict_json.MAX_NUMBER_CHARS`, refused unread.

    Its own type, so a caller tells "valid JSON with a number too long" from "not JSON" by
    its type, not its words (Python's own refusal of a long integer is a bare `ValueError`).
    """

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON number is longer than {limit} characters")
        self.limit = limit
        """The most characters a number may have."""


class TooDeep(InvalidInput):
    """JSON that nests deeper than `readmit.strict_json.MAX_DEPTH` levels: valid, but unread.

    Its own type, so a caller says the document is too deep, not that it is not JSON.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nests deeper than {limit} levels")
        self.limit = limit
        """The most levels of arrays and objects read."""


class ConfigError(InvalidInput):
    """A configuration value (policy, verifier spec, store URL, key) is wrong."""

    code = "config_error"


class StoreError(ReadmitError):
    """The work-state store could not do what was asked."""

    code = "store_error"


class DamagedStore(StoreError):
    """A row of the store holds what readmit did not write (edited by hand, a damaged disk).

    The database answered: its connection stays in use, and nothing was committed.
    """


class MigrationError(StoreError):
    """A schema migration could not be applied."""

    code = "migration_error"


class DepartedMeanwhile(StoreError):
    """The agent departed again while its return was decided: nothing was recorded.

    The decision was made on the departure before; `readmit.decide.decide` decides the
    return anew on the latest one.
    """


class VerifierUnavailable(ReadmitError):
    """The verifier gave no trustworthy answer (outage, timeout, malformed reply)."""

    code = "verifier_unavailable"


class ViewRejected(ReadmitError):
    """A Return View failed verification; it must not be exposed."""

    code = "view_rejected"

    def __init__(self, problem: str) -> None:
        super().__init__(f"return view rejected: {problem}")
        self.problem = problem


class Unauthenticated(ReadmitError):
    """No valid agent key came with the request."""

    code = "unauthenticated"


class Forbidden(ReadmitError):
    """The caller tried to act as another agent (or outside its workspace)."""

    code = "forbidden"


class NotFound(ReadmitError):
    """The caller has no such decision (another agent's decisions are not even named)."""

    code = "not_found"


class InvalidRequest(InvalidInput):
    """An HTTP request body does not match the API schema (wrong fields or types)."""

    code = "invalid_request"


class MethodNotAllowed(InvalidRequest):
    """An HTTP method the path does not answer to (``Allow`` says which it does)."""

    code = "method_not_allowed"


class PayloadTooLarge(InvalidInput):
    """The request body, an event batch or one text is over the server's limit."""

    code = "payload_too_large"


class ClockSkew(InvalidInput):
    """A time (``at``) is further from the server's clock than the allowed skew."""

    code = "clock_skew"


class PolicyNotAccepted(InvalidInput):
    """A returning agent tried to choose its own policy; the operator sets it."""

    code = "policy_not_accepted"


class RateLimited(ReadmitError):
    """The agent sent more requests, or more concurrent returns, than it may."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds until a request may be accepted again (HTTP ``Retry-After``)."""


class Abandoned(ReadmitError):
    """The client went away before its return was decided; nothing was recorded."""

    code = "abandoned"


class WorkerLost(ReadmitError):
    """A return worker (``readmit serve --workers``) stopped before it answered.

    Its transaction died with it, so nothing was recorded; the server starts new workers
    and the return may be sent again.
    """

    code = "worker_lost"


class Internal(ReadmitError):
    """An unexpected failure (a bug): the service answers a JSON 500 with this code and no detail.

    Never raised on purpose; it names the code the HTTP service gives anything that is
    not a `ReadmitError`, while the traceback goes to the server's log.
    """

    code = "internal"


def install_hint(extra: str) -> str:
    """How to install the optional ``extra``, from the checkout readmit is installed from.

    Not by the bare name ``readmit[extra]``: readmit installs from a checkout (README,
    "Install"), and a package index may hold another project under that name.
    """
    return f"pip install '.[{extra}]' in the readmit checkout"
