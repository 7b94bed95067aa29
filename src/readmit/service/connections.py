"""What `readmit serve` lets a connection hold: deadlines for each request, and caps.

uvicorn waits for a request's headers as long as the client keeps the connection open,
and takes every connection the operating system hands it: 20,000 connections that each
sent half a request line exhausted the server's file descriptors, and ``/health``
stopped answering until they closed (stop 42). `guarded` makes uvicorn's h11 protocol

- close a connection that has not sent a whole request head within ``header_timeout``
  seconds of opening, or of the response before (a keep-alive connection waits the
  same for its next request once it has started sending it; uvicorn's own keep-alive
  timeout closes an idle one sooner);
- close a connection whose request body has not all arrived within ``body_timeout``
  seconds of its head, plus a second for each ``body_rate`` bytes (16 KiB) it has sent,
  and never ``body_timeout`` after the last of them:
  a head and then a byte now and then held a connection (and a place under both caps)
  for as long as the client liked, while an 8 MiB body at 400 KiB/s still arrives. Time
  in which the server itself is not reading (the app has not asked for more of the
  body yet, or has yet to answer ``Expect: 100-continue``) is not the client's: the
  deadline then starts again;
- close at once a connection past ``max_connections`` open in all, or past
  ``per_client`` open from one address, before reading anything from it.

How large a body may be, and how many bytes an agent may send, are the app's limits
(`readmit.service.body`, `readmit.service.gate`).
"""

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

_LOG = logging.getLogger("readmit.serve")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for request heads and caps on connections."""

    header_timeout = 10.0
    body_timeout = 30.0
    body_rate = 16 * 1024.0
    """Bytes a second a body that takes longer than ``body_timeout`` must keep coming at."""
    max_connections = 1024
    per_client = 64

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._waiting: object = None
        """The cycle that was current when the wait for a head began (none at first)."""
        self._body_timer: asyncio.TimerHandle | None = None
        self._body_since = 0.0
        """When the current body's deadline started (its head, or the server reading on)."""
        self._body_bytes = 0
        """What has arrived of it since."""
        self._body_last = 0.0
        """When the last of it arrived."""
        self._server_wait = False
        """Whether the server has yet to read on: ``Expect: 100-continue`` unanswered."""
        self._owed: object = None
        """The cycle whose body deadline passed while the server was not reading."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        refused = self._refusal()
        if refused:
            _LOG.warning("closed a connection from %s: %s", self._host(), refused)
            transport.close()
            return
        resume = self.flow.resume_reading

        def resumed() -> None:  # the server reads again: the client's time runs again
            cycle, held = self.cycle, self.flow.read_paused or self._server_wait
            timed = self._body_timer is not None
            if self._owed is cycle or (timed and held):
                self._await_body(cycle)
            resume()

        self.flow.resume_reading = resumed  # type: ignore[method-assign]
        self._await_head()

    def data_received(self, data: bytes) -> None:
        timed = self._body_timer is not None
        super().data_received(data)
        self._head_seen()
        if self._body_timer is not None and not self._body_due(self.cycle):
            self._stop_body()
        elif timed:
            self._body_bytes += len(data)
            self._body_last = self.loop.time()

    def on_response_complete(self) -> None:
        self._await_head()
        super().on_response_complete()
        self._head_seen()  # a pipelined request already parsed

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        self._stop_body()
        super().connection_lost(exc)

    def _refusal(self) -> str:
        """Why this new connection is one too many ("" if it is not)."""
        if len(self.connections) > self.max_connections:
            return f"more than {self.max_connections} connections open"
        host = self._host()
        same = sum(1 for c in self.connections if _host(c) == host)
        return (
            f"more than {self.per_client} connections open from it"
            if same > self.per_client
            else ""
        )

    def _host(self) -> str | None:
        return _host(self)

    def _await_head(self) -> None:
        self._stop()
        self._waiting = self.cycle
        self._head_timer = self.loop.call_later(self.header_timeout, self._late)

    def _head_seen(self) -> None:
        if self._head_timer is not None and self.cycle is not self._waiting:
            self._stop()
            self._await_body(self.cycle)

    def _await_body(self, cycle: object) -> None:
        self._stop_body()
        self._owed = None
        if self._body_due(cycle):
            self._body_since = self._body_last = self.loop.time()
            self._body_bytes = len(getattr(cycle, "body", b""))  # come with its head
            self._server_wait = bool(getattr(cycle, "waiting_for_100_continue", False))
            self._body_timer = self.loop.call_later(self.body_timeout, self._slow_body, cycle)

    @staticmethod
    def _body_due(cycle: object) -> bool:
        """Whether ``cycle``'s request body has yet to arrive in full."""
        return bool(getattr(cycle, "more_body", False))

    def _stop_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _slow_body(self, cycle: object) -> None:
        self._body_timer = None
        if cycle is not self.cycle or not self._body_due(cycle) or self.transport.is_closing():
            return
        if self.flow.read_paused or getattr(cycle, "waiting_for_100_continue", False):
            self._owed = cycle  # the server is not reading: a new deadline once it reads
            return
        allowed = min(  # a large body coming at the least rate or faster, and coming still
            self._body_since + self.body_timeout + self._body_bytes / self.body_rate,
            self._body_last + self.body_timeout,
        )
        if self.loop.time() < allowed:
            self._body_timer = self.loop.call_at(allowed, self._slow_body, cycle)
            return
        _LOG.info("closed a connection from %s: no whole request body within %ss",
                  self._host(), self.body_timeout)  # fmt: skip
        self.transport.close()

    def _stop(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _late(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            _LOG.info("closed a connection from %s: no request head within %ss",
                      self._host(), self.header_timeout)  # fmt: skip
            self.transport.close()


def _host(protocol: object) -> str | None:
    """The address a connection (any of uvicorn's protocols) came from."""
    client = getattr(protocol, "client", None)
    return None if client is None else str(client[0])


def guarded(
    header_timeout: float,
    max_connections: int,
    per_client: int,
    body_timeout: float = 30.0,
    body_rate: float = 16 * 1024.0,
) -> type[H11Protocol]:
    """The protocol class to give uvicorn (``http=``) with these bounds."""
    bounds = {
        "header_timeout": header_timeout,
        "body_timeout": body_timeout,
        "body_rate": body_rate,
        "max_connections": max_connections,
        "per_client": per_client,
    }
    return type("GuardedH11Protocol", (GuardedH11Protocol,), bounds)
