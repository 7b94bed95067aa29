from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from builders import NOW, T0, context, item, returner, revoke, supersede
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.events import Close, Recorded
from readmit.model import Agent, Item
from readmit.reasons import Reason

H0 = item("h0", "Sunrise Hotel is booked.", key="hotel", epoch=1)
H1 = item("h1", "Riverside Hotel is booked.", key="hotel", epoch=3)
C = item("c", "Quiet hotel near the station.", epoch=1)


@dataclass(frozen=True)
class Case:
    id: str
    items: tuple[Item, ...]
    delta: tuple[Recorded, ...]
    expected: dict[str, Reason]


def close(target: str, epoch: int, at_offset: timedelta) -> Recorded:
    return Recorded(
        epoch=epoch, event=Close(id=f"cl-{target}", at=T0 + at_offset, author="A2", target=target)
    )


CASES = [
    Case("nothing happened", (H0, C), (), {}),
    Case("revocation", (H0, C), (revoke("h0", 2),), {"h0": Reason.REVOKED}),
    Case("supersession", (H0, H1, C), (supersede("h0", H1),), {"h0": Reason.STALE_OR_SUPERSEDED}),
    Case("same-key replacement", (H0, H1, C), (), {"h0": Reason.STALE_OR_SUPERSEDED}),
    Case("revocation wins over same-key", (H0, H1), (revoke("h0", 2),), {"h0": Reason.REVOKED}),
    Case("closed validity", (H0, C), (close("c", 2, timedelta(hours=1)),), {"c": Reason.EXPIRED}),
    Case(
        "closed after the return time", (H0, C), (close("c", 2, NOW - T0 + timedelta(hours=1)),), {}
    ),
    Case("a newer item is not replaced by an older one", (H1,), (), {}),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_explicit_rules(case: Case) -> None:
    ctx = context(case.items, delta=case.delta)

    kept, excluded = resolve_explicit(list(case.items), ctx)

    assert {e.item: e.reason for e in excluded} == case.expected
    assert {i.id for i in kept} == {i.id for i in case.items} - set(case.expected)


def test_exclusions_cite_the_event_behind_them() -> None:
    ctx = context((H0, H1), delta=(supersede("h0", H1),))

    _, excluded = resolve_explicit([H0, H1], ctx)

    assert excluded[0].evidence == ("ss-h0", "h1")


def test_hearsay_replaces_nothing() -> None:
    rumour = item("h9", "Someone said the hotel changed.", key="hotel", epoch=4, receipt=False)
    ctx = context((H0, rumour))

    kept, excluded = resolve_explicit([H0, rumour], ctx)

    assert excluded == []
    assert kept == [H0, rumour]


def test_returns_sharing_items_and_delta_still_see_the_closings_in_force_at_their_time() -> None:
    """The split of C's items is remembered per items, Δ, agents and closings in force."""
    items, delta = (H0, C), (close("c", 2, timedelta(hours=1)),)
    before = context(items, delta=delta, who=replace(returner(), at=T0 + timedelta(minutes=30)))
    after = replace(before, returner=replace(before.returner, at=T0 + timedelta(hours=2)))

    for ctx, expected in ((before, {}), (after, {"c": Reason.EXPIRED}), (before, {})):
        kept, excluded = resolve_explicit(list(items), ctx)
        assert {e.item: e.reason for e in excluded} == expected
        assert [i.id for i in kept] == [i.id for i in items if i.id not in expected]


def test_returns_sharing_items_and_delta_still_see_who_may_replace_what() -> None:
    """A replacement by an author who may not read the earlier item replaces nothing."""
    outsider = replace(H1, author="X9")
    items = (H0, outsider)
    agents = {"A2": Agent(id="A2", principal="family", role="r")}
    known = replace(
        context(items), agents={**agents, "X9": Agent(id="X9", principal="family", role="r")}
    )
    stranger = replace(known, agents={**agents, "X9": Agent(id="X9", principal="agency", role="r")})

    for ctx, replaced in ((known, ["h0"]), (stranger, []), (known, ["h0"])):
        _, excluded = resolve_explicit(list(items), ctx)
        assert [e.item for e in excluded] == replaced


def test_the_obligations_after_c_are_split_by_the_same_links() -> None:
    frontier = item("f1", "Frontier: pickup booked.", epoch=2)
    ctx = context((H0, C), delta=(revoke("h0", 3), revoke("f1", 4)))

    kept, excluded = resolve_explicit([H0, C, frontier], ctx)

    assert [i.id for i in kept] == ["c"]
    assert [e.item for e in excluded] == ["h0", "f1"]
