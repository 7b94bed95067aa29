"""Distinctive terms: the names, numbers and identifiers that let a statement refer to one thing."""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

from readmit.records import positional
from readmit.terms.words import STOPWORDS, TOKEN, is_calendar

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CHUNK = re.compile(r"[,:](?=\s)|[;()\[\]\"“”]|[→⇒]|[-=]>")
"""Punctuation and arrows that end a name ("Regime: Frankfurt", "Atlas → Beacon" are two)."""
_NAME_STOPWORDS = STOPWORDS - {"i"}
"""Capitalized stopwords do not start or continue a name ("I" may: "Building I")."""


@dataclass(frozen=True, slots=True)
class _Name:
    words: tuple[str, ...]
    initial: bool
    """Whether the run starts a sentence (where every word is capitalized)."""


_name = positional(_Name)


def is_identifier(token: str) -> bool:
    """Digits, underscores, inner capitals, or a hyphenated part with no vowel ("api-gw")."""
    if token.isalpha():  # the common case: only inner capitals can make it one
        return any(map(str.isupper, token[1:]))
    return (
        any(map(str.isdigit, token))
        or "_" in token
        or any(map(str.isupper, token[1:]))
        or ("-" in token and any(_unpronounceable(part) for part in token.split("-")))
    )


def _unpronounceable(part: str) -> bool:
    """An abbreviation such as "gw" or "db": two or more letters and no vowel."""
    return len(part) >= 2 and not any(c in "aeiouy" for c in part.lower())


@lru_cache(maxsize=1 << 16)
def _scan(text: str) -> tuple[tuple[_Name, ...], frozenset[str]]:
    """The runs of capitalized words of ``text``, and its literals.

    Remembered per text: a verifier scans the same two texts for every pair they are
    in, each as the other's context. One loop, no generators: the screener scans every
    observation of a return's delta.
    """
    names: list[_Name] = []
    literals: set[str] = set()
    for sentence in _SENTENCE.split(text):
        first = True  # until a chunk with words: its leading run starts the sentence
        for chunk in _CHUNK.split(sentence):
            tokens = TOKEN.findall(chunk)
            run: list[str] = []
            initial = first
            for token in tokens:
                literal, capital = _classes(token)
                if literal:
                    literals.add(token)
                if capital:  # "Room Atlas is free" keeps "Room Atlas" whole: its first word
                    run.append(token)  # may be a plain sentence start, or a name's
                    continue
                if run:
                    names.append(_name(tuple(run), initial))
                    run = []
                initial = False
            if run:
                names.append(_name(tuple(run), initial))
            first = first and not tokens
    return tuple(names), frozenset(literals)


@lru_cache(maxsize=1 << 16)
def _classes(token: str) -> tuple[bool, bool]:
    """Whether ``token`` is a literal, and whether it may be a word of a name.

    Remembered per token: most words recur from one text to the next.
    """
    literal = token[0].isdigit() or token[0] in "$€£" or is_identifier(token) or is_calendar(token)
    capital = token[0].isupper() and token.lower() not in _NAME_STOPWORDS and not is_calendar(token)
    return literal, capital


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


def _phrases(names: Sequence[_Name], elsewhere: Sequence[_Name]) -> set[tuple[str, ...]]:
    """The names' word runs, plus the tail of a sentence-initial run named ``elsewhere``.

    A sentence's first word is capitalized whatever it is, so "Room Atlas is free"
    and "Send Atlas the agenda" may name "Atlas" alone; the other text decides.
    """
    phrases = {name.words for name in names}
    other = {name.words for name in elsewhere}
    return phrases | {n.words[1:] for n in names if n.initial and n.words[1:] in other}


def _initial_only(words: tuple[str, ...], names: Sequence[_Name]) -> bool:
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
    end = first_end(text, term)
    if end < 0:
        return ()
    after = islice(TOKEN.finditer(text, end), count)  # not every token to the end
    return tuple(m.group().lower() for m in after)


def first_end(text: str, term: str) -> int:
    """Where the first whole-word ``term`` in ``text`` ends (-1: nowhere), remembered.

    The built-in verifier looks up each name two texts share in both, pair after pair,
    and one withdrawn text is paired with many items: in 512 pairs of long texts sharing
    hundreds of names, 191,900 searches were of 51,270 (text, term) pairs. The latest
    `_FIRST_TEXTS` texts keep what was found in them, at most `_FIRST_TERMS` terms each.
    """
    ends = _ends(text)
    end = ends.get(term)
    if end is None:
        found = whole_word(term).search(text)
        end = -1 if found is None else found.end()
        if len(ends) < _FIRST_TERMS:
            ends[term] = end
    return end


_FIRST_TEXTS, _FIRST_TERMS = 256, 1024
"""Texts whose `first_end` memo is kept, and terms a text keeps. The texts stay alive
through it: up to 100,000 characters each under the service's default limits, so about
25 MB of texts and, at about 110 bytes a term, 29 MB of memo at most."""


@lru_cache(maxsize=_FIRST_TEXTS)
def _ends(text: str) -> dict[str, int]:
    """The memo of `first_end` for ``text``: filled as terms are looked up."""
    return {}


def term_kind(term: str) -> str:
    """``literal`` for numbers, times, amounts and identifiers; ``name`` otherwise."""
    first = term.split(" ", 1)[0]
    literal = first[0].isdigit() or first[0] in "$€£" or is_identifier(first) or is_calendar(first)
    return "literal" if literal else "name"


def carries(text: str, term: str) -> bool:
    """Whether ``text`` contains ``term`` as whole words (case-sensitive)."""
    return first_end(text, term) >= 0


@lru_cache(maxsize=1 << 14)
def whole_word(term: str) -> re.Pattern[str]:
    """A pattern matching ``term`` as whole words (case-sensitive).

    The term comes first and the check of what precedes it after (a lookbehind as wide
    as the term and one character): a pattern that starts with the term lets the regex
    engine scan for it, where one that starts with a lookbehind tries every position
    (207 against 13 us in a 16,000-character text; the same matches).
    """
    literal = re.escape(term)
    return re.compile(literal + r"(?<![\w$€£]" + literal + r")(?![\w])")
