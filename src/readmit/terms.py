"""Terms of short statements: content tokens (for scanning) and distinctive terms (for linking).

Both are pure functions of their text, memoized: the scanner asks again about the
same items at every return.

Distinctive terms are what lets a statement refer to one particular thing:
names (runs of capitalized words: "Sunrise Hotel"), numbers, times and amounts
("9:00", "$268"), and identifiers ("INC-1234", "api_v2"). Topic words ("hotel",
"train") are never distinctive. Matching on names is case-sensitive, because a
capital is what marks a name; a lone capitalized word at the start of a
sentence counts only when the same word is capitalized mid-sentence elsewhere.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "new",
        "now",
        "next",
        "last",
        "still",
        "yes",
        "ok",
        "okay",
    ]
)

CALENDAR = frozenset(
    [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
"""Capitalized, but dates rather than names: they count as literals ("Friday", "Mondays")."""


def is_calendar(token: str) -> bool:
    """Whether ``token`` is a weekday or month name (or its plural)."""
    word = token.lower()
    return word in CALENDAR or (word.endswith("s") and word[:-1] in CALENDAR)


_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CHUNK = re.compile(r"[,:](?=\s)|[;()\[\]\"“”]|[→⇒]|[-=]>")
"""Punctuation and arrows that end a name ("Regime: Frankfurt", "Atlas → Beacon" are two)."""
_TOKEN = re.compile(
    r"[$€£]?\d+(?:[:.,/-]\d+)*(?:%|am|pm)?"  # numbers, times, amounts, dates
    r"|[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*"  # words and identifiers
)


@lru_cache(maxsize=1 << 17)
def content_tokens(text: str) -> frozenset[str]:
    """Lower-cased words of three or more letters that are not stopwords, and every number."""
    found = set()
    for token in _TOKEN.findall(text):
        lowered = token.lower()
        if (
            token[0].isdigit()
            or token[0] in "$€£"
            or (len(lowered) >= 3 and lowered not in STOPWORDS)
        ):
            found.add(lowered)
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class _Name:
    words: tuple[str, ...]
    initial: bool
    """Whether the run starts a sentence (where every word is capitalized)."""


def _is_identifier(token: str) -> bool:
    """Digits, underscores, inner capitals, or a hyphenated part with no vowel ("api-gw")."""
    return (
        any(c.isdigit() for c in token)
        or "_" in token
        or any(c.isupper() for c in token[1:])
        or ("-" in token and any(_unpronounceable(part) for part in token.split("-")))
    )


def _unpronounceable(part: str) -> bool:
    """An abbreviation such as "gw" or "db": two or more letters and no vowel."""
    return len(part) >= 2 and not any(c in "aeiouy" for c in part.lower())


def _scan(text: str) -> tuple[list[_Name], set[str]]:
    names: list[_Name] = []
    literals: set[str] = set()
    for sentence in _SENTENCE.split(text):
        first = True
        for chunk in _CHUNK.split(sentence):
            for name in _runs(_TOKEN.findall(chunk), literals, initial=first):
                names.append(name)
            first = first and not _TOKEN.search(chunk)
    return names, literals


def _runs(tokens: list[str], literals: set[str], *, initial: bool) -> Iterator[_Name]:
    """Runs of capitalized words in one chunk; collects literals on the way."""
    run: list[str] = []
    run_start = 0
    for position, token in enumerate(tokens):
        if token[0].isdigit() or token[0] in "$€£" or _is_identifier(token) or is_calendar(token):
            literals.add(token)
        if token[0].isupper() and token.lower() not in STOPWORDS - {"i"} and not is_calendar(token):
            if not run:
                run_start = position
            run.append(token)
            continue
        if run:
            yield from _names(run, initial=initial and run_start == 0)
        run = []
    if run:
        yield from _names(run, initial=initial and run_start == 0)


def _names(run: list[str], *, initial: bool) -> Iterator[_Name]:
    # "Room Atlas is free" keeps "Room Atlas" whole: its first word may be a plain
    # capitalized sentence start, but so may a name's ("Sunrise Hotel is booked").
    yield _Name(tuple(run), initial=initial)


def _mid_sentence_words(names: Iterable[_Name]) -> set[str]:
    return {w for n in names for i, w in enumerate(n.words) if not n.initial or i > 0}


@lru_cache(maxsize=1 << 17)
def distinctive_terms(text: str, *, context: str = "") -> frozenset[str]:
    """Names (whole and by their leading words), numbers and identifiers in ``text``.

    A multi-word name also yields each word but its last ("Sunrise Hotel" →
    "Sunrise"), since the last word is usually a generic head ("Hotel").
    ``context`` is other text whose mid-sentence capitals vouch for a lone
    sentence-initial capitalized word, and whose names vouch for the rest of a
    sentence-initial run ("Send Atlas the agenda" names "Atlas" when the context
    does).
    """
    names, literals = _scan(text)
    elsewhere = _scan(context)[0]
    vouched = _mid_sentence_words(names) | _mid_sentence_words(elsewhere)
    terms = set(literals)
    for words in _phrases(names, elsewhere):
        if len(words) == 1 and words[0] not in vouched and _initial_only(words, names):
            continue
        terms.add(" ".join(words))
        terms.update(words[:-1])
    return frozenset(terms)


def _phrases(names: list[_Name], elsewhere: list[_Name]) -> set[tuple[str, ...]]:
    """The names' word runs, plus the tail of a sentence-initial run named ``elsewhere``.

    A sentence's first word is capitalized whatever it is, so "Room Atlas is free"
    and "Send Atlas the agenda" may name "Atlas" alone; the other text decides.
    """
    phrases = {name.words for name in names}
    other = {name.words for name in elsewhere}
    return phrases | {n.words[1:] for n in names if n.initial and n.words[1:] in other}


def _initial_only(words: tuple[str, ...], names: list[_Name]) -> bool:
    return all(name.initial for name in names if name.words == words)


@lru_cache(maxsize=1 << 16)
def name_phrases(text: str, context: str = "") -> frozenset[tuple[str, ...]]:
    """The runs of capitalized words in ``text`` ("Sunrise Hotel" → ("Sunrise", "Hotel")).

    With ``context``, also the tail of a sentence-initial run that the context names.
    """
    return frozenset(_phrases(_scan(text)[0], _scan(context)[0]))


def standalone(word: str, text: str, context: str = "") -> bool:
    """Whether ``text`` names ``word`` on its own, not only inside a longer name.

    "Sunrise Bridge" does not name "Sunrise": a "Sunrise crossing" elsewhere may be
    another thing, so only the whole name links the two.
    """
    return (word,) in name_phrases(text, context)


def following(text: str, term: str, count: int = 2) -> tuple[str, ...]:
    """The (lower-cased) words right after the first whole-word ``term`` in ``text``."""
    found = _whole_word(term).search(text)
    if found is None:
        return ()
    return tuple(t.lower() for t in _TOKEN.findall(text[found.end() :])[:count])


def term_kind(term: str) -> str:
    """``literal`` for numbers, times, amounts and identifiers; ``name`` otherwise."""
    first = term.split(" ", 1)[0]
    literal = first[0].isdigit() or first[0] in "$€£" or _is_identifier(first) or is_calendar(first)
    return "literal" if literal else "name"


def carries(text: str, term: str) -> bool:
    """Whether ``text`` contains ``term`` as whole words (case-sensitive)."""
    return _whole_word(term).search(text) is not None


@lru_cache(maxsize=1 << 14)
def _whole_word(term: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w$€£])" + re.escape(term) + r"(?![\w])")


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
_WORD = re.compile(r"(?P<mark>[→⇒]|[-=]>|[.,;:!?()\[\]\"“”])|" + _TOKEN.pattern)
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
        return first.isupper() or first.isdigit() or first in "$€£" or _is_identifier(self.text)


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
    mentions = [m.span() for m in _whole_word(term).finditer(text)]
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
