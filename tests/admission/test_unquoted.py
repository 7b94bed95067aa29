"""Δ's withdrawals a return's context cannot quote, and what it quotes all the same."""

from collections.abc import Sequence
from dataclasses import replace

from builders import context, item, revoke, supersede
from readmit.admission.invalidation.observations import observations
from readmit.admission.invalidation.unquoted import quoted, unquoted
from readmit.model import Item

HELD = item("x", "The standup room is Room Atlas.", key="room", epoch=1)
TARGET = item("t", "The standup is at 9:00.", epoch=1)
NEW = item("t2", "The standup room is Room Borealis.", key="room", epoch=3)


def test_a_revocation_of_an_item_c_lacks_is_unquoted() -> None:
    ctx = context((TARGET,), delta=(revoke("gone", 2), revoke("t", 3)))

    assert unquoted(ctx) == (2,)


def test_a_keyed_supersession_replaces_what_held_its_key_too() -> None:
    held = context((HELD, TARGET), delta=(supersede("t", NEW),))
    lacked = context((TARGET,), delta=(supersede("t", NEW),))

    assert unquoted(held) == ()
    assert unquoted(lacked) == (3,)  # nothing says whether a key was held: taken to be


class _LeftOut:
    """Stands in for the store: the items a checkpoint left out, as asked for."""

    def __init__(self, *items: Item) -> None:
        self.items = items
        self.asked: list[tuple[list[str], list[str]]] = []

    def __call__(self, ids: Sequence[str], keys: Sequence[str]) -> tuple[Item, ...]:
        self.asked.append((list(ids), list(keys)))
        return tuple(i for i in self.items if i.id in ids or i.key in keys)


def test_what_c_lacks_is_asked_for_and_quoted() -> None:
    left_out = _LeftOut(HELD, item("gone", "Dinner at Casa Rio.", epoch=1))
    ctx = replace(
        context((TARGET,), delta=(revoke("gone", 2), supersede("t", NEW))), left_out=left_out
    )

    assert {i.id for i in quoted(ctx)} == {"x", "gone"}
    assert left_out.asked == [(["gone"], ["room"])]
    withdrawn = {(o.event_id, o.withdrawn_id, o.withdrawn_text) for o in observations(ctx, False)}
    assert withdrawn == {
        ("rv-gone", "gone", "Dinner at Casa Rio."),
        ("ss-t", "t", TARGET.text),
        ("ss-t", "x", HELD.text),
    }


def test_nothing_is_asked_for_when_c_quotes_every_withdrawal() -> None:
    left_out = _LeftOut()
    ctx = replace(context((HELD, TARGET), delta=(supersede("t", NEW),)), left_out=left_out)

    assert quoted(ctx) == ()
    assert left_out.asked == []
