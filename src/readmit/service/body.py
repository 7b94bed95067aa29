"""The outermost guard of the HTTP service: request body size, and no plain-text 500s.

Runs before routing, so before authentication: a body larger than the limit is
refused from its ``Content-Length`` without reading it, and a body without one
(chunked) is cut off as soon as it passes the limit. An exception nobody
anticipated becomes a JSON 500 with code ``internal`` (the traceback goes to the
server's log, never to the client).
"""

import logging
from collections.abc import Callable

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from readmit.errors import Internal, InvalidInput, PayloadTooLarge
from readmit.service.answers import answer

log = logging.getLogger("readmit.service")


def declared_length(scope: Scope) -> int | None:
    """The request's ``Content-Length``, or ``None`` when it has none (chunked) or a bad one."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


_BOTH = (
    "a request carries Content-Length or Transfer-Encoding, not both (RFC 9112 §6.3: "
    "its length would be read two ways)"
)


def _both_framings(scope: Scope) -> bool:
    """Whether the request declares both a length and a transfer coding.

    The server would read the chunks, and the gate charge the declared length: a body of
    megabytes declared as one byte passed the byte budget.
    """
    names = {name for name, _ in scope.get("headers", [])}
    return b"content-length" in names and b"transfer-encoding" in names


class BodyLimit:
    """ASGI middleware: refuse bodies over ``max_bytes()`` (413) and turn crashes into JSON 500s.

    The limit is read per request, so it is always the service's current one.
    """

    def __init__(self, app: ASGIApp, max_bytes: Callable[[], int]) -> None:
        self.app = app
        self._max_bytes = max_bytes

    @property
    def max_bytes(self) -> int:
        return self._max_bytes()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _both_framings(scope):
            await answer(send, InvalidInput(_BOTH), close=True)
            return
        declared = declared_length(scope)
        if declared is not None and declared > self.max_bytes:
            await answer(send, PayloadTooLarge(self._too_large))
            return
        guard = _Guard(receive, send, self.max_bytes, self._too_large)
        try:
            await self.app(scope, guard.receive, guard.send)
        except ClientDisconnect:  # gone before its body was in (`--body-timeout`): no one to tell
            return
        except Exception:
            if guard.over:
                pass
            elif guard.started:
                raise
            else:
                log.exception("unexpected error in %s %s", scope["method"], scope["path"])
                await answer(send, Internal("internal error (the server's log has it)"))
                return
        if guard.over:
            # Only a chunked body gets here: nothing bounds what its sender still sends.
            await answer(send, PayloadTooLarge(self._too_large), close=True)

    @property
    def _too_large(self) -> str:
        return f"the request body is over the server's limit of {self.max_bytes} bytes"


class _Guard:
    """One request's receive (counting body bytes) and send (noting whether it started)."""

    def __init__(self, receive: Receive, send: Send, max_bytes: int, message: str) -> None:
        self._receive = receive
        self._send = send
        self.max_bytes = max_bytes
        self.message = message
        self.read = 0
        self.over = False
        self.started = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self.read += len(message.get("body", b""))
            if self.read > self.max_bytes:
                self.over = True
                raise PayloadTooLarge(self.message)
        return message

    async def send(self, message: Message) -> None:
        if self.over:
            return  # the app's own answer to a cut-off body is replaced by the 413
        self.started = self.started or message["type"] == "http.response.start"
        await self._send(message)
