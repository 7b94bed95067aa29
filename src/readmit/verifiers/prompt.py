"""What the OpenAI-compatible verifier asks: the rules, worked examples and the question.

The rules and examples come first and never change, so a server that caches prompt
prefixes (llama.cpp does) processes only the pair itself. The examples are written for
the prompt, in domains of their own (none is from a labeled set).
"""

import json
from dataclasses import dataclass

from readmit.admission.invalidation.implicit import Pair

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


def messages(prompt: str, ask: str) -> list[dict[str, str]]:
    """The chat: rules and ``ask`` as the system message, the worked examples, then ``prompt``."""
    found = [{"role": "system", "content": f"{RULES}\n{ask}"}]
    for example in EXAMPLES:
        found += [
            {
                "role": "user",
                "content": _question(example.earlier, example.later, example.replaced),
            },
            {"role": "assistant", "content": _answer(example, ask)},
        ]
    return [*found, {"role": "user", "content": prompt}]


def _answer(example: Example, ask: str) -> str:
    if ask == ONE_WORD_ASK:
        return "yes" if example.invalidates else "no"
    verdict = "invalidates" if example.invalidates else "compatible"
    return json.dumps({"verdict": verdict, "reason": example.why})
