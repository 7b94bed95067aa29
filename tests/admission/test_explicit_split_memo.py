"""Explicit invalidation remembers C's split per closings in force: a closing recorded for
exactly the return's time is in force (a close ends validity at or before the return)."""

from dataclasses import replace
from datetime import timedelta

from builders import T0, context, item, returner, revoke
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.events import Close, Recorded
from readmit.reasons import Reason


def test_a_return_at_the_very_time_of_a_closing_is_not_handed_the_split_from_before_it() -> None:
    closed_at = T0 + timedelta(hours=1)
    # New objects: the split is remembered by the identity of C's items and Δ.
    items = (item("h0", "Sunrise Hotel is booked.", key="hotel"), item("c", "Quiet hotel."))
    delta = (Recorded(epoch=2, event=Close(id="cl-c", at=closed_at, author="A2", target="c")),)
    before = context(
        items, delta=delta, who=replace(returner(), at=closed_at - timedelta(minutes=1))
    )
    exactly = replace(before, returner=replace(before.returner, at=closed_at))

    for ctx, expected in ((before, {}), (exactly, {"c": Reason.EXPIRED}), (before, {})):
        kept, excluded = resolve_explicit(list(items), ctx)

        assert {e.item: e.reason for e in excluded} == expected
        assert [i.id for i in kept] == [i.id for i in items if i.id not in expected]


def test_an_id_held_twice_after_the_indexed_items_still_has_both_items_fall() -> None:
    """A split grown twice: the second growth finds the earlier items past the index of C's
    ids the first one made. No store's C holds an id twice; given one that does (after
    that index), a revocation of the id takes both items down, as a whole split would."""
    a, x1, x2 = item("a", "Desk 1 is free."), item("x", "One.", epoch=2), item("x", "Two.", epoch=3)
    y = item("y", "Desk 9 is free.", epoch=4)
    first = context((a,), delta=(revoke("zz", 1),))
    resolve_explicit(list(first.items), first)
    # Grown: a's revocation moves an earlier item, so C's ids are indexed (a only).
    second = context((*first.items, x1, x2), delta=(*first.delta, revoke("a", 3)))
    kept, excluded = resolve_explicit(list(second.items), second)
    assert (kept, [e.item for e in excluded]) == ([x1, x2], ["a"])

    third = context((*second.items, y), delta=(*second.delta, revoke("x", 5)))
    kept, excluded = resolve_explicit(list(third.items), third)

    assert kept == [y]
    assert [(e.item, e.reason) for e in excluded] == [
        ("a", Reason.REVOKED),
        ("x", Reason.REVOKED),
        ("x", Reason.REVOKED),
    ]
