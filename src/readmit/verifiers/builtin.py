"""The built-in verifier: model-free, offline, deterministic.

What it covers: a later event that **withdrew or replaced** state (revocation,
supersession, same-key replacement, closed validity) invalidates an earlier
item that refers to that state by its distinctive terms — names, places,
identifiers, numbers and times — which the replacement changed (it no longer
carries them and brings a new term of the same kind in their place). The
linking terms are recorded as the reason (an inferred dependency). A name
that the withdrawn statement qualifies into a look-alike ("the Kona tea
blend" vs. "the Kona blend") does not link. Where the withdrawn statement is
about a compound ("Lisinopril cream is ...") and the item names its first part
alone ("a reminder for Lisinopril"), or names it inside a longer name ("INV-2031
Escrow" against the account INV-2031), the terms cannot tell one thing from two:
the verifier abstains, and the item is withheld as ``verifier_unavailable``.
An item that names the term only as the old side of a change it records ("moved
from Room Atlas to Room Borealis", "Dr Okafor replaced Dr Lee") does not rely on
it, so withdrawing that old value does not link.

What it does not cover: premise changes that need world knowledge ("a new
evening shift" making "asleep by 10:30" stale), or new facts that withdraw
nothing. It answers "does not invalidate" for those, and says so
(``judges_news = False``), so the screener does not propose them to it; use an
LLM verifier.
Shared topic words ("hotel", "train") never link two statements.
"""

import re
from collections.abc import Sequence

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.terms import (
    STOPWORDS,
    carries,
    distinctive_terms,
    following,
    is_calendar,
    named_only_as_former,
    standalone,
    term_kind,
)
from readmit.terms.names import first_end

_VERBS = {"revoke": "revoked", "supersede": "superseded", "assert": "replaced", "close": "closed"}


def _dropped(shared: set[str], withdrawn: str, replacement: str | None) -> set[str]:
    """The shared terms the later event took away.

    A revocation takes every term away (but a bare number alone does not link). A
    replacement takes away a term it no
    longer carries only when it brings a new term of the same kind (a name for
    a name, a number or identifier for a literal): "Riverside" replacing
    "Sunrise" is a change, a shorter restatement that omits "Frankfurt" is not.
    """
    if replacement is None:
        # With nothing in its place, a bare number or time ("10:30") is too common to
        # name the withdrawn thing; a name or an identifier is needed.
        return {t for t in shared if not _bare_number(t)}
    introduced = distinctive_terms(replacement, context=withdrawn) - distinctive_terms(withdrawn)
    changed = {term_kind(t) for t in introduced}
    if _first_word_swapped(shared, withdrawn, replacement):
        changed.add("name")
    return {t for t in shared if not carries(replacement, t) and term_kind(t) in changed}


def _another_thing(term: str, withdrawn: str, earlier: str) -> bool:
    """Whether the withdrawn statement qualifies the name into a different thing.

    "The Kona tea blend" is not "the Kona blend", nor "the INC-1234 Sandbox key"
    "the INC-1234 API key": the same name and head noun with a qualifier inserted
    or swapped names a look-alike, not the earlier item's thing; nor is "Room 101"
    "Room 102": a name numbered otherwise is another of its kind.
    """
    after_withdrawn, after_earlier = following(withdrawn, term), following(earlier, term)
    numbers = (after_withdrawn[:1], after_earlier[:1])
    if all(w and _numbered(w[0]) for w in numbers) and numbers[0] != numbers[1]:
        return True  # "Room 101" is not "Room 102", nor "Invoice 17" "Invoice 18"
    if len(after_withdrawn) < 2 or not after_earlier or after_withdrawn[1] in STOPWORDS:
        return False
    qualifier, head = after_withdrawn
    if qualifier in STOPWORDS or qualifier == after_earlier[0]:
        return False
    inserted = head == after_earlier[0]
    swapped = len(after_earlier) == 2 and head == after_earlier[1]
    return inserted or swapped


def _numbered(word: str) -> bool:
    """A number or an identifier with digits ("101", "ba117"): it tells things of a name apart."""
    return any(c.isdigit() for c in word)


_AUXILIARIES = frozenset(
    {"is", "are", "was", "were", "has", "have", "had", "will", "would", "can", "could", "may"}
    | {"might", "must", "should", "shall"}
)


def _compound_named(term: str, withdrawn: str, earlier: str) -> str | None:
    """The compound the withdrawn statement is about, when the earlier item names ``term`` alone.

    "Lisinopril cream is for the rash" may be about another thing than the Lisinopril
    of "a reminder for Lisinopril at 8 am" (a cream named after it), or about a part
    of the same one ("the Sunrise Hotel booking is cancelled" and "meet at the Sunrise
    Hotel"): the terms cannot tell which. Only a longer name (`_longer_name`), or a
    compound that is the subject of a verb ("TERM noun is ...") against a bare ``term``
    in the earlier item, count.
    """
    longer = _longer_name(term, withdrawn)
    if longer is not None:
        return None if _longer_name(term, earlier) == longer else longer
    after = following(withdrawn, term)
    if len(after) < 2 or after[1] not in _AUXILIARIES or after[0] in STOPWORDS:
        return None
    compound = f"{term} {after[0]}"
    if not after[0].isalpha() or not carries(withdrawn, compound):  # a lower-case noun
        return None
    bare = following(earlier, term, count=1)
    return compound if not bare or bare[0] in STOPWORDS else None


_NEXT_NAME = re.compile(r" ([A-Z][\w-]*)")


def _longer_name(term: str, text: str) -> str | None:
    """``term`` and the capitalized word right after it in ``text``, as one longer name.

    "INV-2031 Escrow" is a holder named after the account INV-2031, or the account's
    own escrow: an item that names INV-2031 alone cannot be told apart by its terms.
    A weekday or month after the term is a time, not part of its name.
    """
    end = first_end(text, term)
    if end < 0:
        return None
    word = _NEXT_NAME.match(text, end)
    if word is None or word[1].lower() in STOPWORDS or is_calendar(word[1]):
        return None
    return f"{term} {word[1]}"


def _bare_number(term: str) -> bool:
    """A number, time or weekday/month alone: too common to name one withdrawn thing."""
    return is_calendar(term) or not any(
        c.isalpha() for c in term.replace("am", "").replace("pm", "")
    )


def _first_word_swapped(shared: set[str], withdrawn: str, replacement: str) -> bool:
    """Whether a name was replaced at the start ("Atlas chairs it" → "Beacon chairs it")."""
    old, new = withdrawn.split(maxsplit=1), replacement.split(maxsplit=1)
    return (
        len(old) == len(new) == 2
        and old[0] in shared
        and new[0] != old[0]
        and new[0][:1].isupper()
        and old[1].split()[:1] == new[1].split()[:1]
    )


class TermVerifier:
    """Confirms invalidation through distinctive terms of withdrawn state."""

    name = "builtin"
    cache_judgments = False
    """Recomputing a verdict is cheaper than storing it."""
    judges_news = False
    """Only a withdrawal can link (`readmit.admission.invalidation.implicit.judges_news`)."""
    linked_confidence = 0.9
    unlinked_confidence = 0.8

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        """Judge each pair on its two texts and the event's withdrawal alone."""
        return [self._judge(pair) for pair in pairs]

    def _judge(self, pair: Pair) -> Verdict:
        later, earlier = pair.later, pair.earlier
        if later.withdrawn_text is None:
            return Verdict(
                invalidates=False,
                confidence=self.unlinked_confidence,
                reason=f"{later.event_id} withdrew no state; other premise changes need an "
                "LLM verifier",
            )
        withdrawn = later.withdrawn_text
        shared = {
            t
            for t in distinctive_terms(withdrawn, context=earlier.text)
            & distinctive_terms(earlier.text, context=withdrawn)
            if (" " in t or term_kind(t) == "literal" or standalone(t, withdrawn, earlier.text))
            and not _another_thing(t, withdrawn, earlier.text)
        }
        dropped = sorted(_dropped(shared, withdrawn, later.replacement_text))
        former = [t for t in dropped if named_only_as_former(t, earlier.text)]
        dropped = [t for t in dropped if t not in former]
        if former and not dropped:
            return Verdict(
                invalidates=False,
                confidence=self.unlinked_confidence,
                reason=f"names {', '.join(former)} only as the old value of a change it "
                f"records: it does not rely on {later.withdrawn_id}",
            )
        if not dropped:
            return Verdict(
                invalidates=False,
                confidence=self.unlinked_confidence,
                reason=f"no distinctive term of {later.withdrawn_id} that its replacement drops",
            )
        compounds = [c for t in dropped if (c := _compound_named(t, withdrawn, earlier.text))]
        if len(compounds) == len(dropped):
            return Verdict(
                invalidates=False,
                confidence=self.linked_confidence,
                abstained=True,
                terms=tuple(dropped),
                reason=f"{later.withdrawn_id} is about {', '.join(compounds)}, this item about "
                f"{', '.join(dropped)} alone: the same thing or another, its terms cannot tell",
            )
        verb = _VERBS.get(later.op, "withdrew")
        return Verdict(
            invalidates=True,
            confidence=self.linked_confidence,
            terms=tuple(dropped),
            reason=f"refers to {later.withdrawn_id}, which {later.event_id} {verb}",
        )
