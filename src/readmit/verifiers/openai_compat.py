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
DECIDE_AT_ENV = "READMIT_VERIFIER_DECIDE_AT"
"""P(yes) at or above which a one-token verdict says "invalidates" (calibrated per model;
the policy's τ still applies to the verdict's confidence)."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["invalidates", "compatible"]},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
RULES = """\
You check whether a LATER observation makes an EARLIER note unsafe to act on now.

It invalidates the note ("yes") when:
1. it cancels, withdraws or replaces the very thing the note names (the same booking, \
person, place, code or account), or
2. it changes a premise of the note: because of it, acting on the note now would be \
wrong or pointless (what the note serves was called off, the person can no longer do \
it, the thing it needs is gone).

It does not invalidate the note ("no") when:
3. it only shares a topic or a name and adds a detail that fits the note;
4. it withdraws a different thing that only shares a word with the note's thing: a \
name with another word or a suffix added or changed ("Maple Cleaners" is not "Maple \
Bakery", "court 3B" is not "court 3") is another thing, and the note stays valid;
5. it has nothing to do with the note;
6. the note itself records a change ("moved from X to Y", "switched to Y"): the note \
is current, and withdrawing the old X does not invalidate it.
"""
ONE_WORD_ASK = "Answer with one word: yes or no."
JSON_ASK = (
    'Reply as JSON: {"verdict": "invalidates" | "compatible", "reason": "<one sentence>"} '
    '("invalidates" for yes, "compatible" for no).'
)
WHY = "In one short sentence: what in the later observation makes the earlier note unsafe?"


@dataclass(frozen=True, slots=True)
class Example:
    """A worked example: a pair, the right answer, and why (written for the prompt)."""

    earlier: str
    later: str
    invalidates: bool
    why: str
    replaced: str | None = None
    """What the later observation replaced, if it replaced something."""


EXAMPLES = (
    Example(
        "Buy a cake for Mia's party on Saturday.",
        "Mia's party was called off; she has the flu.",
        True,
        "rule 2: the party the cake is for was called off",
    ),
    Example(
        "Water the tomato beds every evening.",
        "The tomato beds get full sun in the afternoon.",
        False,
        "rule 3: a detail about the same beds",
    ),
    Example(
        "Take the van to Harbor Garage for its service on Tuesday.",
        "Cliffside Garage services our van now.",
        True,
        "rule 1: the garage the note names was replaced",
        replaced="Harbor Garage services our van.",
    ),
    Example(
        "Feed Pepper the grain-free food twice a day.",
        "No longer valid: Pepper Junior's swim class is on Sundays.",
        False,
        "rule 4: Pepper Junior is someone else",
    ),
    Example(
        "Reserve court 3 for Sunday's tennis match.",
        "No longer valid: Court 3B is free on Sunday afternoons.",
        False,
        "rule 4: court 3B is another court",
    ),
    Example(
        "Pick up the shirts from Maple Cleaners after work.",
        "No longer valid: The Maple Bakery order for the party is ready.",
        False,
        "rule 4: Maple Bakery is another shop",
    ),
    Example(
        "Mow the lawn on Saturday mornings.",
        "We sold the house and moved into a flat with no garden.",
        True,
        "rule 2: there is no lawn to mow any more",
    ),
    Example(
        "Sign Leo up for the under-12 football team.",
        "Leo turned 13 last week.",
        True,
        "rule 2: Leo is too old for that team now",
    ),
    Example(
        "The choir moved from St. Anne's hall to the Elm Street school.",
        "No longer valid: The choir rehearses in St. Anne's hall.",
        False,
        "rule 6: the note already records the move",
    ),
)
"""Short worked examples in domains of their own (none is from a labeled set)."""
MODES = ("token", "json_schema", "json_object", "plain")
_VERDICT = re.compile(r"\b(invalidates|compatible)\b", re.IGNORECASE)
_ANSWERS = {"yes": True, "no": False}


def question(pair: Pair) -> str:
    """The pair as the model sees it: both texts in order, and what the earlier relies on."""
    replaced = pair.later.withdrawn_text if pair.later.replacement_text is not None else None
    earlier = pair.earlier.text
    if pair.premises:  # what the note relies on, so a premise change can be judged in context
        earlier += " (It relies on: " + "; ".join(f'"{p}"' for p in pair.premises) + ")"
    return _question(earlier, pair.later.text, replaced)


def _question(earlier: str, later: str, replaced: str | None) -> str:
    if replaced is not None:
        later = f'{later} (This replaces the earlier record: "{replaced}")'
    return f"EARLIER: {earlier}\nLATER: {later}\nDoes LATER invalidate EARLIER?"


@dataclass
class OpenAICompatVerifier:
    """`Verifier` over ``/chat/completions`` of one model."""

    model: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    retries: int = 2
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
    calls: int = 0
    tokens_used: int = 0
    generated_tokens: int = 0
    """Of ``tokens_used``, those the model generated (the rest is prompt)."""
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
        messages = _messages(prompt, ONE_WORD_ASK)
        p = token_confidence(self._post(self._request_token(messages)))
        if p is None:
            raise _Unsupported  # no log-probabilities: a structured format will do
        if p < self.decide_at:
            return Verdict(invalidates=False, confidence=1 - p, reason=f"P(yes) = {p:.2f}")
        reason = f"P(yes) = {p:.2f}"
        if self.explain:
            reason = self._reason(messages) or reason
        return Verdict(invalidates=True, confidence=p, reason=reason)

    def _reason(self, messages: list[dict[str, str]]) -> str:
        follow_up = [
            *messages,
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
            "messages": _messages(prompt, JSON_ASK),
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

        def inspect(response: httpx.Response) -> None:
            with self._lock:
                self.calls += 1
            if response.status_code in (400, 422, 500, 501) and structured:
                raise _Unsupported

        response = post_with_retries(
            f"{self.base_url}/chat/completions",
            request,
            name=self.name,
            api_key=self.api_key,
            timeout=self.timeout,
            retries=self.retries,
            inspect=inspect,
        )
        body: dict[str, Any] = response.json()
        usage = body.get("usage", {})
        with self._lock:
            self.tokens_used += int(usage.get("total_tokens", 0))
            self.generated_tokens += int(usage.get("completion_tokens", 0))
        return body


def _messages(prompt: str, ask: str) -> list[dict[str, str]]:
    # The rules and examples come first and never change, so a server that caches
    # prompt prefixes (llama.cpp does) processes only the pair itself.
    messages = [{"role": "system", "content": f"{RULES}\n{ask}"}]
    for example in EXAMPLES:
        messages += [
            {
                "role": "user",
                "content": _question(example.earlier, example.later, example.replaced),
            },
            {"role": "assistant", "content": _answer(example, ask)},
        ]
    return [*messages, {"role": "user", "content": prompt}]


def _answer(example: Example, ask: str) -> str:
    if ask == ONE_WORD_ASK:
        return "yes" if example.invalidates else "no"
    verdict = "invalidates" if example.invalidates else "compatible"
    return json.dumps({"verdict": verdict, "reason": example.why})


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
    settings = settings or {}
    return OpenAICompatVerifier(
        model=model,
        base_url=url,
        api_key=settings.get(API_KEY_ENV),
        decide_at=_cut_off(settings.get(DECIDE_AT_ENV, "0.5")),
    )


def _cut_off(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{DECIDE_AT_ENV} must be a number in [0, 1], not {text!r}")
    return value


def token_confidence(body: Mapping[str, Any]) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first answer token's alternatives (any case or space).

    Returns:
        None when the answer carries no log-probabilities.

    Raises:
        VerifierUnavailable: when neither answer is among the likely tokens (a refusal).
    """
    try:
        first = body["choices"][0]["logprobs"]["content"][0]
    except (KeyError, IndexError, TypeError):
        return None
    options = [*first.get("top_logprobs", []), first]
    mass = {True: 0.0, False: 0.0}
    seen: set[tuple[str, float]] = set()
    for option in options:
        token, logprob = str(option.get("token", "")), option.get("logprob")
        answer = _ANSWERS.get(token.strip().lower())
        if answer is None or logprob is None or (token, logprob) in seen:
            continue
        seen.add((token, logprob))
        mass[answer] += math.exp(logprob)
    if mass[True] + mass[False] == 0:
        raise VerifierUnavailable(f"answered neither yes nor no: {first.get('token')!r}")
    return mass[True] / (mass[True] + mass[False])
