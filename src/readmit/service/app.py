"""The HTTP service: thin routes over `readmit.service.operations`, JSON errors with stable codes.

Every route but ``/v1/verify`` and ``/health`` needs ``Authorization: Bearer
<agent key>`` and acts as that agent. Errors are ``{"code", "message",
"details"}``; bad input is a 4xx and stores nothing. Routes are plain (sync)
functions, so FastAPI runs ``admit()`` in its worker threads.
"""

from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from readmit.errors import (
    Forbidden,
    InvalidEvent,
    InvalidInput,
    NotFound,
    ReadmitError,
    StoreError,
    Unauthenticated,
    ViewRejected,
)
from readmit.service.operations import MAX_EVENTS, Caller, Service
from readmit.wire import Name, Text

STATUS: dict[type[ReadmitError], int] = {
    InvalidInput: 422,
    ViewRejected: 422,
    Unauthenticated: 401,
    Forbidden: 403,
    NotFound: 404,
    StoreError: 503,
}
"""HTTP status by error class (the most specific base wins); anything else is 500."""


def status_of(error: ReadmitError) -> int:
    """The HTTP status for ``error``."""
    return next((STATUS[c] for c in type(error).__mro__ if c in STATUS), 500)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EventsIn(_Body):
    """Events to record."""

    events: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_EVENTS,
        description="Events in the readmit.scenario/1 format; "
        "`at` defaults to now, `author` must be you.",
    )


class DepartIn(_Body):
    """A departure (now, unless `at` is given)."""

    at: AwareDatetime | None = None


class ReturnIn(_Body):
    """A return to a task, for a purpose."""

    task: Name
    purpose: Name
    policy: dict[str, Any] | None = Field(default=None, description="Policy overrides.")
    at: AwareDatetime | None = None


class VerifyIn(_Body):
    """A Return View to check."""

    view: dict[str, Any]
    at: AwareDatetime | None = None


class MemoryIn(_Body):
    """A private memory bound to a work-state item."""

    id: Name
    text: Text
    source: Name
    at: AwareDatetime | None = None


class ErrorOut(BaseModel):
    """Every error: a stable code, a message for people, and structured details."""

    code: str
    message: str
    details: Any = None


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": meaning}
    for status, meaning in [
        (401, "No valid agent key (`unauthenticated`)."),
        (403, "Acting as another agent (`forbidden`)."),
        (404, "No such decision of yours (`not_found`)."),
        (422, "Invalid request or event; nothing was stored."),
        (503, "The store is unavailable (`store_error`)."),
    ]
}


def _error(status: int, code: str, message: str, details: Any = None) -> JSONResponse:
    return JSONResponse({"code": code, "message": message, "details": details}, status_code=status)


def create_app(service: Service) -> FastAPI:
    """The FastAPI application over ``service``."""
    app = FastAPI(
        title="readmit",
        version="0.1.0",
        description="Return-time admission of agent memory (TRACE).",
        responses=ERROR_RESPONSES,
    )
    bearer = HTTPBearer(auto_error=False)

    def caller(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Caller:
        return service.authenticate(credentials.credentials if credentials else None)

    Me = Annotated[Caller, Depends(caller)]

    @app.exception_handler(ReadmitError)
    def _readmit_error(request: Request, error: ReadmitError) -> JSONResponse:
        details = {"event_id": error.event_id} if isinstance(error, InvalidEvent) else None
        return _error(status_of(error), error.code, str(error), details)

    @app.exception_handler(RequestValidationError)
    def _invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        details = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in error.errors()]
        return _error(422, "invalid_request", "the request does not match the API schema", details)

    _routes(app, service, Me)
    return app


def _routes(app: FastAPI, service: Service, me: Any) -> None:  # noqa: C901 - one route each
    @app.get("/health")
    def health() -> dict[str, str]:
        """Liveness check."""
        return {"status": "ok"}

    @app.post("/v1/events")
    def record(body: EventsIn, caller: me) -> dict[str, Any]:
        """Record events you author, atomically: all are stored or none."""
        return {"recorded": service.record(caller, body.events)}

    @app.post("/v1/memories")
    def remember(body: MemoryIn, caller: me) -> dict[str, Any]:
        """Add a private experience to your own bank, bound to a work-state item."""
        return service.remember(caller, body.id, body.text, body.source, body.at)

    @app.get("/v1/memories")
    def memories(caller: me) -> dict[str, Any]:
        """Your own private bank (never another agent's)."""
        return {"memories": service.memories(caller)}

    @app.post("/v1/depart")
    def depart(body: DepartIn, caller: me) -> dict[str, Any]:
        """Checkpoint what you can see now; your private bank is quarantined."""
        return service.depart(caller, body.at)

    @app.post("/v1/return")
    def return_(body: ReturnIn, caller: me) -> dict[str, Any]:
        """Run the return pipeline: the signed Return View, or the withheld decision."""
        return service.return_(caller, body.task, body.purpose, body.policy, body.at)

    @app.post("/v1/verify")
    def verify(body: VerifyIn) -> dict[str, Any]:
        """Check a Return View's signature, item digests and expiry."""
        return service.verify(body.view, body.at)

    @app.get("/v1/decisions")
    def decisions(caller: me) -> dict[str, Any]:
        """Your return decisions (the audit log, as far as it is yours)."""
        return {"decisions": service.decisions(caller)}

    @app.get("/v1/decisions/{decision_id}")
    def explain(decision_id: int, caller: me) -> dict[str, Any]:
        """Why each item of one of your decisions was kept or excluded."""
        return service.explain(caller, decision_id)

    @app.get("/v1/state")
    def state(caller: me) -> dict[str, Any]:
        """The active items you may read now."""
        return {"items": service.state(caller)}
