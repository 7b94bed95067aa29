"""Change records: an item that records a change names the old value only to say it is gone."""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from readmit.terms.names import is_identifier, whole_word
from readmit.terms.words import STOPWORDS, TOKEN

# Change records. An item that records a change ("The standup moved from Room Atlas to
# Room Borealis") names the old value only to say it is gone: it does not rely on it.

_CHANGED = frozenset(
    {"moved", "switched", "changed", "pushed", "shifted", "rescheduled", "reassigned"}
    | {"relocated", "migrated", "updated", "upgraded", "downgraded", "renamed", "swapped"}
    | {"postponed", "delayed", "bumped", "slipped", "converted", "reverted"}
)
"""Past forms only: "moved from X" records a change; "Move ... from X" asks for one."""
_AMOUNT_CHANGED = frozenset(
    {"raised", "lowered", "increased", "decreased", "reduced", "cut", "went", "rose", "fell"}
    | {"dropped"}
)
"""Only right before "from" ("rose from $10"): "raised the issue from INC-7 to ..." is not."""
_REPLACED = frozenset(
    {"replaced", "replaces", "replacing", "superseded", "supersedes", "succeeded", "succeeds"}
    | {"renamed"}
)
_CANCELLED = frozenset(
    {"cancelled", "canceled", "scrapped", "discontinued", "decommissioned", "withdrawn"}
    | {"dropped", "retired", "removed", "deleted"}
)
_CHANGE_NOUNS = frozenset({"change", "changes", "update", "updates", "switch", "swap"})
_AUXILIARY = frozenset({"was", "were", "is", "are", "been", "be", "being", "got", "gets"})
_PERFECT = frozenset({"has", "have", "had"})
_DETERMINERS = frozenset({"the", "a", "an", "our", "my", "their", "your", "its", "his", "her"})
_NEGATIONS = frozenset({"not", "never", "t", "nt"})
_CLAUSE_WORDS = frozenset({"but", "because", "since", "so", "and", "while", "though", "as", "if"})
_SENTENCE_END = frozenset({".", ";", "!", "?"})
_ARROWS = frozenset({"→", "⇒", "->", "=>"})
_WORD = re.compile(r"(?P<mark>[→⇒]|[-=]>|[.,;:!?()\[\]\"“”])|" + TOKEN.pattern)
_Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    start: int
    end: int
    mark: bool
    """Punctuation or an arrow, not a word."""

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def value(self) -> bool:
        """A name, number, time, date or identifier: something a change can replace."""
        if self.mark or self.lower in STOPWORDS:
            return False
        first = self.text[0]
        return first.isupper() or first.isdigit() or first in "$€£" or is_identifier(self.text)


def named_only_as_former(term: str, text: str) -> bool:
    """Whether every mention of ``term`` in ``text`` is the old side of a change it records.

    The shapes: "moved/switched/changed ... from X to Y", "X → Y" in a sentence that
    says it is a change, "replaced X with Y", "Y replaced X", "X was replaced by Y",
    "X was renamed Y", "no longer ... X", "Y instead of X", "rather than X", "X was
    cancelled". An
    instruction ("Move the standup from X to Y"), a route ("Shuttle from X to the
    airport") or a negated change ("never moved from X") still relies on X.
    """
    spans = former_spans(text)
    mentions = [m.span() for m in whole_word(term).finditer(text)]
    return bool(mentions) and all(_inside(mention, spans) for mention in mentions)


def _inside(mention: _Span, spans: Iterable[_Span]) -> bool:
    return any(start <= mention[0] and mention[1] <= end for start, end in spans)


@lru_cache(maxsize=1 << 14)
def former_spans(text: str) -> tuple[_Span, ...]:
    """Character spans of the old values in the changes ``text`` records."""
    words = [
        _Word(m.group(), m.start(), m.end(), mark=m.group("mark") is not None)
        for m in _WORD.finditer(text)
    ]
    return tuple(span for i in range(len(words)) if (span := _former_at(words, i)))


def _former_at(words: list[_Word], i: int) -> _Span | None:
    """The old value that the change cue at ``words[i]`` points to, if it is one."""
    word, before = words[i], words[i - 1].lower if i else ""
    if word.lower == "from":
        return _changed_from(words, i)
    if word.text in _ARROWS:
        return _value_before(words, i, skip=0) if _says_change(words, i) else None
    if word.lower in _REPLACED | _CANCELLED and before not in _DETERMINERS:
        return _replaced(words, i)
    if (word.lower, before) in {("longer", "no"), ("of", "instead"), ("than", "rather")}:
        return _value_after(words, i + 1, lenient=True)
    return None


def _changed_from(words: list[_Word], i: int) -> _Span | None:
    """X in "moved from X" or "switched the supplier from X to Y"."""
    verb = _change_verb_before(words, i)
    if verb is None and i and words[i - 1].lower in _AMOUNT_CHANGED:
        verb = i - 1
    if verb is None or _negated(words, verb):
        return None
    span = _value_after(words, i + 1, lenient=False)
    if span is None or verb == i - 1:
        return span
    after = next((w for w in words if w.start >= span[1]), None)
    return span if after is not None and (after.lower in {"to", "into"} or after.mark) else None


def _change_verb_before(words: list[_Word], i: int) -> int | None:
    """The index of a past-tense change verb earlier in the clause, with no "to" between."""
    for k in range(i - 1, max(-1, i - 7), -1):
        word = words[k]
        if word.mark or word.lower in {"to", "into"}:
            return None
        if word.lower in _CHANGED:
            return None if k and words[k - 1].lower in _DETERMINERS else k
    return None


def _replaced(words: list[_Word], i: int) -> _Span | None:
    """X in "replaced X with Y", "Y replaced X", "X was replaced by Y", "X was cancelled"."""
    k = i - 1
    while k >= 0 and words[k].lower in _AUXILIARY | _PERFECT | _NEGATIONS:
        k -= 1
    if _negated(words, i):
        return None
    if k < i - 1 and words[i - 1].lower in _AUXILIARY:  # passive: the subject is the old one
        return _value_before(words, k + 1, skip=2)
    if words[i].lower in _CANCELLED - {"cancelled", "canceled", "scrapped", "removed"}:
        return None  # "Acme dropped the price": only a passive one says the value is gone
    return _value_after(words, i + 1, lenient=False)


def _negated(words: list[_Word], i: int) -> bool:
    return any(w.lower in _NEGATIONS for w in words[max(0, i - 3) : i])


def _says_change(words: list[_Word], i: int) -> bool:
    """Whether the sentence around ``words[i]`` has a change verb or noun."""
    start, end = i, i
    while start > 0 and words[start - 1].text not in _SENTENCE_END:
        start -= 1
    while end < len(words) and words[end].text not in _SENTENCE_END:
        end += 1
    return any(w.lower in _CHANGED | _CHANGE_NOUNS for w in words[start:end])


def _value_after(words: list[_Word], j: int, *, lenient: bool) -> _Span | None:
    """The first run of values from ``j``, skipping up to three other words in the clause.

    Strictly, only determiners and content words are skipped ("from the Sunrise Hotel",
    "replaced the Kona blend"); leniently also prepositions ("no longer bank with Acme").
    """
    for _ in range(4):
        if j >= len(words) or words[j].mark or words[j].value:
            break
        lower = words[j].lower
        if lower in _CLAUSE_WORDS or (
            not lenient and lower in STOPWORDS and lower not in _DETERMINERS
        ):
            return None
        j += 1
    end = j
    while end < len(words) and words[end].value:
        end += 1
    return (words[j].start, words[end - 1].end) if end > j else None


def _value_before(words: list[_Word], i: int, *, skip: int) -> _Span | None:
    """The run of values just before ``i``, past up to ``skip`` content words ("Atlas review")."""
    k = i - 1
    while skip and k >= 0 and not words[k].mark and not words[k].value:
        if words[k].lower in STOPWORDS:
            return None
        k, skip = k - 1, skip - 1
    start = k
    while start >= 0 and words[start].value:
        start -= 1
    return (words[start + 1].start, words[k].end) if start < k else None
