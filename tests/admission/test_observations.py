"""What a verifier is shown of a replacement in the very words of what it replaced."""

from dataclasses import replace

import pytest

from builders import T0, context, item
from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.observations import observations, readable
from readmit.admission.invalidation.readers import as_read_by
from readmit.events import Evidence, ItemDraft, Recorded, Supersede
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
    [(AGENTS, False), ({}, True)],
    ids=["author known", "replacing item loaded"],
)
def test_a_same_words_replacement_read_by_fewer_is_news_only_to_its_readers(
    agents: dict[str, Agent], loaded: bool
) -> None:
    """Its readers come from the event's author, else from the item. To an item the
    family reads too (p0), the booking was withdrawn; to one only the agency reads, it is
    the booking filed again, whose news must still be judged (a review's finding: shown
    as a withdrawal to every item, news was lost to an item older than the first filing)."""
    [later] = observations(_replaced_by_b1(agents, loaded))
    agency = item(
        "q0", "Agency invoice for Sunrise Hotel.", scope=Scope(principals=frozenset({"agency"}))
    )

    p0 = item("p0", scope=Scope(principals=frozenset({"family", "agency"})))
    news, to_p0 = as_read_by(p0, [later])
    assert (to_p0.replacement_text, to_p0.text) == (None, f"No longer valid: {TEXT}")
    assert (news.withdrawn_id, news.replacement_text, news.text) == (None, TEXT, TEXT)
    assert as_read_by(p0, [later], news=False) == [to_p0]
    assert as_read_by(agency, [later]) == [later]
    assert (later.replacement_text, later.withdrawn_text, later.text) == (TEXT, TEXT, TEXT)


def test_a_same_words_replacement_whose_readers_are_unknown_shows_nothing_in_its_place() -> None:
    """With neither its author nor its item known, it stands in for nobody (a review's
    finding: it was shown as standing in)."""
    [news, later] = observations(_replaced_by_b1({}, loaded=False))

    assert later.replacement_text is None
    assert later.text == f"No longer valid: {TEXT}"
    assert (news.withdrawn_id, news.replacement_text) == (None, TEXT)


def test_contexts_that_differ_only_in_agents_each_get_their_own_observations() -> None:
    """The observations made for one context's items and Δ are found again by another's
    only if its agents are the same (a review's finding: a hand-built context that shared
    the tuples got whichever was made first). B1 restates the family's h0 for its own
    principal: in h0's place for the family, for fewer readers for the agency."""
    h0 = item("h0", TEXT, epoch=1, scope=Scope(principals=frozenset({"family"})))
    p0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.", epoch=2)
    event = Supersede(id="e4", at=T0, author="B1", target="h0", item=ItemDraft(id="h3", text=TEXT))
    family = context((h0, p0), delta=(Recorded(epoch=4, event=event),), departure_epoch=3)
    family = replace(family, agents={"B1": Agent(id="B1", principal="family", role="booking")})
    agency = replace(family, agents={"B1": Agent(id="B1", principal="agency", role="booking")})

    for ctx, fewer in [(family, False), (agency, True), (family, False)]:
        [later] = observations(ctx)
        assert (later.fewer is not None) == fewer


@pytest.mark.parametrize("words", ["The Sunrise Hotel booking is confirmed.", TEXT])
def test_a_replacement_for_fewer_uses_shows_the_withdrawal_and_where_and_is_news(
    words: str,
) -> None:
    """The verifier reads that the booking is gone, and what holds in its place, and for
    which use; no replacement text stands in for the booking. What the new item says is
    news too, to an item older than the booking (a review's finding: in the same words,
    the withdrawal alone was shown, and read as if the booking were gone everywhere)."""
    h0 = item("h0", TEXT, epoch=1)
    draft = ItemDraft(id="h3", text=words, task="audit")
    event = Supersede(id="e4", at=T0, author="A1", target="h0", item=draft)
    ctx = context((h0,), delta=(Recorded(epoch=4, event=event),), departure_epoch=3)

    [news, later] = observations(replace(ctx, agents=AGENTS))

    assert later.replacement_text is None
    assert later.withdrawn_text == TEXT
    assert (
        later.text == f"No longer valid: {TEXT} (in its place, only for the task 'audit': {words})"
    )
    assert (news.op, news.text, news.withdrawn_id, news.replacement_text) == (
        "supersede",
        words,
        None,
        words,
    )
    assert [x.withdrawn_text for x in observations(replace(ctx, agents=AGENTS), news=False)] == [
        TEXT
    ]


def test_evidence_is_read_as_its_authors_principals_each_by_its_own_event() -> None:
    """Two pieces of evidence in Δ, the family's then the neighbours': a family returner
    may read the first, not the second (a mutation review: an index off by one read each
    one's author from the event after it)."""

    def note(epoch: int, author: str) -> Recorded:
        said = Evidence(id=f"ev{epoch}", at=T0, author=author, source_id=f"s{epoch}", text="Hi.")
        return Recorded(epoch=epoch, event=said)

    agents = {
        "A2": Agent(id="A2", principal="family", role="booking"),
        "B1": Agent(id="B1", principal="neighbours", role="itinerary"),
    }
    delta = (note(2, "A2"), note(3, "B1"))
    ctx = replace(context((item("x", "Swim at 9."),), delta=delta), agents=agents)
    ours, theirs = observations(ctx, True)

    assert (ours.event_id, theirs.event_id) == ("ev2", "ev3")
    assert readable(ours, ctx, ctx.items[0])
    assert not readable(theirs, ctx, ctx.items[0])
