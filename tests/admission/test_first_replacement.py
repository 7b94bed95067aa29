"""An item replaced by its key is named with the item that replaced it.

That is the first later item of its key, by epoch, that is sourced and whose author may
read it, as the writer replaced it (`readmit.admission.invalidation.links`): not the
newest, nor the first later item of the key whoever wrote it.
"""

from dataclasses import replace

from builders import context, item
from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.model import Agent, Item, Scope

FAMILY = Scope(principals=frozenset({"family"}))
AGENTS = {
    "A2": Agent(id="A2", principal="family", role="itinerary"),
    "X9": Agent(id="X9", principal="agency", role="itinerary"),
    "Y7": Agent(id="Y7", principal="family", role="booking"),
}


def _replaced(ctx: ReturnContext) -> dict[str, tuple[str, ...]]:
    """Each excluded item's evidence: the event that replaced it, and the item."""
    _, excluded = resolve_explicit(list(ctx.items), ctx)
    return {e.item: e.evidence for e in excluded}


def _hotel(
    id: str, epoch: int, author: str = "A2", scope: Scope = FAMILY, receipt: bool = True
) -> Item:
    """An item of key ``hotel``, which the family may read unless ``scope`` says otherwise."""
    text = f"Hotel {id} is booked."
    return item(id, text, key="hotel", epoch=epoch, author=author, scope=scope, receipt=receipt)


def test_a_later_item_whose_author_may_not_read_it_is_passed_over() -> None:
    """The agency's X9 wrote the key's next item but may not read h0: the family's h2,
    after it, replaced h0, and is named."""
    h0, stranger, h2 = _hotel("h0", 1), _hotel("x", 2, author="X9"), _hotel("h2", 3)
    ctx = replace(context((h0, stranger, h2)), agents=AGENTS)

    assert _replaced(ctx)["h0"] == ("ev-h2", "h2")


def test_a_later_item_whose_authors_role_may_not_read_it_is_passed_over() -> None:
    """Y7 is the family's but acts in the booking role, and h0 is for the itinerary role
    alone: Y7's item replaced nothing, A2's after it did."""
    itinerary = Scope(principals=frozenset({"family"}), roles=frozenset({"itinerary"}))
    h0, booking, h2 = _hotel("h0", 1, scope=itinerary), _hotel("y", 2, author="Y7"), _hotel("h2", 3)
    ctx = replace(context((h0, booking, h2)), agents=AGENTS)

    assert _replaced(ctx)["h0"] == ("ev-h2", "h2")


def test_hearsay_between_does_not_keep_a_later_item_from_replacing_it() -> None:
    """Hearsay (no receipt) replaces nothing, and is no replacement to name: the sourced
    item after it is."""
    rumour = _hotel("rumour", 2, receipt=False)
    ctx = context((_hotel("h0", 1), rumour, _hotel("h2", 3)))

    assert _replaced(ctx)["h0"] == ("ev-h2", "h2")


def test_the_first_is_found_by_epoch_whatever_the_order_of_c() -> None:
    """C's items out of epoch order: each is named with the next of its key by epoch."""
    ctx = context((_hotel("h3", 3), _hotel("h0", 1), _hotel("h5", 5)))

    assert _replaced(ctx) == {"h0": ("ev-h3", "h3"), "h3": ("ev-h5", "h5")}


def test_a_later_item_by_an_author_the_workspace_does_not_know_is_passed_over() -> None:
    """Who may read h0 is read from the agents: an author not among them is not known to
    read it, so its item replaced nothing, and A2's after it replaced h0."""
    h0, unknown, h2 = _hotel("h0", 1), _hotel("z", 2, author="Z0"), _hotel("h2", 3)
    ctx = replace(context((h0, unknown, h2)), agents=AGENTS)

    assert _replaced(ctx)["h0"] == ("ev-h2", "h2")
