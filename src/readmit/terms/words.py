"""Words of short statements: stopwords, calendar words and content tokens (for scanning)."""

import re
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


TOKEN = re.compile(
    r"[$€£]?\d+(?:[:.,/-]\d+)*(?:%|am|pm)?"  # numbers, times, amounts, dates
    r"|[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*"  # words and identifiers
)
"""Numbers, times, amounts and dates; words and identifiers."""


@lru_cache(maxsize=1 << 17)
def content_tokens(text: str) -> frozenset[str]:
    """Lower-cased words of three or more letters that are not stopwords, and every number."""
    found = set()
    for token in TOKEN.findall(text):
        lowered = token.lower()
        if (
            token[0].isdigit()
            or token[0] in "$€£"
            or (len(lowered) >= 3 and lowered not in STOPWORDS)
        ):
            found.add(lowered)
    return frozenset(found)
