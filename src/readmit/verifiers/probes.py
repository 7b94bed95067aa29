"""A handful of known (later event, earlier item) pairs for checking a configured verifier."""

from dataclasses import dataclass

from readmit.admission.invalidation.implicit import Later, Pair
from readmit.events import text_digest
from readmit.model import Item, Receipt


@dataclass(frozen=True, slots=True)
class Probe:
    """A pair and whether the later event invalidates the earlier item."""

    pair: Pair
    invalidates: bool
    kind: str


def sourced_item(item_id: str, text: str) -> Item:
    """An item of epoch 1 with a receipt that binds its text (a judged pair's earlier side)."""
    receipt = Receipt(
        event_id=f"ev-{item_id}", author="A", epoch=1, digest=text_digest(item_id, text)
    )
    return Item(id=item_id, text=text, epoch=1, author="A", receipt=receipt)


def _later(
    op: str, text: str, withdrawn: str | None = None, replacement: str | None = None
) -> Later:
    return Later(
        event_id="e9",
        epoch=9,
        op=op,
        text=text,
        withdrawn_id="w" if withdrawn else None,
        withdrawn_text=withdrawn,
        replacement_id="r" if replacement else None,
        replacement_text=replacement,
    )


HOTEL = "Sunrise Hotel is booked, refundable, $268 in total."
PROBES = (
    Probe(
        Pair(
            later=_later("revoke", f"No longer valid: {HOTEL} Reason: cancelled.", HOTEL),
            earlier=sourced_item("p0", "Recommended pickup at 8:00 from Sunrise Hotel."),
        ),
        True,
        "withdrawn reference",
    ),
    Probe(
        Pair(
            later=_later("revoke", f"No longer valid: {HOTEL} Reason: cancelled.", HOTEL),
            earlier=sourced_item("c", "Family requirements: a quiet hotel near the station."),
        ),
        False,
        "same topic",
    ),
    Probe(
        Pair(
            later=_later(
                "supersede",
                "The train now departs at 9:30.",
                "The train departs at 9:00.",
                "The train now departs at 9:30.",
            ),
            earlier=sourced_item("p0", "Recommended pickup at 8:00 from Sunrise Hotel."),
        ),
        False,
        "same topic",
    ),
    Probe(
        Pair(
            later=_later("assert", "I started an evening shift; I get home around 1 a.m."),
            earlier=sourced_item("b", "I am always asleep by 10:30 p.m."),
        ),
        True,
        "premise change",
    ),
    Probe(
        Pair(
            later=_later("assert", "The office printer on floor 3 was replaced."),
            earlier=sourced_item("m", "My mortgage payment is due on the 5th."),
        ),
        False,
        "unrelated",
    ),
    Probe(
        Pair(
            later=_later("close", "No longer valid: INC-1234 is open.", "INC-1234 is open."),
            earlier=sourced_item("r", "Rollback plan for INC-1234 is ready to run."),
        ),
        True,
        "withdrawn reference",
    ),
    Probe(
        Pair(
            later=_later("assert", "We moved; the office is now a 40-minute drive away."),
            earlier=sourced_item("k", "I bike to the office every day; it takes ten minutes."),
        ),
        True,
        "premise change",
    ),
    Probe(
        Pair(
            later=_later("assert", "The team switched the CI cache to a larger disk."),
            earlier=sourced_item("t", "The CI pipeline runs unit tests before the linter."),
        ),
        False,
        "near miss",
    ),
)
