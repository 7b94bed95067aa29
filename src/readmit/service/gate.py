"""Who is asking, and may they send this body: decided before the body is read.

Runs inside `readmit.service.body.BodyLimit` (so after the size check) and before
routing. For every route that needs a key (``/v1/...`` but ``/v1/verify``) it
authenticates the ``Authorization: Bearer`` key, takes one token from the agent's
request rate and charges the body's declared ``Content-Length`` (or, for a chunked body,
each chunk as it arrives) to the agent's byte budget (`Limits.byte_rate`). A refusal is
answered here, without reading the body: the server never parses a body only to refuse
it, and parsing a large body costs the one server process time that every other agent's
request needs.

The key is looked up exactly as the routes did before (`Service.authenticate`), so a
missing, malformed or unknown key is one same 401, and a key that exists is never
charged or refused differently from the outside before it has authenticated.
"""

from collections.abc import Awaitable, Callable

import anyio.to_thread
from fastapi import Request
from fastapi.security.utils import get_authorization_scheme_param
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from readmit.errors import Internal, RateLimited, ReadmitError
from readmit.service.answers import answer
from readmit.service.body import declared_length
from readmit.service.operations import Service
from readmit.service.reading import Caller

_CALLER = "readmit.caller"
"""The scope key under which the gate leaves the authenticated `Caller` for the routes."""


def needs_key(scope: Scope) -> bool:
    """Whether the route ``scope`` asks for is one an agent key is needed for."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.startswith("/v1/") and path != "/v1/verify"


def caller_of(request: Request) -> Caller:
    """The agent the gate authenticated for ``request``.

    Raises:
        Internal: if the gate did not see the request (a keyed route outside ``/v1/``).
    """
    found = request.scope.get(_CALLER)
    if not isinstance(found, Caller):
        raise Internal(f"{request.url.path} needs a key but the gate did not check one")
    return found


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, key = get_authorization_scheme_param(value.decode("latin-1"))
            return key if scheme.lower() == "bearer" and key else None
    return None


class AgentGate:
    """ASGI middleware: authenticate, count the request and charge its body, or refuse."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not needs_key(scope):
            await self.app(scope, receive, send)
            return
        declared = declared_length(scope)
        try:
            # The key lookup reads the store: off the event loop, like every route's work.
            caller = await anyio.to_thread.run_sync(self._admit, _bearer(scope), declared or 0)
        except _OverBudget as over:  # its body is on its way: `Limits.refusal_pause`
            await anyio.sleep(min(over.error.retry_after, self.service.limits.refusal_pause))
            await answer(send, over.error)
            return
        except ReadmitError as error:
            await answer(send, error)
            return
        scope[_CALLER] = caller
        if declared is not None:
            await self.app(scope, receive, send)
            return
        meter = _Meter(receive, send, self._charge(caller))
        try:
            await self.app(scope, meter.receive, meter.send)
        except Exception:
            if meter.refused is None:
                raise
        if meter.refused is not None:
            await answer(send, meter.refused, close=True)

    def _charge(self, caller: Caller) -> Callable[[int], Awaitable[None]]:
        """What charges each chunk of ``caller``'s body to its byte budget.

        A shared throttle's take is a write to the store: made in a worker thread, as the
        gate's own admission is (on the event loop it stopped every other request while it
        waited for another process's write, up to SQLite's busy timeout).
        """
        admit = self.service.admit_bytes

        async def charge(count: int) -> None:
            if self.service.throttle.stored:
                await anyio.to_thread.run_sync(admit, caller, count)
            else:
                admit(caller, count)

        return charge

    def _admit(self, key: str | None, length: int) -> Caller:
        caller = self.service.authenticate(key)
        self.service.admit_request(caller)
        if length:
            try:
                self.service.admit_bytes(caller, length)
            except RateLimited as error:
                raise _OverBudget(error) from error
        return caller


class _OverBudget(Exception):
    """A declared body over the agent's byte budget: answered after a pause."""

    def __init__(self, error: RateLimited) -> None:
        super().__init__(str(error))
        self.error = error


class _Meter:
    """A chunked body's receive (charging each chunk) and send (dropped once refused)."""

    def __init__(
        self, receive: Receive, send: Send, charge: Callable[[int], Awaitable[None]]
    ) -> None:
        self._receive = receive
        self._send = send
        self._charge = charge
        self.refused: RateLimited | None = None

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            try:
                await self._charge(len(message.get("body", b"")))
            except RateLimited as error:
                self.refused = error
                raise
        return message

    async def send(self, message: Message) -> None:
        if self.refused is None:  # the app's answer to a refused body is replaced by the 429
            await self._send(message)
