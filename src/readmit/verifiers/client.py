"""One HTTP client for OpenAI-compatible endpoints, shared by every model-backed part.

The verifier (``/chat/completions``), the embedder (``/embeddings``), the dependency
scan and the bench's reader all post JSON through `OpenAICompatClient`: one
`httpx.Client` (connections reused; a transport can be injected, e.g. httpx's own
``MockTransport`` in tests), a per-request timeout, bounded retries with exponential
backoff on transport errors and 5xx answers, and one set of counters under one set of
names: `Usage` (``calls``, ``tokens_used``, ``generated_tokens``).
"""

import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from readmit.errors import ConfigError, VerifierUnavailable
from readmit.urls import shown


@dataclass
class Usage:
    """What an endpoint was asked and what it spent: every part reports these names."""

    calls: int = 0
    """HTTP answers received, refusals and retried errors included."""
    tokens_used: int = 0
    """Prompt and generated tokens, as the server reported them."""
    generated_tokens: int = 0
    """Of ``tokens_used``, those the model generated."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """The service judges from several worker threads."""

    def answered(self) -> None:
        """Count one HTTP answer."""
        with self._lock:
            self.calls += 1

    def spent(self, usage: object) -> None:
        """Add a body's ``usage`` block (absent or malformed counts as nothing)."""
        if not isinstance(usage, Mapping):
            return
        prompt, generated = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
        total = _count(usage, "total_tokens") or prompt + generated
        with self._lock:
            self.tokens_used += total
            self.generated_tokens += generated


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


Inspect = Callable[[httpx.Response], None]
"""Sees every answer before the status is judged (to raise on a refusal it understands)."""


@dataclass
class OpenAICompatClient:
    """POSTs JSON to one OpenAI-compatible base URL; answers are JSON objects or unavailable."""

    base_url: str
    name: str
    """Who is asking, in every error (a verifier's or scan's spec)."""
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    """Seconds a request may take (connect, each read, write)."""
    retries: int = 2
    """Further attempts after a transport error or a 5xx answer."""
    backoff: float = 0.25
    """Seconds before the first retry; doubled before each next one."""
    http: httpx.Client | None = field(default=None, repr=False)
    """The connection pool; created on first use unless given (to share or inject one)."""
    usage: Usage = field(default_factory=Usage)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    """Waits out a backoff (a test passes its own clock)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.timeout <= 0 or self.retries < 0 or self.backoff < 0:
            raise ConfigError(f"{self.name}: timeout > 0, retries >= 0 and backoff >= 0")
        if self.api_key is not None and not (self.api_key.isascii() and self.api_key.isprintable()):
            raise ConfigError(f"{self.name}: the API key must be printable ASCII (a header)")

    def post(self, path: str, payload: Mapping[str, Any], inspect: Inspect | None = None) -> Any:
        """POST ``payload`` to ``base_url + path``; the answer's JSON object, usage counted.

        Raises:
            VerifierUnavailable: naming `name`, when no acceptable answer comes after the
                retries, or the answer is not a JSON object. Whatever ``inspect`` raises
                passes through.
        """
        response = self._send(f"{self.base_url}{path}", payload, inspect)
        try:
            body = response.json()
        except ValueError as exc:
            raise VerifierUnavailable(f"{self.name}: the answer is not JSON") from exc
        if not isinstance(body, dict):
            raise VerifierUnavailable(f"{self.name}: the answer is not a JSON object")
        self.usage.spent(body.get("usage"))
        return body

    def close(self) -> None:
        """Close the connection pool (a later request opens a new one)."""
        with self._lock:
            http, self.http = self.http, None
        if http is not None:
            http.close()

    def _send(
        self, url: str, payload: Mapping[str, Any], inspect: Inspect | None
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self._pool().post(
                    url, json=payload, headers=headers, timeout=self.timeout
                )
            except httpx.HTTPError as exc:
                if last:
                    raise VerifierUnavailable(f"{self.name}: {exc!r}") from exc
                self._wait(attempt)
                continue
            self.usage.answered()
            if inspect is not None:
                inspect(response)
            if response.status_code < 400:
                return response
            if last or response.status_code < 500:
                raise VerifierUnavailable(f"{self.name}: HTTP {response.status_code}")
            self._wait(attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover

    def _pool(self) -> httpx.Client:
        with self._lock:
            if self.http is None:
                self.http = httpx.Client()
                # A pool of our own closes its kept-alive connections when this client goes
                # (a pool that was given belongs to whoever gave it).
                weakref.finalize(self, self.http.close)
            return self.http

    def _wait(self, attempt: int) -> None:
        if self.backoff:
            self.sleep(self.backoff * 2**attempt)


@dataclass
class Endpoint:
    """One model behind an OpenAI-compatible API, asked through its own `client`.

    The verifier, the embedder, the dependency scan and the bench's reader are each
    one; their counters have one set of names.
    """

    model: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    retries: int = 2
    http: httpx.Client | None = field(default=None, repr=False)
    """The connection pool to use (shared, or with an injected transport); one of its own
    if not given."""
    client: OpenAICompatClient = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.client = OpenAICompatClient(
            self.base_url,
            self.name,
            api_key=self.api_key,
            timeout=self.timeout,
            retries=self.retries,
            http=self.http,
        )

    @property
    def name(self) -> str:
        """Who answers, in error messages and reports."""
        return f"openai-compat:{self.model}@{self.base_url}"

    @property
    def usage(self) -> Usage:
        """Calls, tokens and generated tokens so far."""
        return self.client.usage

    @property
    def calls(self) -> int:
        return self.client.usage.calls

    @property
    def tokens_used(self) -> int:
        return self.client.usage.tokens_used

    @property
    def generated_tokens(self) -> int:
        """Of ``tokens_used``, those the model generated (the rest is prompt)."""
        return self.client.usage.generated_tokens


def endpoint(spec: str, where: str) -> tuple[str, str]:
    """``MODEL@BASE_URL`` → (model, base URL without a trailing slash).

    Raises:
        ConfigError: naming ``where`` the spec came from, if it is not ``MODEL@http(s)://...``
            (an ``@`` in the URL included: a user or password would be echoed wherever the
            verifier's name is; the spec is quoted without what could be one, `shown`).
    """
    model, sep, url = spec.partition("@")
    if not sep or not model or not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where} {shown(spec)!r}: write MODEL@http(s)://HOST/v1")
    if "@" in url or shown(url) != url:
        raise ConfigError(
            f"{where} {shown(spec)!r}: the URL may hold no @, % or 'pass' (a user or "
            "password would be shown wherever the spec is); give the API key in the "
            "option's own variable (READMIT_VERIFIER_API_KEY, READMIT_EMBEDDINGS_API_KEY, "
            "READMIT_BENCH_API_KEY)"
        )
    try:
        parsed = httpx.URL(url)
        host, port = parsed.host, parsed.port  # an IDNA host fails only when read
        host.encode("idna")  # an empty or over-long label fails at the first request
    except (httpx.InvalidURL, ValueError) as exc:
        raise ConfigError(f"{where} {shown(spec)!r}: the URL is malformed ({exc})") from None
    if not host or any(c.isspace() for c in url) or not (port is None or 0 < port < 65536):
        raise ConfigError(
            f"{where} {shown(spec)!r}: the URL is malformed (write http(s)://HOST[:PORT]/v1)"
        )
    return model, url.rstrip("/")
