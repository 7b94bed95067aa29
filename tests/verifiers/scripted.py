"""A scripted OpenAI-compatible server: httpx's own MockTransport answering from a script.

The client code runs for real (its httpx.Client, retries, timeouts, parsing); only the
far side of the wire is a function. Each request is kept, its JSON body decoded.
"""

import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

Answer = httpx.Response | Exception | Callable[[dict[str, Any]], httpx.Response]


@dataclass
class Scripted:
    """Answers requests in order from ``script`` (the last answer repeats once it runs out)."""

    script: list[Answer]
    requests: list[httpx.Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def http(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self._handle))

    def _handle(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
            answer = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(json.loads(request.content))
        return answer


def completion(
    content: str,
    *,
    top: list[tuple[str, float]] | None = None,
    usage: dict[str, int] | None = None,
) -> httpx.Response:
    """A chat completion; with ``top``, log-probabilities of the first token's alternatives."""
    choice: dict[str, Any] = {"message": {"role": "assistant", "content": content}}
    if top:
        options = [{"token": t, "logprob": math.log(p)} for t, p in top]
        choice["logprobs"] = {"content": [{**options[0], "top_logprobs": options}]}
    body: dict[str, Any] = {"choices": [choice]}
    if usage is not None:
        body["usage"] = usage
    return httpx.Response(200, json=body)


def status(code: int) -> httpx.Response:
    return httpx.Response(code, json={"error": {"message": f"status {code}"}})
