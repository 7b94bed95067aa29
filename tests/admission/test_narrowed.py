"""Walks along chains of stand-ins (`narrowed.Paths`): read once, however many walks share
a chain, and each finds what a walk of its own finds."""

from collections.abc import Iterable

from hypothesis import given
from hypothesis import strategies as st

from builders import T0
from readmit.admission.context import StandIn
from readmit.admission.invalidation.narrowed import Handles, Paths, Steps, Unfollowed, follow
from readmit.events import Assert, Close, ItemDraft, Recorded, Revoke, Supersede
from readmit.model import Scope

EVERYONE = Scope()


def readers(event: Assert | Supersede) -> Scope:
    return EVERYONE


def anyone(author: str, scope: Scope) -> bool:
    return True


@st.composite
def logs(draw: st.DrawFn) -> list[Recorded]:
    """Items of two keys replacing each other, some superseded, revoked or closed."""
    events: list[Recorded] = []
    for epoch in range(1, draw(st.integers(1, 30)) + 1):
        kind = draw(st.sampled_from(["assert", "assert", "assert", "supersede", "revoke", "close"]))
        draft = ItemDraft(id=f"i{epoch}", text="Booked.", key=draw(st.sampled_from(["k1", "k2"])))
        target = f"i{draw(st.integers(0, epoch - 1))}"
        if kind == "assert":
            event: Assert | Supersede | Revoke | Close = Assert(
                id=f"e{epoch}", at=T0, author="A", item=draft
            )
        elif kind == "supersede":
            event = Supersede(id=f"e{epoch}", at=T0, author="A", target=target, item=draft)
        elif kind == "revoke":
            event = Revoke(id=f"e{epoch}", at=T0, author="A", target=target, why="gone")
        else:
            event = Close(id=f"e{epoch}", at=T0, author="A", target=target)
        events.append(Recorded(epoch=epoch, event=event))
    return events


def walks(log: list[Recorded]) -> list[tuple[int, StandIn]]:
    """A walk from each item the log brought, from its epoch on, and from the first item."""
    found: list[tuple[int, StandIn]] = [(0, ("i0", "k1", EVERYONE))]
    for recorded in log:
        if isinstance(recorded.event, Assert | Supersede):
            item = recorded.event.item
            found.append((recorded.epoch, (item.id, item.key, EVERYONE)))
    return found


@given(logs(), st.randoms(use_true_random=False), st.sets(st.integers(1, 30)))
def test_walks_sharing_their_chains_find_what_each_walk_alone_finds(
    log: list[Recorded], order: object, restoring: set[int]
) -> None:
    handles = Handles([log])
    shared = Paths(handles.touching, anyone, readers)
    starts = walks(log)
    order.shuffle(starts)  # type: ignore[attr-defined]
    for start, stand_in in starts:
        # Each walk is restored by other epochs: a step's restoring is the walk's own question.
        def restores(r: Recorded, start: int = start) -> bool:
            return (r.epoch + start) % 31 in restoring

        alone = follow(handles.touching, start, stand_in, restores, anyone, readers)
        assert shared.follow(start, stand_in, restores) == alone


def test_a_chain_is_read_once_for_a_walk_from_each_of_its_replacements() -> None:
    chain = [
        Recorded(
            epoch=n,
            event=Assert(
                id=f"e{n}", at=T0, author="A", item=ItemDraft(id=f"i{n}", text="B", key="k")
            ),
        )
        for n in range(1, 301)
    ]
    handles, read = Handles([chain]), [0]

    def touching(stand_in: StandIn, epoch: int) -> Iterable[Recorded]:
        for recorded in handles.touching(stand_in, epoch):
            read[0] += 1
            yield recorded

    paths = Paths(touching, anyone, readers)
    for start, stand_in in reversed(walks(chain)[1:]):  # the shortest first: then joined
        assert paths.follow(start, stand_in, lambda r: False) == (None, ("i300", "k", EVERYONE))

    assert read[0] <= len(chain) + 1  # each replacement once: each walk alone reads 45,150


@given(logs(), st.integers(-2, 40), st.booleans(), st.sets(st.integers(1, 30)))
def test_a_walk_asks_at_most_the_steps_it_is_given_unless_its_item_began_with_some(
    log: list[Recorded], budget: int, begun: bool, restoring: set[int]
) -> None:
    handles = Handles([log])
    for start, stand_in in walks(log):
        asked: list[int] = []

        def restores(r: Recorded, asked: list[int] = asked) -> bool:
            asked.append(r.epoch)
            return r.epoch in restoring

        alone = follow(handles.touching, start, stand_in, restores, anyone, readers)
        needed, asked[:] = len(asked), []
        steps = Steps(budget)
        if begun:
            steps.begin()  # the walks of an item begun with steps left are finished
        try:
            found = Paths(handles.touching, anyone, readers).follow(
                start, stand_in, restores, steps
            )
        except Unfollowed:
            assert needed > max(budget, 0)  # spent before the walk ended: restored, unknown
            assert not (begun and budget > 0)
            assert len(asked) == max(budget, 0)
            assert steps.spent
        else:
            assert found == alone
            assert needed <= max(budget, 0) or (begun and budget > 0)
            assert steps.left == budget - needed


def _assert(epoch: int, unconfirmed: bool = False) -> Recorded:
    draft = ItemDraft(id=f"i{epoch}", text="Booked.", key="k", unconfirmed=unconfirmed)
    return Recorded(epoch=epoch, event=Assert(id=f"e{epoch}", at=T0, author="A", item=draft))


def _walked(log: list[Recorded]) -> tuple[int | None, StandIn | None]:
    return follow(
        Handles([log]).touching, 1, ("i1", "k", EVERYONE), lambda r: False, anyone, readers
    )


def test_hearsay_of_the_key_stands_in_for_nothing() -> None:
    """A mutation review: nothing told a walk that hearsay replaces no stand-in."""
    assert _walked([_assert(1), _assert(2, unconfirmed=True)]) == (None, ("i1", "k", EVERYONE))
    assert _walked([_assert(1), _assert(2)]) == (None, ("i2", "k", EVERYONE))


def test_a_walk_ends_with_no_stand_in_where_the_last_was_revoked() -> None:
    """Nothing stands in for the statement then: a later item of the key restores nothing
    through it (a mutation review: the revoked stand-in was still handed back)."""
    revoked = Recorded(epoch=3, event=Revoke(id="e3", at=T0, author="A", target="i2", why="-"))

    assert _walked([_assert(1), _assert(2), revoked]) == (None, None)


def test_an_item_of_the_key_by_an_author_who_may_not_read_the_stand_in_replaces_nothing() -> None:
    """A key cannot reach across principals: the neighbours' booking of key k does not
    replace the family's stand-in (a mutation review: nothing told a walk)."""
    theirs = ItemDraft(id="i2", text="Booked.", key="k")
    log = [_assert(1), Recorded(epoch=2, event=Assert(id="e2", at=T0, author="B", item=theirs))]

    def family(author: str, scope: Scope) -> bool:
        return author != "B"

    walked = follow(
        Handles([log]).touching, 1, ("i1", "k", EVERYONE), lambda r: False, family, readers
    )

    assert walked == (None, ("i1", "k", EVERYONE))
