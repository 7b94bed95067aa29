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

from readmit.terms.former import former_spans, named_only_as_former
from readmit.terms.names import (
    carries,
    distinctive_terms,
    following,
    name_phrases,
    standalone,
    term_kind,
)
from readmit.terms.words import CALENDAR, STOPWORDS, content_tokens, is_calendar

__all__ = [
    "CALENDAR",
    "STOPWORDS",
    "carries",
    "content_tokens",
    "distinctive_terms",
    "following",
    "former_spans",
    "is_calendar",
    "name_phrases",
    "named_only_as_former",
    "standalone",
    "term_kind",
]
