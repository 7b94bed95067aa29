from copy import copy
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import NOW, T0, context, item, returner, revoke, supersede
from readmit.admission.context import ReturnContext
from readmit.admission.invalidation import explicit
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.events import Assert, Close, Event, ItemDraft, Recorded, Revoke, Supersede
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


KEYS = (None, "hotel", "car", "desk")


def _history(data: st.DataObject) -> tuple[tuple[Item, ...], tuple[Recorded, ...]]:
    """Items (some sharing keys, some by an author of another principal, some hearsay) and
    a Δ of revokes, supersedes and closes of them, in epoch order, then more items."""
    n = data.draw(st.integers(1, 14), label="items")
    items = [
        item(
            f"m{i}",
            f"Fact {i}.",
            epoch=i + 1,
            key=data.draw(st.sampled_from(KEYS)),
            author=data.draw(st.sampled_from(("A2", "A2", "X9"))),
            receipt=data.draw(st.booleans()),
        )
        for i in range(n)
    ]
    delta: list[Recorded] = []
    for j in range(data.draw(st.integers(0, 10), label="events")):
        epoch = n + 1 + j
        target = f"m{data.draw(st.integers(0, n + 2))}"  # now and then no item of C
        at = T0 + timedelta(hours=data.draw(st.integers(0, 96)))
        match data.draw(st.sampled_from(("revoke", "supersede", "close", "assert"))):
            case "revoke":
                event: Event = Revoke(id=f"e{j}", at=at, author="A2", target=target, why="gone")
            case "supersede":
                new = ItemDraft(id=f"s{j}", text=f"New {j}.", key=data.draw(st.sampled_from(KEYS)))
                event = Supersede(id=f"e{j}", at=at, author="A2", target=target, item=new)
                items.append(item(new.id, new.text, epoch=epoch, key=new.key))
            case "close":
                event = Close(id=f"e{j}", at=at, author="A2", target=target)
            case _:
                key = data.draw(st.sampled_from(KEYS))
                items.append(item(f"a{j}", f"Added {j}.", epoch=epoch, key=key))
                event = Assert(id=f"e{j}", at=at, author="A2", item=ItemDraft(id=f"a{j}", text="x"))
        delta.append(Recorded(epoch=epoch, event=event))
    return tuple(items), tuple(delta)


def _at(ctx: ReturnContext, hours: int, agents: dict[str, Agent]) -> ReturnContext:
    return replace(
        ctx, returner=replace(ctx.returner, at=T0 + timedelta(hours=hours)), agents=agents
    )


@settings(max_examples=300)
@given(st.data())
def test_a_split_grown_from_an_earlier_return_is_the_split_made_whole(data: st.DataObject) -> None:
    """Returns whose items and Δ extend an earlier return's are split from that one's split
    (`explicit._grown`); each must equal the split made from nothing, in order. Three
    returns, so the third finds items by an index the second made (`_Places`), some of
    them after it; ``_UNINDEXED`` drawn small makes that index again."""
    items, delta = _history(data)
    cuts = sorted(data.draw(st.lists(st.integers(1, len(items)), min_size=2, max_size=2)))
    events = sorted(data.draw(st.lists(st.integers(0, len(delta)), min_size=2, max_size=2)))
    teams: tuple[dict[str, Agent], ...] = (
        {},
        {"A2": Agent(id="A2", principal="family", role="r")},
        {
            "A2": Agent(id="A2", principal="family", role="r"),
            "X9": Agent(id="X9", principal="agency", role="r"),
        },
    )
    agents = data.draw(st.sampled_from(teams), label="agents")
    hours = data.draw(st.integers(0, 100), label="first return")
    unindexed = explicit._UNINDEXED
    explicit._UNINDEXED = data.draw(st.sampled_from((0, 1, unindexed)), label="unindexed")
    try:
        for n, m in (*zip(cuts, events, strict=True), (len(items), len(delta))):
            agents = data.draw(st.sampled_from((agents, agents, *teams)), label="agents")
            hours += data.draw(st.sampled_from((0, 30)), label="hours later")
            ctx = _at(context(items[:n], delta=delta[:m]), hours, agents)
            grown = resolve_explicit(list(ctx.items), ctx)
            fresh = _at(context(tuple(map(copy, items[:n])), delta=delta[:m]), hours, agents)
            whole = resolve_explicit(list(fresh.items), fresh)

            assert [i.id for i in grown[0]] == [i.id for i in whole[0]]
            assert grown[1] == whole[1]
    finally:
        explicit._UNINDEXED = unindexed


def test_a_later_return_grows_the_split_and_moves_only_what_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x, y = item("x", "Desk 4 is free.", epoch=2), item("y", "Desk 5 is free.", epoch=3)
    first, gone = (H0, C, x, y), (supersede("x", y),)
    earlier = context(first, delta=gone)
    ctx = context((*first, H1), delta=(*gone, revoke("x", 4), supersede("h0", H1)))
    resolve_explicit(list(earlier.items), earlier)

    def whole(*_: object) -> None:
        raise AssertionError("made whole")

    monkeypatch.setattr(explicit, "_whole", whole)
    kept, excluded = resolve_explicit(list(ctx.items), ctx)

    # h0 leaves the kept in place; x's supersession gives way to its revocation.
    assert [i.id for i in kept] == ["c", "y", "h1"]
    assert [(e.item, e.reason) for e in excluded] == [
        ("h0", Reason.STALE_OR_SUPERSEDED),
        ("x", Reason.REVOKED),
    ]


def test_returns_rotating_over_many_workspaces_each_grow_their_own_split(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A memo kept four splits: a fifth workspace's return lost the first one's."""
    lineages = []
    for w in range(12):  # each workspace's store decodes items of its own
        first, x = replace(H0), item(f"x{w}", f"Desk {w} is free.", epoch=2)
        earlier = context((first, replace(C), x), delta=(revoke(f"gone{w}", 2),))
        resolve_explicit(list(earlier.items), earlier)
        lineages.append((earlier, x))

    def whole(*_: object) -> None:
        raise AssertionError("made whole")

    monkeypatch.setattr(explicit, "_whole", whole)
    for earlier, x in lineages:
        delta = (*earlier.delta, revoke(x.id, 4), supersede("h0", H1))
        later = context((*earlier.items, H1), delta=delta)
        kept, excluded = resolve_explicit(list(later.items), later)
        assert [i.id for i in kept] == ["c", "h1"]
        assert {e.item for e in excluded} == {"h0", x.id}


def test_a_later_return_with_other_agents_is_not_grown_from_the_earlier_split() -> None:
    """Who may replace what is read from the agents: another team's split is not reused."""
    outsider = replace(H1, author="X9")
    first, gone = (H0, outsider), (revoke("zz", 2),)
    earlier = context(first, delta=gone)  # no agents: anyone may replace
    strangers = {
        "A2": Agent(id="A2", principal="family", role="r"),
        "X9": Agent(id="X9", principal="agency", role="r"),
    }
    later = replace(context((*first, C), delta=(*gone, revoke("c", 5))), agents=strangers)

    assert [e.item for e in resolve_explicit(list(earlier.items), earlier)[1]] == ["h0"]
    assert [e.item for e in resolve_explicit(list(later.items), later)[1]] == ["c"]


def test_an_id_held_twice_is_split_whole() -> None:
    """No store's C holds an id twice; given one that does, both items fall, as before."""
    first, second, other = item("x", "One."), item("x", "Two.", epoch=2), item("y", epoch=3)
    items, gone = (first, second, other), (revoke("zz", 4),)
    resolve_explicit(list(items), context(items, delta=gone))

    kept, excluded = resolve_explicit(list(items), context(items, delta=(*gone, revoke("x", 5))))

    assert kept == [other]
    assert [e.item for e in excluded] == ["x", "x"]


def test_more_earlier_items_moved_than_the_limit_make_the_split_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    many = tuple(item(f"m{i}", f"Fact {i}.", epoch=i + 1) for i in range(explicit._MOVED + 1))
    gone = (revoke("zz", 99),)
    resolve_explicit(list(many), context(many, delta=gone))
    later = (*gone, *(revoke(m.id, 100 + i) for i, m in enumerate(many)))
    made_whole: list[object] = []
    whole = explicit._whole

    def counted(*args: Any) -> object:
        made_whole.append(args)
        return whole(*args)

    monkeypatch.setattr(explicit, "_whole", counted)

    kept, excluded = resolve_explicit(list(many), context(many, delta=later))

    assert len(made_whole) == 1
    assert kept == []
    assert [e.item for e in excluded] == [m.id for m in many]
