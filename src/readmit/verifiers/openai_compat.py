"""A verifier over any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, hosted).

Spec: ``openai-compat:MODEL@BASE_URL``; the key comes from ``READMIT_VERIFIER_API_KEY``
(read by the CLI and service, passed in here). The prompt states explicit rules and a
few short worked examples (written for it, in domains of their own), and asks for one
word, ``yes`` or ``no``. The verdict is read from the probability of that one token:
the confidence in "invalidates" is P(yes) / (P(yes) + P(no)) from the server's
log-probabilities, so a pair costs one prompt and one generated token. Only a verdict
of invalidation (the pairs that may be excluded) gets a second, short request for a
one-sentence reason, unless ``explain`` is off.

A server that does not return log-probabilities falls back, format by format:

1. ``response_format`` ``json_schema`` (strict);
2. ``json_object`` with the schema (llama-cpp-python's server answers 500 to 1);
3. a plain prompt, parsed strictly.

In those formats the confidence is read from the verdict token's log-probabilities
when there are any, else from the answer's own ``confidence``; with neither, 0.5, below
any sensible threshold, so an unconfident verdict never removes an item. Any transport
error, timeout, refusal or unparseable answer after bounded retries raises
`VerifierUnavailable`, and the pipeline withholds the challenged item.
"""

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.verifiers.answers import parse_verdict, token_confidence
from readmit.verifiers.client import Endpoint, endpoint
from readmit.verifiers.prompt import JSON_ASK, ONE_WORD_ASK, WHY, messages, question

__all__ = [
    "API_KEY_ENV",
    "DECIDE_AT_ENV",
    "MODES",
    "SCHEMA",
    "TIMEOUT_ENV",
    "OpenAICompatVerifier",
    "endpoint",
    "factory",
    "parse_verdict",
    "question",
    "token_confidence",
]

API_KEY_ENV = "READMIT_VERIFIER_API_KEY"
DECIDE_AT_ENV = "READMIT_VERIFIER_DECIDE_AT"
"""P(yes) at or above which a one-token verdict says "invalidates" (calibrated per model;
the policy's τ still applies to the verdict's confidence)."""
TIMEOUT_ENV = "READMIT_VERIFIER_TIMEOUT"
"""Seconds one request may take (default 60; a small local model on a busy CPU needs more)."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["invalidates", "compatible"]},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
MODES = ("token", "json_schema", "json_object", "plain")


class _Unsupported(Exception):
    """The server refused this response format."""


@dataclass
class OpenAICompatVerifier(Endpoint):
    """`Verifier` over ``/chat/completions`` of one model."""

    max_tokens: int = 96
    """The most tokens a reason or a structured answer may take."""
    schema: dict[str, Any] = field(default_factory=lambda: dict(SCHEMA))
    """The JSON schema of a verdict sent with the structured formats."""
    mode: str = "token"
    """The first format to try; moves down `MODES` when a server refuses one."""
    decide_at: float = 0.5
    """P(yes) at or above which a one-token verdict is "invalidates", with confidence P(yes).
    A small model's P(yes) runs low on premise changes; bench/verifiers.py sets this
    from the tune split of the labeled pairs."""
    explain: bool = False
    """Ask for a one-sentence reason when a one-token verdict says "invalidates" (a second
    request; on a 2-core CPU about 24 more generated tokens and 5 s, more than the verdict)."""
    keepalive: object | None = field(default=None, repr=False)
    """Whatever must live as long as the verifier (an in-process server)."""
    label: str | None = None
    """The identity to report and cache under, when the URL is not one (a loopback port)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Guards ``mode``: the service judges from several worker threads."""

    @property
    def name(self) -> str:
        return self.label or f"openai-compat:{self.model}@{self.base_url}"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [self._judge(pair) for pair in pairs]

    def _judge(self, pair: Pair) -> Verdict:
        prompt = question(pair)
        while True:
            mode = self.mode
            try:
                if mode == "token":
                    return self._by_token(prompt)
                return parse_verdict(self._post(self._request(prompt, mode)))
            except _Unsupported:
                self.refused(mode)

    def _by_token(self, prompt: str) -> Verdict:
        chat = messages(prompt, ONE_WORD_ASK)
        p = token_confidence(self._post(self._request_token(chat)))
        if p is None:
            raise _Unsupported  # no log-probabilities: a structured format will do
        if p < self.decide_at:
            return Verdict(invalidates=False, confidence=1 - p, reason=f"P(yes) = {p:.2f}")
        reason = f"P(yes) = {p:.2f}"
        if self.explain:
            reason = self._reason(chat) or reason
        return Verdict(invalidates=True, confidence=p, reason=reason)

    def _reason(self, chat: list[dict[str, str]]) -> str:
        follow_up = [
            *chat,
            {"role": "assistant", "content": "yes"},
            {"role": "user", "content": WHY},
        ]
        request = {**self._request_token(follow_up), "max_tokens": self.max_tokens}
        body = self._post(request)
        try:
            return str(body["choices"][0]["message"]["content"] or "").strip()[:500]
        except (KeyError, IndexError, TypeError) as exc:
            raise VerifierUnavailable(f"{self.name}: malformed completion: {exc!r}") from exc

    def refused(self, mode: str) -> None:
        """The server refused ``mode``: move to the next format, unless another call already did.

        The service judges from several threads; two that see the same format refused
        must step down once, not twice (which would skip a format that works).

        Raises:
            VerifierUnavailable: when no format is left.
        """
        with self._lock:
            if self.mode != mode:
                return
            following = MODES.index(mode) + 1
            if following == len(MODES):
                raise VerifierUnavailable(f"{self.name}: no response format works") from None
            self.mode = MODES[following]

    def _request_token(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        return {
            "model": self.model,
            "temperature": 0,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": 10,
            "messages": messages,
        }

    def _request(self, prompt: str, mode: str) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "logprobs": True,
            "top_logprobs": 5,
            "messages": messages(prompt, JSON_ASK),
        }
        if mode == "json_schema":
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": self.schema, "strict": True},
            }
        elif mode == "json_object":
            request["response_format"] = {"type": "json_object", "schema": self.schema}
        return request

    def _post(self, request: dict[str, Any]) -> dict[str, Any]:
        structured = "response_format" in request or request["max_tokens"] == 1

        def refuses_format(response: httpx.Response) -> None:
            if response.status_code in (400, 422, 500, 501) and structured:
                raise _Unsupported

        body: dict[str, Any] = self.client.post("/chat/completions", request, refuses_format)
        return body


def factory(argument: str, settings: Mapping[str, str] | None = None) -> OpenAICompatVerifier:
    """Build from ``MODEL@BASE_URL``.

    Raises:
        ConfigError: if the argument is not ``MODEL@http(s)://...``.
    """
    model, url = endpoint(argument, "openai-compat:")
    settings = settings or {}
    return OpenAICompatVerifier(
        model=model,
        base_url=url,
        api_key=settings.get(API_KEY_ENV),
        decide_at=_number(settings, DECIDE_AT_ENV, "0.5", 0.0, 1.0),
        timeout=timeout_setting(settings),
    )


def timeout_setting(settings: Mapping[str, str]) -> float:
    """The request timeout ``settings`` give (`TIMEOUT_ENV`), 60 s if none.

    Raises:
        ConfigError: if it is not a number of seconds in (0, 86400].
    """
    return _number(settings, TIMEOUT_ENV, "60", 0.001, 86400.0)


def _number(settings: Mapping[str, str], name: str, default: str, low: float, high: float) -> float:
    text = settings.get(name, default)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not low <= value <= high:
        raise ConfigError(f"{name} must be a number in [{low:g}, {high:g}], not {text!r}")
    return value
