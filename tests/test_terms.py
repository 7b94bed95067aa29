import pytest

from readmit.terms import distinctive_terms, named_only_as_former


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
