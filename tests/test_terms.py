"""Terms of short statements: content tokens, distinctive terms, names and recorded changes."""

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from readmit.terms import (
    carries,
    content_tokens,
    distinctive_terms,
    following,
    former_spans,
    is_calendar,
    name_phrases,
    named_only_as_former,
    standalone,
    term_kind,
)
from readmit.terms.names import first_end, whole_word


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("The standup moved from Room Atlas to Room Borealis.", "Room Atlas"),
        ("Switched from Acme last week.", "Acme"),
        ("Price went from $300 to $250 after the review.", "$300"),
        ("Primary region update: eu-west-1 → eu-central-1.", "eu-west-1"),
        ("Dr Okafor has replaced Dr Lee as the attending.", "Dr Lee"),
        ("The Atlas offsite has been cancelled.", "Atlas"),
        ("We cancelled the Beacon review.", "Beacon"),
        ("The rota no longer includes Priya Raman.", "Priya Raman"),
        ("Pay into Eastway rather than Northbank.", "Northbank"),
        ("The launch slipped from June 3 to July 8.", "3"),
        ("Atlas was renamed Beacon.", "Atlas"),
        ("We renamed Atlas to Beacon.", "Atlas"),
        ("The fee rose from $300 to $350.", "$300"),
    ],
)
def test_the_old_side_of_a_recorded_change(text: str, term: str) -> None:
    assert named_only_as_former(term, text)


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("The standup moved from Room Atlas to Room Borealis.", "Room Borealis"),
        ("The standup never moved from Room Atlas.", "Room Atlas"),
        ("Please move the standup from Room Atlas to Room Borealis.", "Room Atlas"),
        ("The updated quote from Acme is $300.", "Acme"),
        ("Shuttle from the Sunrise Hotel to the airport.", "Sunrise Hotel"),
        ("Route: Sunrise Hotel → Harbour Station.", "Sunrise Hotel"),
        ("The Atlas offsite was not cancelled.", "Atlas"),
        ("Acme dropped the price to $250.", "Acme"),
        ("Room Atlas moved from Tuesday to Thursday.", "Room Atlas"),
        ("Not mentioned at all.", "Acme"),
        ("Priya raised the issue from INC-1234 to the board.", "INC-1234"),
        ("Atlas renamed the file to Beacon.", "Atlas"),
    ],
)
def test_a_value_the_text_relies_on(text: str, term: str) -> None:
    assert not named_only_as_former(term, text)


def test_an_arrow_ends_a_name() -> None:
    terms = distinctive_terms("Standup room: Room Atlas → Room Borealis -> Room Cedar.")

    assert {"Room Atlas", "Room Borealis", "Room Cedar"} <= terms
    assert "Room Atlas Room Borealis" not in terms


def test_content_tokens_are_lower_cased_words_and_every_number() -> None:
    tokens = content_tokens("The train to Riverside leaves at 9:00, costs $12 and is ok.")

    assert tokens == {"train", "riverside", "leaves", "costs", "9:00", "$12"}


@pytest.mark.parametrize("text", ["", "a an the of", "is ok, to be", "!!! ... ???"])
def test_stopwords_short_words_and_punctuation_are_no_content(text: str) -> None:
    assert content_tokens(text) == frozenset()


def test_names_numbers_amounts_days_and_identifiers_are_distinctive() -> None:
    terms = distinctive_terms("Sunrise Hotel is booked for $268 on Friday, ticket INC-42, api_v2.")

    assert terms == {"Sunrise Hotel", "Sunrise", "$268", "Friday", "INC-42", "api_v2"}


@pytest.mark.parametrize("text", ["Hotel is booked.", "the train leaves soon", "Booked."])
def test_topic_words_and_lone_sentence_starts_are_not_distinctive(text: str) -> None:
    assert distinctive_terms(text) == frozenset()


def test_context_vouches_for_a_sentence_initial_word() -> None:
    assert "Atlas" not in distinctive_terms("Atlas is free.")
    assert "Atlas" in distinctive_terms("Atlas is free.", context="We meet in Atlas.")
    assert "Atlas" not in distinctive_terms("Send Atlas the agenda.")
    assert "Atlas" in distinctive_terms("Send Atlas the agenda.", context="Room is Atlas today")


@pytest.mark.parametrize(
    ("token", "calendar"),
    [("Monday", True), ("mondays", True), ("December", True), ("Mon", False), ("Mayor", False)],
)
def test_weekdays_and_months_are_calendar_words(token: str, calendar: bool) -> None:
    assert is_calendar(token) is calendar


def test_a_word_is_standalone_only_outside_a_longer_name() -> None:
    assert not standalone("Sunrise", "Sunrise Bridge is closed.")
    assert standalone("Sunrise", "We met at Sunrise today.")
    assert name_phrases("Room Atlas is near Harbour Station.") == {
        ("Room", "Atlas"),
        ("Harbour", "Station"),
    }


def test_following_gives_the_next_words_of_the_first_whole_mention() -> None:
    assert following("Pickup at 9:00 sharp from Riverside", "9:00") == ("sharp", "from")
    assert following("Pickup at 19:00 sharp", "9:00") == ()
    assert following("Meet Atlas", "Atlas") == ()


@pytest.mark.parametrize(
    ("term", "kind"),
    [
        ("INC-42", "literal"),
        ("$268", "literal"),
        ("Friday", "literal"),
        ("9:00", "literal"),
        ("Sunrise Hotel", "name"),
        ("Atlas", "name"),
    ],
)
def test_terms_are_literals_or_names(term: str, kind: str) -> None:
    assert term_kind(term) == kind


@pytest.mark.parametrize(
    ("text", "term", "found"),
    [
        ("Booked Sunrise Hotel.", "Sunrise", True),
        ("booked sunrise hotel", "Sunrise", False),
        ("Sunrises are early.", "Sunrise", False),
        ("It costs $268.", "$268", True),
        ("It costs $2680.", "$268", False),
        ("Ticket INC-42 is open", "INC-42", True),
    ],
)
def test_carries_matches_whole_words_case_sensitively(text: str, term: str, found: bool) -> None:
    assert carries(text, term) is found


def test_former_spans_point_at_the_old_value() -> None:
    text = "The standup moved from Room Atlas to Room Borealis."

    assert [text[a:b] for a, b in former_spans(text)] == ["Room Atlas"]
    assert former_spans("Room Atlas is free.") == ()


_PIECES = ["a", "A", "1", "$", "€", "£", " ", "-", "_", ".", "é", "Zed", "x", "Hotel", "Sunrise"]


@given(
    st.lists(st.sampled_from(_PIECES), max_size=8).map("".join),
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=3).map("".join),
)
@example("$Zed x", "Zed")
@example("£Zed €Zed", "Zed")
@example("aZed Zed_ Zed", "Zed")
@example("the Sunrise Hotel.", "Sunrise Hotel")
@settings(max_examples=300)
def test_whole_word_matches_as_a_lookbehind_before_the_term_would(text: str, term: str) -> None:
    """The pattern puts the term first (so the engine can scan for it): the same matches."""
    term = term.strip() or "a"
    reference = re.compile(r"(?<![\w$€£])" + re.escape(term) + r"(?![\w])")

    assert [m.span() for m in whole_word(term).finditer(text)] == [
        m.span() for m in reference.finditer(text)
    ]
    first = reference.search(text)
    for _ in range(2):  # the second time from the memo
        assert first_end(text, term) == (-1 if first is None else first.end())
        assert carries(text, term) is (first is not None)
