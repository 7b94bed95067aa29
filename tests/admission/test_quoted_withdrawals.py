"""A withdrawal of an item C lacks is unquoted only where the store cannot quote the item
(`readmit.admission.invalidation.unquoted`): a screening stops before it, and no sooner."""

from collections.abc import Sequence
from dataclasses import replace

from builders import T0, context, item, revoke
from readmit.admission.invalidation.unquoted import quoted, unquoted
from readmit.events import Assert, Close, ItemDraft, Recorded
from readmit.model import Item

TARGET = item("t", "The standup is at 9:00.", epoch=1)
GONE = item("gone", "Dinner at Casa Rio.", epoch=1)


def test_a_withdrawal_of_an_item_the_store_quotes_is_not_unquoted() -> None:
    """The store quotes ``gone`` (held at the departure, another principal's): its
    revocation is shown to the verifier, so it does not cut a screening; ``lost``, which
    the store does not know, is unquoted."""
    asked: list[tuple[list[str], list[str]]] = []

    def quote(targets: Sequence[str], keys: Sequence[str]) -> tuple[Item, ...]:
        asked.append((list(targets), list(keys)))
        return tuple(i for i in (GONE,) if i.id in targets)

    delta = (revoke("gone", 2), revoke("lost", 3), revoke("t", 4))
    ctx = replace(context((TARGET,), delta=delta), quote=quote)

    assert unquoted(ctx) == (3,)
    assert quoted(ctx) == (GONE,)
    assert asked == [(["gone", "lost"], [])]


def _keyed(id: str, epoch: int) -> Recorded:
    draft = ItemDraft(id=id, text=f"The standup room is {id}.", key="room")
    return Recorded(epoch=epoch, event=Assert(id=f"e-{id}", at=T0, author="A2", item=draft))


def test_a_closing_of_an_item_c_lacks_is_unquoted() -> None:
    """A closing names the item it ends, as a revocation does: one C lacks is unquoted."""
    closing = Recorded(epoch=2, event=Close(id="cl-gone", at=T0, author="A2", target="gone"))

    assert unquoted(context((TARGET,), delta=(closing, revoke("t", 3)))) == (2,)


def test_only_the_first_assert_of_a_key_c_lacks_is_unquoted_when_grown() -> None:
    """The key's first assert may replace an item from before the departure that C lacks;
    the next replaces that first one, which C holds. A return at a later epoch, whose
    value is grown from the earlier one's, finds what a return made whole finds."""
    first = context((TARGET,), delta=(_keyed("Atlas", 2),))
    assert unquoted(first) == (2,)
    delta = (*first.delta, _keyed("Borealis", 3), _keyed("Cedar", 4))
    grown = replace(context((TARGET,), delta=delta), items=first.items)  # C's very tuple

    assert unquoted(grown) == (2,)
    assert unquoted(context((TARGET,), delta=delta)) == (2,)
