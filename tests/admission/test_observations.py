"""What a verifier is shown of a replacement in the very words of what it replaced."""

from dataclasses import replace

import pytest

from builders import T0, context, item
from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.observations import observations
from readmit.events import ItemDraft, Recorded, Supersede
from readmit.model import Agent, Scope

TEXT = "Sunrise Hotel is booked."
AGENTS = {
    "A1": Agent(id="A1", principal="family", role="itinerary"),
    "B1": Agent(id="B1", principal="agency", role="booking"),
}


def _replaced_by_b1(agents: dict[str, Agent], loaded: bool) -> ReturnContext:
    """h0 (the family's and the agency's) superseded in the same words by B1's h3, which
    names no readers: the agency's alone, fewer than h0's."""
    h0 = item("h0", TEXT, epoch=1, scope=Scope(principals=frozenset({"family", "agency"})))
    p0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.", epoch=2)
    h3 = item("h3", TEXT, epoch=4, author="B1", scope=Scope(principals=frozenset({"agency"})))
    event = Supersede(id="e4", at=T0, author="B1", target="h0", item=ItemDraft(id="h3", text=TEXT))
    items = (h0, p0, h3) if loaded else (h0, p0)
    delta = (Recorded(epoch=4, event=event),)
    return replace(context(items, delta=delta, departure_epoch=3), agents=agents)


@pytest.mark.parametrize(
    ("agents", "loaded"),
    [(AGENTS, False), ({}, True), ({}, False)],
    ids=["author known", "replacing item loaded", "neither"],
)
def test_a_same_words_replacement_read_by_fewer_shows_nothing_in_its_place(
    agents: dict[str, Agent], loaded: bool
) -> None:
    """Its readers come from the event's author, else from the item; with neither known
    it does not stand in (a review's finding: with neither, it was shown as standing in)."""
    [later] = observations(_replaced_by_b1(agents, loaded))

    assert later.replacement_text is None
    assert later.text == f"No longer valid: {TEXT}"


def test_contexts_that_differ_only_in_agents_each_get_their_own_observations() -> None:
    """The observations made for one context's items and Δ are found again by another's
    only if its agents are the same (a review's finding: a hand-built context that shared
    the tuples got whichever was made first). B1 restates the family's h0 for its own
    principal: in h0's place for the family, not for the agency."""
    h0 = item("h0", TEXT, epoch=1, scope=Scope(principals=frozenset({"family"})))
    p0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.", epoch=2)
    event = Supersede(id="e4", at=T0, author="B1", target="h0", item=ItemDraft(id="h3", text=TEXT))
    family = context((h0, p0), delta=(Recorded(epoch=4, event=event),), departure_epoch=3)
    family = replace(family, agents={"B1": Agent(id="B1", principal="family", role="booking")})
    agency = replace(family, agents={"B1": Agent(id="B1", principal="agency", role="booking")})

    for ctx, shown in [(family, TEXT), (agency, None), (family, TEXT)]:
        [later] = observations(ctx)
        assert later.replacement_text == shown


def test_a_replacement_in_other_words_for_fewer_uses_shows_the_withdrawal_and_where() -> None:
    """The verifier reads that the booking is gone, and what holds in its place, and for
    which use; no replacement text stands in for the booking."""
    h0 = item("h0", TEXT, epoch=1)
    draft = ItemDraft(id="h3", text="The Sunrise Hotel booking is confirmed.", task="audit")
    event = Supersede(id="e4", at=T0, author="A1", target="h0", item=draft)
    ctx = context((h0,), delta=(Recorded(epoch=4, event=event),), departure_epoch=3)

    [later] = observations(replace(ctx, agents=AGENTS))

    assert later.replacement_text is None
    assert later.withdrawn_text == TEXT
    assert later.text == (
        f"No longer valid: {TEXT} (in its place, only for the task 'audit': {draft.text})"
    )
