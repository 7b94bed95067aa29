"""The HTTP API's bodies: what each route takes and what it answers, as typed shapes.

Requests are pydantic models (unknown fields refused); answers are closed
TypedDicts built from the outbound shapes of `readmit.wire.outbound`, so
``/openapi.json`` types every response and a field added without a schema fails
instead of leaking out.
"""

from typing import Any, Literal, NotRequired, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator, with_config
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from readmit.clock import format_time
from readmit.model import Checkpoint
from readmit.wire.fields import Instant, Name, Text
from readmit.wire.outbound import ItemOut, MemoryOut, Outcome

_CLOSED = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EventsIn(_Body):
    """Events to record."""

    events: list[dict[str, Any]] = Field(
        min_length=1,
        description="Events in the readmit.scenario/1 format; `at` defaults to now and may "
        "lie at most the server's clock skew ahead; `author` must be you. At most the "
        "server's `--max-events` per request (413 `payload_too_large`). Ids you give are "
        "stored as `<you>/<id>`; a reference `x` is your own `<you>/x`, `A2/x` a "
        "teammate's, `/x` a plain id from a replayed scenario. A refused event is named "
        "by its position, `events[i]` (`details.index`), and the fields at fault.",
    )


_Named = TypeVar("_Named", "DepartIn", "ReturnIn")


def _both_or_neither(body: _Named) -> _Named:
    if (body.task is None) != (body.purpose is None):
        raise ValueError("give task and purpose together, or neither")
    return body


class DepartIn(_Body):
    """A departure (now, unless `at` is given)."""

    at: Instant | None = None
    task: Name | None = Field(
        default=None,
        description="What you will return to (with `purpose`): a server started with "
        "`--judge-ahead` then screens that return while you are away, before any view "
        "showed your task.",
    )
    purpose: Name | None = Field(default=None, description="Your purpose then (with `task`).")

    @model_validator(mode="after")
    def _together(self) -> "DepartIn":
        return _both_or_neither(self)

    @property
    def returning_to(self) -> tuple[str, str] | None:
        """(task, purpose), if given."""
        return None if self.task is None or self.purpose is None else (self.task, self.purpose)


class ReturnIn(_Body):
    """A return to a task, for a purpose (by default those your departure named)."""

    task: Name | None = Field(
        default=None,
        description="What you return to (with `purpose`); without both, the task and "
        "purpose your latest departure named (422 `invalid_input` if it named none).",
    )
    purpose: Name | None = Field(default=None, description="Your purpose (with `task`).")

    @model_validator(mode="after")
    def _together(self) -> "ReturnIn":
        return _both_or_neither(self)

    policy: dict[str, Any] | None = Field(
        default=None,
        description="Not accepted (422 `policy_not_accepted`): the operator sets the "
        "policy when starting the server.",
    )
    at: Instant | None = Field(
        default=None,
        description="Your clock, checked against the server's (422 `clock_skew` if further "
        "apart than the skew); the return is decided at the server's time.",
    )


class VerifyIn(_Body):
    """A Return View to check."""

    view: dict[str, Any]
    at: Instant | None = None


class MemoryIn(_Body):
    """A private memory bound to a work-state item."""

    id: Name = Field(description="Stored as `<you>/<id>`.")
    text: Text
    source: Name = Field(
        description="The item it is bound to: `x` (yours), `A2/x` (a teammate's) or `/x`."
    )
    at: Instant | None = None


class ErrorOut(BaseModel):
    """Every error: a stable code, a message for people, and structured details."""

    code: str
    message: str
    details: Any = Field(
        default=None,
        description="For `invalid_event`: `event_id`, and when the event's place in the "
        "batch is known `index` (from 0, in `events`) and `fields` (the paths at fault); "
        "for `invalid_request`: a list of `{loc, msg}`; otherwise null.",
    )


@with_config(_CLOSED)
class HealthOut(TypedDict):
    """The service is up and its store intact."""

    status: Literal["ok"]


@with_config(_CLOSED)
class RecordedEventOut(TypedDict):
    """One recorded event: its stored id and the epoch it made."""

    id: str
    epoch: int


@with_config(_CLOSED)
class WarningOut(TypedDict):
    """Something recorded as sent that is likely not what its writer meant."""

    index: int
    """The event's position in the batch (``events[index]``)."""
    id: str
    """The event's stored id."""
    field: str
    message: str


@with_config(_CLOSED)
class RecordedOut(TypedDict):
    """The events recorded, in the order sent."""

    recorded: list[RecordedEventOut]
    warnings: NotRequired[list[WarningOut]]
    """Only when there is one: an item you wrote whose readers leave you out (names are not
    checked against the workspace's agents, so a misspelled principal or role is kept as
    sent, and you may not read, revoke or supersede the item). The events were recorded
    all the same."""


@with_config(_CLOSED)
class MemoriesOut(TypedDict):
    """A page of your private bank, oldest first."""

    memories: list[MemoryOut]
    next: str | None
    """The cursor of the next page: pass it as ``after``. ``null`` on the last page."""


@with_config(_CLOSED)
class DepartureOut(TypedDict):
    """The checkpoint a departure made."""

    agent: str
    epoch: int
    at: str
    items: int
    """How many items the checkpoint holds."""
    digest: str
    """The digest of the checkpointed items' receipts."""


def departure_out(checkpoint: Checkpoint) -> DepartureOut:
    """What ``POST /v1/depart`` answers for ``checkpoint``."""
    return {
        "agent": checkpoint.agent,
        "epoch": checkpoint.epoch,
        "at": format_time(checkpoint.at),
        "items": len(checkpoint.item_ids),
        "digest": checkpoint.digest,
    }


@with_config(_CLOSED)
class VerifyOut(TypedDict):
    """Whether a view holds: its item ids if so, the first failed check if not."""

    valid: bool
    items: NotRequired[list[str]]
    problem: NotRequired[str]


@with_config(_CLOSED)
class DecisionSummaryOut(TypedDict):
    """One of your decisions, by its number among yours."""

    id: int
    at: str
    epoch: int
    outcome: Outcome


@with_config(_CLOSED)
class DecisionsOut(TypedDict):
    """A page of your decisions, oldest first."""

    decisions: list[DecisionSummaryOut]
    next: int | None
    """The cursor of the next page: pass it as ``after``. ``null`` on the last page."""


PAGE, PAGE_MOST, AFTER_MOST = 1000, 10_000, 1024
"""Entries a page of ``/v1/state``, ``/v1/decisions`` or ``/v1/memories`` holds unless asked
for fewer, the most it may hold, and the longest cursor (``after``) a page takes: ids are far
shorter."""
PAGE_CHARS = 1 << 20
"""The characters (texts, ids, keys, labels) a page of ``/v1/state`` or ``/v1/memories``
holds at most, past its first entry: counted in entries alone, 10,000 items of 16,384
characters made one page 161 MB and 1 s of the server's, which one agent could ask for
at its request rate (a probe)."""


@with_config(_CLOSED)
class StateOut(TypedDict):
    """A page of the active items you may read, by id."""

    items: list[ItemOut]
    next: str | None
    """The cursor of the next page: pass it as ``after``. ``null`` on the last page."""


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": meaning}
    for status, meaning in [
        (401, "No valid agent key (`unauthenticated`)."),
        (403, "Acting as another agent (`forbidden`)."),
        (404, "No such decision of yours (`not_found`)."),
        (413, "Body, batch or text over the server's limit (`payload_too_large`)."),
        (422, "Invalid request or event (or `clock_skew`); nothing was stored."),
        (429, "Over your rate or concurrent returns (`rate_limited`, see Retry-After)."),
        (500, "An unexpected error (`internal`); nothing about it is in the body."),
        (503, "The store or the verifier is unavailable (`store_error`, `verifier_unavailable`)."),
    ]
}
"""The error answers every ``/v1`` route may give, each an `ErrorOut`."""

HEALTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: ERROR_RESPONSES[413],
    500: ERROR_RESPONSES[500],
    503: {
        "model": ErrorOut,
        "description": "The store is damaged, unreachable or not fully migrated (`store_error`).",
    },
}
"""The error answers ``/health`` can give: it takes no key, parameters nor body (a body
over the limit is still refused before routing)."""

VERIFY_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: ERROR_RESPONSES[status] for status in (413, 422, 500)
}
"""The error answers ``/v1/verify`` can give: it takes no key and reads no store, so only a
body over the limit, a body that is not a view request, or an unexpected error."""
