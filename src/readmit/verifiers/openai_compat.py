"""A verifier over any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, hosted).

Spec: ``openai-compat:MODEL@BASE_URL``; the key comes from ``READMIT_VERIFIER_API_KEY``
(read by the CLI and service, passed in here). For each proposed pair it asks for a
structured verdict, falling back when a server does not support a format:

1. ``response_format`` ``json_schema`` (strict);
2. ``json_object`` with the schema (llama-cpp-python's server answers 500 to 1);
3. a plain prompt, parsed strictly.

The confidence is read from the log-probabilities of the verdict token when the
server returns them (small models' self-reported confidence is nearly constant),
else from the answer's own ``confidence``; with neither, 0.5, below any sensible
threshold, so an unconfident verdict never removes an item. Any transport error,
timeout, refusal or unparseable answer after bounded retries raises
`VerifierUnavailable`, and the pipeline withholds the challenged item.
"""

import json
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.errors import ConfigError, VerifierUnavailable

API_KEY_ENV = "READMIT_VERIFIER_API_KEY"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["invalidates", "compatible"]},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
SYSTEM = (
    "You check whether a later observation makes an earlier statement unsafe to act on now. "
    "Say 'invalidates' only when acting on the earlier statement today would be wrong because "
    "of the later observation (it changed a fact or a premise the statement relies on). Sharing "
    "a topic is not invalidation. Reply as JSON: "
    '{"verdict": "invalidates" | "compatible", "reason": "<one sentence>"}.'
)
MODES = ("json_schema", "json_object", "plain")
_VERDICT = re.compile(r"\b(invalidates|compatible)\b", re.IGNORECASE)


@dataclass
class OpenAICompatVerifier:
    """`Verifier` over ``/chat/completions`` of one model."""

    model: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    retries: int = 2
    max_tokens: int = 96
    schema: dict[str, Any] = field(default_factory=lambda: dict(SCHEMA))
    """The JSON schema of a verdict sent with the structured formats."""
    mode: str = "json_schema"
    """The first response format to try; moves down `MODES` when a server refuses one."""
    calls: int = 0
    tokens_used: int = 0
    keepalive: object | None = field(default=None, repr=False)
    """Whatever must live as long as the verifier (an in-process server)."""
    label: str | None = None
    """The identity to report and cache under, when the URL is not one (a loopback port)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Guards ``mode`` and the counters: the service judges from several worker threads."""

    @property
    def name(self) -> str:
        return self.label or f"openai-compat:{self.model}@{self.base_url}"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [self._judge(pair) for pair in pairs]

    def _judge(self, pair: Pair) -> Verdict:
        prompt = (
            f"Earlier statement (recorded first): {pair.earlier.text}\n"
            f"Later observation (recorded after it): {pair.later.text}\n"
            "Does the later observation invalidate acting on the earlier statement now?"
        )
        while True:
            mode = self.mode
            try:
                return parse_verdict(self._post(prompt, mode))
            except _Unsupported:
                self.refused(mode)

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

    def _request(self, prompt: str, mode: str) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "logprobs": True,
            "top_logprobs": 5,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt},
            ],
        }
        if mode == "json_schema":
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": self.schema, "strict": True},
            }
        elif mode == "json_object":
            request["response_format"] = {"type": "json_object", "schema": self.schema}
        return request

    def _post(self, prompt: str, mode: str) -> dict[str, Any]:
        def inspect(response: httpx.Response) -> None:
            with self._lock:
                self.calls += 1
            if response.status_code in (400, 422, 500, 501) and mode != "plain":
                raise _Unsupported

        response = post_with_retries(
            f"{self.base_url}/chat/completions",
            self._request(prompt, mode),
            name=self.name,
            api_key=self.api_key,
            timeout=self.timeout,
            retries=self.retries,
            inspect=inspect,
        )
        body: dict[str, Any] = response.json()
        with self._lock:
            self.tokens_used += int(body.get("usage", {}).get("total_tokens", 0))
        return body


def post_with_retries(
    url: str,
    payload: dict[str, Any],
    *,
    name: str,
    api_key: str | None,
    timeout: float,
    retries: int,
    inspect: Callable[[httpx.Response], None],
) -> httpx.Response:
    """POST ``payload``; retry transport errors and 5xx answers at most ``retries`` times.

    ``inspect`` sees every answer first (to count it, or to raise on it).

    Raises:
        VerifierUnavailable: naming ``name``, when no acceptable answer comes.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    for attempt in range(retries + 1):
        try:
            response = httpx.post(url, json=payload, headers=headers, timeout=timeout)
        except httpx.HTTPError as exc:
            if attempt == retries:
                raise VerifierUnavailable(f"{name}: {exc!r}") from exc
            time.sleep(0.2 * (attempt + 1))
            continue
        inspect(response)
        if response.status_code < 400:
            return response
        if attempt == retries or response.status_code < 500:
            raise VerifierUnavailable(f"{name}: HTTP {response.status_code}")
    raise VerifierUnavailable(f"{name}: no answer")  # pragma: no cover - loop returns


class _Unsupported(Exception):
    """The server refused this response format."""


def parse_verdict(body: Mapping[str, Any]) -> Verdict:
    """A verdict from a chat completion, with log-probability confidence when available.

    Raises:
        VerifierUnavailable: if the answer is a refusal or cannot be parsed strictly.
    """
    try:
        choice = body["choices"][0]
        content = str(choice["message"]["content"] or "")
    except (KeyError, IndexError, TypeError) as exc:
        raise VerifierUnavailable(f"malformed completion: {exc!r}") from exc
    verdict, reason, stated = _read(content)
    confidence = _logprob_confidence(choice.get("logprobs"), verdict)
    if confidence is None:
        confidence = stated if stated is not None else 0.5
    return Verdict(invalidates=verdict == "invalidates", confidence=confidence, reason=reason)


def _read(content: str) -> tuple[str, str, float | None]:
    text = content.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and str(data.get("verdict", "")).lower() in (
            "invalidates",
            "compatible",
        ):
            stated = data.get("confidence")
            return (
                str(data["verdict"]).lower(),
                str(data.get("reason", ""))[:500],
                float(stated) if isinstance(stated, int | float) and 0 <= stated <= 1 else None,
            )
    found = _VERDICT.findall(text)
    if len({v.lower() for v in found}) == 1:
        return found[0].lower(), text[:500], None
    # The question is a yes/no question: a reply that starts with the answer is strict enough.
    lead = re.match(r"\s*(yes|no)\b", text, re.IGNORECASE)
    if lead and not found:
        return ("invalidates" if lead.group(1).lower() == "yes" else "compatible"), text[:500], None
    raise VerifierUnavailable(f"unparseable verdict: {content[:120]!r}")


def _logprob_confidence(logprobs: Any, verdict: str) -> float | None:
    """P(verdict) / (P(invalidates) + P(compatible)) at the first token that starts either."""
    try:
        tokens = logprobs["content"]
    except (TypeError, KeyError):
        return None
    for position in tokens or []:
        options = [(t.get("token", ""), t.get("logprob")) for t in position.get("top_logprobs", [])]
        options.append((position.get("token", ""), position.get("logprob")))
        mass = {"invalidates": 0.0, "compatible": 0.0}
        for token, logprob in options:
            word = token.strip().strip('"').lower()
            for label in mass:
                if word and logprob is not None and label.startswith(word) and len(word) >= 2:
                    mass[label] = max(mass[label], math.exp(logprob))
        if mass["invalidates"] + mass["compatible"] > 0 and position.get("token", "").strip(
            ' "'
        ).lower()[:2] in ("in", "co"):
            return mass[verdict] / (mass["invalidates"] + mass["compatible"])
    return None


def endpoint(spec: str, where: str) -> tuple[str, str]:
    """``MODEL@BASE_URL`` → (model, base URL without a trailing slash).

    Raises:
        ConfigError: naming ``where`` the spec came from, if it is not ``MODEL@http(s)://...``.
    """
    model, sep, url = spec.partition("@")
    if not sep or not model or not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where} {spec!r}: write MODEL@http(s)://HOST/v1")
    return model, url.rstrip("/")


def factory(argument: str, settings: Mapping[str, str] | None = None) -> OpenAICompatVerifier:
    """Build from ``MODEL@BASE_URL``.

    Raises:
        ConfigError: if the argument is not ``MODEL@http(s)://...``.
    """
    model, url = endpoint(argument, "openai-compat:")
    return OpenAICompatVerifier(
        model=model, base_url=url, api_key=(settings or {}).get(API_KEY_ENV)
    )
