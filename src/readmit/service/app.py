"""The HTTP service: thin routes over `readmit.service.operations`, JSON errors with stable codes.

Every route but ``/v1/verify`` and ``/health`` needs ``Authorization: Bearer
<agent key>`` and acts as that agent. Errors are ``{"code", "message",
"details"}``; bad input is a 4xx and stores nothing. Two guards run before
routing: `BodyLimit` (body size, then JSON 500s) and `AgentGate` (the key, the
request rate and the byte budget, before the body is read). Routes are plain
(sync) functions, so FastAPI runs ``admit()`` in its worker threads; with
``readmit serve --workers N`` returns run in worker processes (`readmit.service.workers`).
"""

import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from difflib import get_close_matches
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from readmit.errors import (
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    PolicyNotAccepted,
    RateLimited,
    ReadmitError,
)
from readmit.service.answers import message_of, retry_after, status_of
from readmit.service.body import BodyLimit
from readmit.service.copies import decision_json
from readmit.service.docs import add_reference
from readmit.service.gate import AgentGate, caller_of
from readmit.service.health import SharedCheck
from readmit.service.limits import Throttle
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.service.schema_problem import schema_problem
from readmit.service.schemas import (
    AFTER_MOST,
    ERROR_RESPONSES,
    HEALTH_RESPONSES,
    PAGE,
    PAGE_MOST,
    VERIFY_RESPONSES,
    DecisionsOut,
    DepartIn,
    DepartureOut,
    EventsIn,
    HealthOut,
    MemoriesOut,
    MemoryIn,
    RecordedOut,
    ReturnIn,
    StateOut,
    VerifyIn,
    VerifyOut,
)
from readmit.service.strict_route import StrictJsonRoute, routed_query
from readmit.service.verify_body import verified
from readmit.wire.fields import plain
from readmit.wire.outbound import AgentDecisionOut, MemoryOut

if TYPE_CHECKING:
    from readmit.service.workers import ReturnPool

__all__ = ["create_app"]


def _error(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"code": code, "message": message, "details": details}
    return JSONResponse(body, status_code=status, headers=headers)


def _closing(pool: "ReturnPool") -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """A lifespan that closes ``pool`` when the server shuts down.

    uvicorn ends its process with the signal that stopped it once the lifespan is over,
    so code after ``uvicorn.run`` may never run.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        pool.close()

    return lifespan


def create_app(service: Service, *, pool: "ReturnPool | None" = None) -> FastAPI:
    """The FastAPI application over ``service``; with ``pool``, returns are decided there.

    ``pool`` (`readmit.service.workers`) holds processes with their own services over the
    same store: everything else, the limits included, stays with ``service``.
    """
    app = FastAPI(
        lifespan=None if pool is None else _closing(pool),
        title="readmit",
        version="0.1.0",
        description="Return-time admission of agent memory (TRACE).",
        docs_url=None,  # FastAPI's pages load their scripts from a CDN: see readmit.service.docs
        redoc_url=None,
        # A path with a slash too many is no path of the API: answered 404 in the error
        # shape, not redirected (an empty 307 to an http:// URL built from the request,
        # wrong behind a proxy that ends TLS).
        redirect_slashes=False,
    )
    app.router.route_class = StrictJsonRoute
    app.state.limits = lambda: service.limits  # a batch's events counted before the schema
    add_reference(app)
    # The last added runs first: the size check before the key, the key before the body.
    app.add_middleware(AgentGate, service=service)
    app.add_middleware(BodyLimit, max_bytes=lambda: service.limits.max_body_bytes)
    bearer = HTTPBearer(auto_error=False)

    async def caller(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Caller:
        # `credentials` declares the bearer scheme in the OpenAPI; the gate (which runs
        # before the body is read) has already authenticated it and counted the request.
        routed_query(request)  # before FastAPI reads the parameters
        return caller_of(request)

    Me = Annotated[Caller, Depends(caller)]

    # The handlers run on the event loop (they do no I/O): a sync one takes a thread of the
    # pool the routes share, so refusals already decided waited behind 40 writers stalled
    # on a database that stopped answering (an operator's probe: up to 40 s late).
    @app.exception_handler(ReadmitError)
    async def _readmit_error(request: Request, error: ReadmitError) -> JSONResponse:
        details = error.located
        return _error(status_of(error), error.code, message_of(error), details, retry_after(error))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        # Routing's own refusals (no such path, a method it does not take), in the shape
        # every other error has.
        where = f"{request.method} {request.url.path[:200]}"
        headers = dict(error.headers or {})
        refused: ReadmitError
        if error.status_code == 404:
            refused = NotFound(
                f"no such path: {where} ({_nearest(request)}the API is listed at /docs)"
            )
        elif error.status_code == 405:
            allowed = ", ".join(_methods(request))  # Starlette names the first route's only
            headers = {**(error.headers or {}), "Allow": allowed}
            refused = MethodNotAllowed(f"{where} is not allowed (this path takes {allowed})")
        else:  # FastAPI's 400 for a body it could not parse (not UTF-8, say)
            refused = InvalidRequest(f"{where}: {error.detail} (send UTF-8 JSON)")
        status = error.status_code if error.status_code in (404, 405) else status_of(refused)
        return _error(status, refused.code, str(refused), None, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        errors = error.errors()
        details = [{"loc": list(e["loc"]), "msg": plain(e["msg"])} for e in errors]
        message = schema_problem(request, errors, details)
        return _error(422, InvalidRequest.code, message, details)

    _routes(app, service, Me, pool)
    return app


def _routes(  # noqa: C901 - one route each
    app: FastAPI, service: Service, me: Any, pool: "ReturnPool | None"
) -> None:
    # Each route documents the errors it can answer: /health needs no key, parameters nor body.
    checked = SharedCheck(service.store.check)

    @app.get("/health", response_model=HealthOut, responses=HEALTH_RESPONSES)
    async def health() -> HealthOut:
        """Liveness and store integrity (checked once for all callers, the answer shared)."""
        await checked()
        return {"status": "ok"}

    @app.post("/v1/events", response_model=RecordedOut, responses=ERROR_RESPONSES)
    def record(body: EventsIn, caller: me) -> RecordedOut:
        """Record events you author, atomically: all are stored or none."""
        return service.record(caller, body.events)

    @app.post("/v1/memories", response_model=MemoryOut, responses=ERROR_RESPONSES)
    def remember(body: MemoryIn, caller: me) -> MemoryOut:
        """Add a private experience to your own bank, bound to a work-state item."""
        return service.remember(caller, body.id, body.text, body.source, body.at)

    @app.get("/v1/memories", response_model=MemoriesOut, responses=ERROR_RESPONSES)
    def memories(
        caller: me,
        after: Annotated[str | None, Query(max_length=AFTER_MOST)] = None,
        limit: Annotated[int, Query(ge=1, le=PAGE_MOST)] = PAGE,
    ) -> MemoriesOut:
        """Your own private bank (never another agent's), oldest first, a page at a time.

        ``limit`` (1,000 unless asked; 10,000 at most; fewer past 1 Mi characters) after
        the memory ``after``: give the answer's ``next`` as ``after`` for the next page.
        """
        found, following = service.memories(caller, after, limit)
        return {"memories": found, "next": following}

    @app.post("/v1/depart", response_model=DepartureOut, responses=ERROR_RESPONSES)
    def depart(caller: me, body: DepartIn | None = None) -> DepartureOut:
        """Checkpoint what you can see now; your private bank is quarantined.

        A departure dated before your latest return is refused (422).
        """
        body = body or DepartIn()
        return service.depart(caller, body.at, body.returning_to)

    @app.post("/v1/return", response_model=AgentDecisionOut, responses=ERROR_RESPONSES)
    async def return_(request: Request, caller: me, body: ReturnIn | None = None) -> Response:
        """Run the return pipeline: the signed Return View, or the withheld decision.

        With no body, or no task and purpose, the return is to what your departure named.
        """
        body = body or ReturnIn()
        if "policy" in body.model_fields_set:
            raise PolicyNotAccepted(
                "a returning agent cannot choose its policy; the server's operator sets it"
            )

        named = (body.task, body.purpose)  # none: the departure's, found under the turn

        def work() -> bytes:
            # `Service.return_` answers in the shape's key order (`decision_json`): serialised
            # here, in the worker thread, FastAPI does not check it again on the event loop.
            return decision_json(service.return_(caller, *named, body.at, cancel))

        async def decide() -> bytes:
            if pool is not None:
                with service.returning(caller, *named):
                    return await pool.return_(caller, *named, body.at, cancel)
            return await anyio.to_thread.run_sync(work)

        async with _slot(service.throttle, (caller.workspace, caller.agent.id)) as cancel:
            answer = await _until_gone(request, cancel, decide)
        return Response(answer, media_type="application/json")

    @app.post(
        "/v1/verify",
        response_model=VerifyOut,
        responses=VERIFY_RESPONSES,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": VerifyIn.model_json_schema()}},
            }
        },
    )
    async def verify(request: Request) -> VerifyOut:
        """Check a Return View's signature, item digests and expiry.

        The body is parsed strictly: a repeated key (a view that reads one way to its
        consumer and another to the verifier) is a 422 ``invalid_input``; NaN, deep nesting
        or a huge number, like a body that is not JSON, a 422 ``invalid_request``. At most
        `VERIFY_READING` bodies are received and `VERIFY_SLOTS` views checked at once (429
        past either; the former unread).
        """
        routed_query(request)  # it takes none: a view sent in the query is not the one read
        client = request.client.host if request.client else ""
        if len(reading) >= VERIFY_READING or reading.count(client) >= VERIFY_READING_PER_CLIENT:
            raise RateLimited("too many views being sent at once; try again", 1)
        reading.append(client)  # each may hold a whole body: one more is refused unread
        try:
            sent = await request.body()
        finally:
            reading.remove(client)
        if verifying[0] >= VERIFY_SLOTS:  # no key needed: bounded for all callers together
            raise RateLimited("too many views being verified at once; try again", 1)
        verifying[0] += 1
        try:  # off the event loop: a large view takes seconds to parse and check
            return await anyio.to_thread.run_sync(verified, service, sent)
        finally:
            verifying[0] -= 1

    verifying, reading = [0], list[str]()  # views being checked; senders of views arriving

    @app.get("/v1/decisions", response_model=DecisionsOut, responses=ERROR_RESPONSES)
    def decisions(
        caller: me,
        after: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=PAGE_MOST)] = PAGE,
    ) -> DecisionsOut:
        """Your return decisions (the audit log, as far as it is yours), oldest first.

        Numbered from 1 for you: ``limit`` at most (1,000 unless asked; 10,000 at most)
        numbered after ``after``; give the answer's ``next`` as ``after`` for the next
        page, until it is ``null``.
        """
        found, following = service.decisions(caller, after, limit)
        return {"decisions": found, "next": following}

    @app.get(
        "/v1/decisions/{decision_id}", response_model=AgentDecisionOut, responses=ERROR_RESPONSES
    )
    def explain(decision_id: int, caller: me) -> Response:
        """Why each item of one of your decisions was kept or excluded.

        The same shape as the answer of the return that made it.
        """
        shown = service.explain(caller, decision_id)  # shape checked, as for a return
        return Response(decision_json(shown), media_type="application/json")

    @app.get("/v1/state", response_model=StateOut, responses=ERROR_RESPONSES)
    def state(
        caller: me,
        after: Annotated[str | None, Query(max_length=AFTER_MOST)] = None,
        limit: Annotated[int, Query(ge=1, le=PAGE_MOST)] = PAGE,
    ) -> StateOut:
        """The active items you may read now, by id, a page at a time.

        ``limit`` (1,000 unless asked; 10,000 at most; fewer past 1 Mi characters) after
        ``after``: give the answer's ``next`` as ``after`` for the next page, until ``null``.
        """
        items, following = service.state(caller, after, limit)
        return {"items": items, "next": following}


VERIFY_SLOTS = 2
"""Views ``/v1/verify`` checks at once: it needs no key, so a flood of large views must not
take every core (or queue without bound) from the agents' requests."""
VERIFY_READING, VERIFY_READING_PER_CLIENT = 16, 2
"""Views ``/v1/verify`` receives at once, in all and from one address. Each may hold a
body of ``--max-body-bytes`` while it arrives (``--body-timeout``): 1,024 connections each
sending 8 MiB but its last byte held the server at 8.5 GiB. One address holding every
place would keep everyone else from verifying."""


@asynccontextmanager
async def _slot(throttle: Throttle, agent: tuple[str, str]) -> AsyncIterator[threading.Event]:
    """``agent``'s return slot (`Throttle.return_slot`), off the event loop where it waits.

    A shared throttle's are leases in the store: taken and given back in a worker thread.
    A process's own are taken in memory, here (two thread hops a return for nothing).
    """
    slot = throttle.return_slot(agent)
    if not throttle.stored:
        with slot as cancel:
            yield cancel
        return
    cancel = await anyio.to_thread.run_sync(slot.__enter__)
    try:
        yield cancel
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(slot.__exit__, None, None, None)


async def _until_gone(
    request: Request, cancel: threading.Event, work: Callable[[], Awaitable[bytes]]
) -> bytes:
    """Await ``work``; set ``cancel`` if the client disconnects meanwhile."""

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        cancel.set()

    outcome: list[bytes | BaseException] = []
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            outcome.append(await work())
        except Exception as exc:  # re-raised below, not wrapped in the group's ExceptionGroup
            outcome.append(exc)
        group.cancel_scope.cancel()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _nearest(request: Request) -> str:
    """The hint "did you mean P? " for the API path P nearest to the request's, if one is near."""
    path = request.url.path
    patterns = [getattr(route, "path_regex", None) for route in request.app.routes]
    trimmed = path.rstrip("/")
    if trimmed != path and any(p is not None and p.match(trimmed) for p in patterns):
        return f"did you mean {trimmed}? "
    paths = [getattr(route, "path", "") for route in request.app.routes]
    close = get_close_matches(path, [p for p in paths if p and "{" not in p], n=1, cutoff=0.8)
    return f"did you mean {close[0]}? " if close else ""


def _methods(request: Request) -> list[str]:
    """Every method some route of the app answers at the request's path."""
    path = request.url.path
    found: set[str] = set()
    for route in request.app.routes:
        methods, pattern = getattr(route, "methods", None), getattr(route, "path_regex", None)
        if methods and pattern is not None and pattern.match(path):
            found |= methods
    return sorted(found)
