from dataclasses import dataclass

import pytest

from builders import item, withdrawal
from readmit.admission.invalidation.implicit import Later, Pair
from readmit.verifiers.builtin import TermVerifier


@dataclass(frozen=True)
class Case:
    id: str
    earlier: str
    op: str
    withdrawn: str | None
    replacement: str | None
    invalidates: bool


CASES = [
    Case(
        "travel: pickup names the cancelled hotel",
        "Recommended pickup at 8:00 from Sunrise Hotel.",
        "revoke",
        "Sunrise Hotel is booked, refundable, $268 in total.",
        None,
        True,
    ),
    Case(
        "travel: the constraint shares only topic words",
        "Family requirements: a quiet hotel near the station, total hotel cost below $300.",
        "revoke",
        "Sunrise Hotel is booked, refundable, $268 in total.",
        None,
        False,
    ),
    Case(
        "travel: the new booking is not invalidated by the old one's revocation",
        "Riverside Hotel is booked as the replacement, $282 in total.",
        "revoke",
        "Sunrise Hotel is booked, refundable, $268 in total.",
        None,
        False,
    ),
    Case(
        "travel: a later train time alone does not touch the pickup",
        "Recommended pickup at 8:00 from Sunrise Hotel.",
        "supersede",
        "The train departs at 9:00.",
        "The train now departs at 9:30.",
        False,
    ),
    Case(
        "a time the replacement drops",
        "Meet on the platform at 9:00 sharp.",
        "supersede",
        "The train departs at 9:00.",
        "The train now departs at 9:30.",
        True,
    ),
    Case(
        "a term the replacement keeps does not link",
        "Breakfast at the Riverside Hotel starts at 7.",
        "assert",
        "Riverside Hotel room 12 is booked.",
        "Riverside Hotel room 14 is booked.",
        False,
    ),
    Case(
        "another hotel sharing only the generic head",
        "Dinner at the Grand Hotel.",
        "revoke",
        "Sunrise Hotel is booked.",
        None,
        False,
    ),
    Case(
        "an identifier",
        "Rollback plan for INC-1234 is ready.",
        "close",
        "INC-1234 is open: checkout latency above 2s.",
        None,
        True,
    ),
    Case(
        "a person's name",
        "Send the weekly report to Priya Raman on Fridays.",
        "revoke",
        "Priya Raman leads the data team.",
        None,
        True,
    ),
    Case(
        "same sentence-initial word is not a name",
        "Train tickets are in the drawer.",
        "revoke",
        "Train departs from platform four.",
        None,
        False,
    ),
    Case(
        "topic words in lower case never link",
        "the hotel should be quiet",
        "revoke",
        "the hotel is booked",
        None,
        False,
    ),
    Case(
        "a sentence-initial name that the other text names on its own",
        "Ask Meridian for the quarterly numbers.",
        "supersede",
        "Meridian owns the quarterly report.",
        "Halcyon owns the quarterly report.",
        True,
    ),
    Case(
        "a name after a capitalized common word",
        "Reserve room Falcon for the retro.",
        "assert",
        "Room Falcon is free at 15:00.",
        "Room Heron is free at 15:00.",
        True,
    ),
    Case(
        "a lower-case service identifier",
        "Scale db-rw before the sale.",
        "assert",
        "Writes go to db-rw.",
        "Writes go to pg-main.",
        True,
    ),
    Case(
        "a hyphenated word is not an identifier",
        "Send a follow-up to the client.",
        "revoke",
        "The follow-up is drafted.",
        None,
        False,
    ),
    Case(
        "a look-alike: a qualifier inserted between the name and its head",
        "Renew the ACME-7 licence in June.",
        "revoke",
        "The ACME-7 trial licence ends in June.",
        None,
        False,
    ),
    Case(
        "a look-alike: a qualifier swapped before the same head",
        "Use the K-22 staging token for tests.",
        "revoke",
        "The K-22 prod token was leaked.",
        None,
        False,
    ),
    Case(
        "the same name with different nouns after it is the same thing",
        "Pickup at 8:00 from the Sunrise Hotel lobby.",
        "revoke",
        "The Sunrise Hotel booking is confirmed.",
        None,
        True,
    ),
    Case(
        "a longer name the item names too is the same thing",
        "Point the reports at the db-rw Replica.",
        "supersede",
        "The db-rw Replica lags by an hour.",
        "The db-ro Replica lags by an hour.",
        True,
    ),
    Case(
        "a premise change with nothing withdrawn is out of scope",
        "Asleep by 10:30 every night.",
        "assert",
        None,
        None,
        False,
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_builtin_verifier_cases(case: Case) -> None:
    later = Later(
        event_id="e9",
        epoch=9,
        op=case.op,
        text=case.withdrawn or "news",
        withdrawn_id="w" if case.withdrawn else None,
        withdrawn_text=case.withdrawn,
        replacement_id="r" if case.replacement else None,
        replacement_text=case.replacement,
    )

    [verdict] = TermVerifier().judge([Pair(later=later, earlier=item("x", case.earlier))])

    assert verdict.invalidates is case.invalidates, verdict.reason
    assert not verdict.abstained, verdict.reason
    assert verdict.reason


def test_a_compound_against_its_bare_first_part_is_an_abstention() -> None:
    # A gel named after the tablet, or the tablet's own gel form: the terms cannot tell.
    earlier = item("x", "Take Aspirin at noon with food.")

    [verdict] = TermVerifier().judge(
        [Pair(later=withdrawal("Aspirin gel is for the sore knee."), earlier=earlier)]
    )

    assert verdict.abstained
    assert not verdict.invalidates
    assert "Aspirin gel" in verdict.reason
    assert verdict.terms == ("Aspirin",)


def test_a_longer_name_against_its_bare_first_part_is_an_abstention() -> None:
    # An escrow named after the account, or the account's own escrow: the terms cannot tell.
    later = withdrawal("The garage deposit is held by ACC-77 Escrow.")
    earlier = item("x", "Move the deposit to ACC-77 by Friday.")

    [verdict] = TermVerifier().judge([Pair(later=later, earlier=earlier)])

    assert verdict.abstained
    assert not verdict.invalidates
    assert "ACC-77 Escrow" in verdict.reason


@pytest.mark.parametrize(
    ("withdrawn", "earlier"),
    [
        # the earlier item names the same longer name
        ("The deposit is held by ACC-77 Escrow.", "Ask ACC-77 Escrow for the deposit."),
        # a weekday after the name is a time, not part of it
        ("Meet ACC-77 Monday at noon.", "Send ACC-77 the forms."),
        # nor is a capitalized stopword
        ("Wire the deposit to ACC-77 The moment it clears.", "Send ACC-77 the forms."),
    ],
)
def test_a_longer_name_that_is_the_items_own_or_a_time_still_links(
    withdrawn: str, earlier: str
) -> None:
    [verdict] = TermVerifier().judge(
        [Pair(later=withdrawal(withdrawn), earlier=item("x", earlier))]
    )

    assert verdict.invalidates, verdict.reason
    assert not verdict.abstained


@pytest.mark.parametrize(
    ("withdrawn", "earlier"),
    [
        # the earlier item names a part of the same place: the link holds
        ("The Harbour Hotel booking is confirmed.", "Pickup from the Harbour Hotel lobby."),
        # a verb, not a compound, follows the name
        ("Atlas chairs Monday's planning meeting.", "Send Atlas the agenda before Monday."),
        # the compound is the item's own thing
        ("The Atlas review is on Thursday.", "Prepare slides for the Atlas review."),
    ],
)
def test_a_name_followed_by_other_words_still_links(withdrawn: str, earlier: str) -> None:
    [verdict] = TermVerifier().judge(
        [Pair(later=withdrawal(withdrawn), earlier=item("x", earlier))]
    )

    assert verdict.invalidates, verdict.reason
    assert not verdict.abstained


@pytest.mark.parametrize(
    ("withdrawn", "earlier", "links"),
    [
        ("Meet in Room 101 at noon.", "The projector in Room 102 is broken.", False),
        (
            '"notes/inv18" = {"text": "Invoice 18 is paid."}',
            '"notes/inv17" = Invoice 17 is paid.',
            False,
        ),
        ("Check in for Flight BA117 at Gate 4.", "Flight BA118 boards late.", False),
        # the same number: the same thing, linked as before
        ("Meet in Room 101 at noon.", "The projector in Room 101 is broken.", True),
    ],
)
def test_a_name_numbered_otherwise_is_another_of_its_kind(
    withdrawn: str, earlier: str, links: bool
) -> None:
    [verdict] = TermVerifier().judge(
        [Pair(later=withdrawal(withdrawn), earlier=item("x", earlier))]
    )

    assert verdict.invalidates is links, verdict.reason


def test_a_confirmation_names_the_linking_terms() -> None:
    later = withdrawal("Sunrise Hotel is booked, refundable, $268 in total.", "h0")
    earlier = item("p0", "Recommended pickup at 8:00 from Sunrise Hotel.")

    [verdict] = TermVerifier().judge([Pair(later=later, earlier=earlier)])

    assert verdict.terms == ("Sunrise Hotel",)
    assert verdict.confidence >= 0.65
    assert "h0" in verdict.reason
    assert "e9" in verdict.reason


def test_a_replacement_that_only_omits_context_is_not_a_change() -> None:
    later = Later(
        event_id="e9",
        epoch=9,
        op="assert",
        text="svc-a deploys to eu-central now.",
        withdrawn_id="a0",
        withdrawn_text="svc-a deploys to eu-central because Frankfurt is the primary site.",
        replacement_id="a1",
        replacement_text="svc-a deploys to eu-central now.",
    )
    earlier = item("b0", "svc-b deploys to eu-central because Frankfurt is the primary site.")

    [verdict] = TermVerifier().judge([Pair(later=later, earlier=earlier)])

    assert verdict.invalidates is False


@dataclass(frozen=True)
class Change:
    id: str
    earlier: str
    withdrawn: str
    replacement: str | None
    invalidates: bool


# An item that records a change names the old value only to say it is gone: withdrawing
# that old value later does not invalidate it. The new value, or a plain use, still links.
CHANGE_RECORDS = [
    Change(
        "scheduling: moved from X to Y, X revoked",
        "The standup moved from Room Atlas to Room Borealis.",
        "Room Atlas is booked for the standup.",
        None,
        False,
    ),
    Change(
        "scheduling: moved from X to Y, X replaced by a third room",
        "The standup moved from Room Atlas to Room Borealis.",
        "The standup is in Room Atlas.",
        "The standup is in Room Cedar.",
        False,
    ),
    Change(
        "procurement: switched the supplier from X to Y",
        "Switched the supplier from Acme to Brightline.",
        "Acme supplies the office paper.",
        None,
        False,
    ),
    Change(
        "health: Y replaced X as the attending",
        "Dr Okafor replaced Dr Lee as the attending.",
        "Dr Lee is the attending on ward 4.",
        None,
        False,
    ),
    Change(
        "health: X was replaced by Y",
        "Dr Lee was replaced by Dr Okafor on ward 4.",
        "Dr Lee is the attending on ward 4.",
        None,
        False,
    ),
    Change(
        "deadlines: pushed from a date to another",
        "The deadline was pushed from May 3 to May 10.",
        "Invoice INV-7 is due May 3.",
        "Invoice INV-7 is due May 17.",
        False,
    ),
    Change(
        "software: an arrow in a recorded change",
        "Primary region changed: eu-west-1 → eu-central-1.",
        "The primary region is eu-west-1.",
        "The primary region is us-east-2.",
        False,
    ),
    Change(
        "software: an ascii arrow in a recorded change",
        "Payroll cluster updated PAY-42 -> PAY-77 last week.",
        "Payroll runs on PAY-42.",
        "Payroll runs on PAY-90.",
        False,
    ),
    Change(
        "preferences: replaced X with Y",
        "We replaced the Kona blend with the Sumatra blend.",
        "The Kona blend is in stock.",
        None,
        False,
    ),
    Change(
        "finance: no longer X",
        "We no longer bank with Northbank; rent goes to Eastway.",
        "Northbank holds the rent account.",
        None,
        False,
    ),
    Change(
        "travel: Y instead of X",
        "Book the Riverside Hotel instead of the Sunrise Hotel.",
        "Sunrise Hotel is booked.",
        None,
        False,
    ),
    Change(
        "scheduling: X was cancelled, so ...",
        "The Atlas review was cancelled, so the slides are due Friday.",
        "The Atlas review is on Thursday.",
        None,
        False,
    ),
    Change(
        "a code changed from a number to another",
        "The vendor call code changed from 4417 to 9920.",
        "The vendor call code is 4417.",
        "The vendor call code is 5531.",
        False,
    ),
    # Negative controls: the item relies on the withdrawn value.
    Change(
        "control: a plain use of X",
        "Meet in Room Atlas at 9.",
        "Room Atlas is booked for the standup.",
        None,
        True,
    ),
    Change(
        "control: the new side of the change is withdrawn",
        "The standup moved from Room Atlas to Room Borealis.",
        "Room Borealis is booked for the standup.",
        None,
        True,
    ),
    Change(
        "control: the new side of a replacement is withdrawn",
        "Dr Lee replaced Dr Okafor as the attending.",
        "Dr Lee is the attending on ward 4.",
        None,
        True,
    ),
    Change(
        "control: the new supplier is withdrawn",
        "Switched the supplier from Acme to Brightline.",
        "Brightline supplies the office paper.",
        None,
        True,
    ),
    Change(
        "control: a route from X to Y is not a change",
        "Shuttle from the Sunrise Hotel to the airport at 8:00.",
        "Sunrise Hotel is booked.",
        None,
        True,
    ),
    Change(
        "control: an arrow with no sign of a change is a route",
        "Transfer: Sunrise Hotel → Harbour Station at 8:00.",
        "Sunrise Hotel is booked.",
        None,
        True,
    ),
    Change(
        "control: X named as the old side and used again",
        "The standup moved from Room Atlas to Room Borealis; the retro stays in Room Atlas.",
        "Room Atlas is booked for the standup.",
        None,
        True,
    ),
    Change(
        "control: an instruction to change still relies on X",
        "Move the standup from Room Atlas to Room Borealis tomorrow.",
        "The standup is in Room Atlas.",
        "The standup is in Room Cedar.",
        True,
    ),
    Change(
        "control: something else was cancelled",
        "Meet in Room Atlas because the Beacon review was cancelled.",
        "Room Atlas is booked for the standup.",
        None,
        True,
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CHANGE_RECORDS])
def test_an_item_recording_a_change_does_not_rely_on_the_old_value(case: Change) -> None:
    later = Later(
        event_id="e9",
        epoch=9,
        op="supersede" if case.replacement else "revoke",
        text=case.replacement or case.withdrawn,
        withdrawn_id="w",
        withdrawn_text=case.withdrawn,
        replacement_id="r" if case.replacement else None,
        replacement_text=case.replacement,
    )

    [verdict] = TermVerifier().judge([Pair(later=later, earlier=item("x", case.earlier))])

    assert verdict.invalidates is case.invalidates, verdict.reason
    assert not verdict.abstained, verdict.reason


def test_an_unlinked_change_record_says_which_value_it_names_as_old() -> None:
    earlier = item("x", "Switched the supplier from Acme to Brightline.")

    [verdict] = TermVerifier().judge(
        [Pair(later=withdrawal("Acme supplies the office paper.", "s0"), earlier=earlier)]
    )

    assert not verdict.invalidates
    assert "Acme" in verdict.reason
    assert "old value" in verdict.reason
