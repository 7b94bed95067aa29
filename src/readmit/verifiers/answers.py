"""Reading a model's answer: a verdict from a chat completion, strictly, or unavailable.

A one-token answer is read from its log-probabilities (`token_confidence`); a structured
or plain answer from its JSON or its leading word (`parse_verdict`), its confidence from
the verdict token's log-probabilities when there are any, else the answer's own
``confidence``, else 0.5 (below any sensible threshold, so an unconfident verdict never
removes an item). A refusal or anything else is `VerifierUnavailable`.
"""

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from readmit.admission.invalidation.implicit import Verdict
from readmit.errors import VerifierUnavailable

_VERDICT = re.compile(r"\b(invalidates|compatible)\b", re.IGNORECASE)
_ANSWERS = {"yes": True, "no": False}


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
            return (
                str(data["verdict"]).lower(),
                str(data.get("reason", ""))[:500],
                _stated(data.get("confidence")),
            )
    found = _VERDICT.findall(text)
    if len({v.lower() for v in found}) == 1:
        return found[0].lower(), text[:500], None
    # The question is a yes/no question: a reply that starts with the answer is strict enough.
    lead = re.match(r"\s*(yes|no)\b", text, re.IGNORECASE)
    if lead and not found:
        return ("invalidates" if lead.group(1).lower() == "yes" else "compatible"), text[:500], None
    raise VerifierUnavailable(f"unparseable verdict: {content[:120]!r}")


def _stated(confidence: object) -> float | None:
    """A verdict's stated confidence: a number from 0 to 1, or none said (``None``).

    Raises:
        VerifierUnavailable: if it says one that is not (NaN, 7, -1, "high", true): a
            malformed answer, not an unconfident one (read as one half, an "invalidates"
            with a broken confidence let the item through, a review).
    """
    if confidence is None:
        return None
    malformed = VerifierUnavailable(f"malformed confidence: {str(confidence)[:40]!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise malformed
    if not 0 <= confidence <= 1:  # NaN is not
        raise malformed
    return float(confidence)


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
