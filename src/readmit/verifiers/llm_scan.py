"""A dependency scan over any OpenAI-compatible chat endpoint: ``openai-compat:MODEL@BASE_URL``.

The model sees one earlier note and up to `batch` later observations, numbered, and
answers with the numbers of those that could make the note unsafe to act on now (or
``0``): a few generated tokens a call. The rules favour recall (a scan proposes; the
verifier decides), and the two worked examples are in domains of their own.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from readmit.admission.invalidation.implicit import Later
from readmit.errors import VerifierUnavailable
from readmit.verifiers.client import Endpoint, endpoint
from readmit.verifiers.openai_compat import API_KEY_ENV

RULES = """\
You find which LATER observations could make an EARLIER note unsafe to act on now.
Name an observation when it cancels, replaces or withdraws what the note names, or \
changes something the note takes for granted: the event it serves was called off or \
moved, the person or thing it needs is gone or changed, a closure, strike, illness, \
move, rule or price change makes acting on it wrong or pointless.
Do not name one that only mentions the same topic and leaves the note workable.
Answer with the numbers of the observations to name, separated by commas, or 0 for none."""
SHOTS = (
    (
        "Buy a cake for Mia's party on Saturday.",
        ("The bakery on Elm Street opens at 9.", "Mia's party was called off; she has the flu."),
        "2",
    ),
    (
        "Mow the lawn on Saturday mornings.",
        ("The mower's blade was sharpened.", "It will rain on Tuesday."),
        "0",
    ),
)
_NUMBER = re.compile(r"\d+")


def prompt(target: str, premises: Sequence[str], laters: Sequence[str]) -> str:
    """One scan question: the note (with what it relies on) and the numbered observations."""
    if premises:
        target += " (It relies on: " + "; ".join(f'"{p}"' for p in premises) + ")"
    numbered = "\n".join(f"{n}. {text}" for n, text in enumerate(laters, start=1))
    return f"EARLIER: {target}\nLATER:\n{numbered}\nWhich LATER observations should be named?"


def read_numbers(answer: str, count: int) -> list[bool]:
    """The named observations of ``count`` from the model's answer (``0`` or "none": none).

    Raises:
        VerifierUnavailable: if the answer names no number at all, or one out of range.
    """
    found = [int(n) for n in _NUMBER.findall(answer)]
    if not found and answer.strip().lower().startswith("none"):
        return [False] * count
    if not found or any(n > count for n in found):
        raise VerifierUnavailable(f"dependency scan: unusable answer {answer[:60]!r}")
    named = set(found)
    return [n in named for n in range(1, count + 1)]


def _text(later: Later) -> str:
    if later.replacement_text is not None and later.withdrawn_text is not None:
        return f'{later.text} (This replaces: "{later.withdrawn_text}")'
    return later.text


@dataclass
class OpenAICompatScan(Endpoint):
    """`DependencyScan` over ``/chat/completions`` of one model."""

    batch: int = 4
    window: int = 8

    @property
    def name(self) -> str:
        return f"scan:openai-compat:{self.model}@{self.base_url}"

    def scan(self, target: str, premises: Sequence[str], laters: Sequence[Later]) -> list[bool]:
        texts = [_text(later) for later in laters[: self.batch]]
        messages = [{"role": "system", "content": RULES}]
        for note, shown, answer in SHOTS:
            messages += [
                {"role": "user", "content": prompt(note, (), shown)},
                {"role": "assistant", "content": answer},
            ]
        messages.append({"role": "user", "content": prompt(target, premises, texts)})
        request = {"model": self.model, "temperature": 0, "max_tokens": 12, "messages": messages}
        body = self.client.post("/chat/completions", request)
        try:
            answer = str(body["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError) as exc:
            raise VerifierUnavailable(f"{self.name}: malformed completion: {exc!r}") from exc
        return read_numbers(answer, len(texts))


def factory(argument: str, settings: Mapping[str, str] | None = None) -> OpenAICompatScan:
    """Build from ``MODEL@BASE_URL``.

    Raises:
        ConfigError: if the argument is not ``MODEL@http(s)://...``.
    """
    model, url = endpoint(argument, "scan openai-compat:")
    return OpenAICompatScan(model=model, base_url=url, api_key=(settings or {}).get(API_KEY_ENV))
