"""What a keyed item that replaced several holders of its key is shown as
(`readmit.admission.invalidation.observations.observations_of`)."""

from datetime import timedelta

from builders import T0, item
from readmit.admission.invalidation.observations import observations_of
from readmit.events import Assert, ItemDraft, Recorded
from readmit.model import Agent, Scope, Validity

BOOKED = "Sunrise Hotel is booked."
CONFIRMED = "The Sunrise Hotel booking is confirmed."
UNTIL = T0 + timedelta(hours=2)
AGENTS = {
    "A2": Agent(id="A2", principal="family", role="booking"),
    "B1": Agent(id="B1", principal="agency", role="booking"),
}
EVERYONE = Scope(principals=frozenset({"*"}))


def _replacing_two() -> list[Recorded]:
    """A2's h2 (until 10:00) replaces the two holders of key "hotel" it may read."""
    return [
        Recorded(
            epoch=5,
            event=Assert(
                id="e5",
                at=T0,
                author="A2",
                item=ItemDraft(
                    id="h2", text=CONFIRMED, key="hotel", validity=Validity(valid_to=UNTIL)
                ),
            ),
        )
    ]


def test_a_keyed_item_standing_in_for_one_holder_is_not_news_as_well() -> None:
    """The family's h0 (no end) and the agency's h1 for everyone (until 9:00: the agency
    may not read h0, so h1 replaced nothing) both hold the key. To h1, which ended sooner,
    h2 stands in (shown in its words); to h0 it is a withdrawal. One observation shows h2
    in a place, so h2 is not added as news besides: what it says is judged through it."""
    h0 = item("h0", BOOKED, epoch=1, key="hotel")
    until_nine = Validity(valid_to=T0 + timedelta(hours=1))
    h1 = item("h1", BOOKED, epoch=2, key="hotel", author="B1", scope=EVERYONE, validity=until_nine)
    h2 = item("h2", CONFIRMED, epoch=5, key="hotel", validity=Validity(valid_to=UNTIL))
    items = (h0, h1, h2)

    laters = observations_of(_replacing_two(), items, {i.id: i for i in items}, agents=AGENTS)

    shown = {(x.withdrawn_id, x.replacement_text) for x in laters}
    assert shown == {("h1", CONFIRMED), ("h0", None)}


def test_a_keyed_item_that_stands_in_for_no_holder_is_news_first() -> None:
    """Both holders had no end: h2 is a withdrawal to each, and news, first."""
    h0 = item("h0", BOOKED, epoch=1, key="hotel")
    h1 = item("h1", BOOKED, epoch=2, key="hotel", author="B1", scope=EVERYONE)
    h2 = item("h2", CONFIRMED, epoch=5, key="hotel", validity=Validity(valid_to=UNTIL))
    items = (h0, h1, h2)

    laters = observations_of(_replacing_two(), items, {i.id: i for i in items}, agents=AGENTS)

    assert [(x.withdrawn_id, x.replacement_text) for x in laters] == [
        (None, CONFIRMED),
        ("h1", None),
        ("h0", None),
    ]
