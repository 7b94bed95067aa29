"""What Δ restores, grown from a shorter Δ's (`Restorations.of`), is what reading it whole
finds; a grown one never changes the one it was grown from."""

from hypothesis import given
from hypothesis import strategies as st

from builders import T0
from readmit.admission.invalidation.restored import Restorations
from readmit.events import Assert, ItemDraft, Recorded, Revoke
from readmit.model import Agent

TEXTS = ["Sunrise Hotel is booked.", "Pickup at 8:00.", "Room Atlas."]
AGENTS = {
    "A2": Agent(id="A2", principal="family", role="booking"),
    "X1": Agent(id="X1", principal="agency", role="booking"),
}


@st.composite
def deltas(draw: st.DrawFn) -> tuple[Recorded, ...]:
    events: list[Recorded] = []
    for epoch in range(1, draw(st.integers(1, 12)) + 1):
        author = draw(st.sampled_from(["A2", "X1", "Z9"]))  # Z9: no agent known
        if draw(st.booleans()):
            draft = ItemDraft(id=f"i{epoch}", text=draw(st.sampled_from(TEXTS)))
            event: Assert | Revoke = Assert(id=f"e{epoch}", at=T0, author=author, item=draft)
        else:
            target = f"i{draw(st.integers(1, epoch))}"
            event = Revoke(id=f"e{epoch}", at=T0, author=author, target=target, why="gone")
        events.append(Recorded(epoch=epoch, event=event))
    return tuple(events)


def taken_in(r: Restorations) -> tuple[object, ...]:
    return r.stated, r.withdrawn, r.read


@given(deltas(), st.lists(st.integers(0, 12), max_size=3))
def test_a_grown_restorations_is_the_whole_ones(
    delta: tuple[Recorded, ...], cuts: list[int]
) -> None:
    earlier = []
    for cut in sorted(cuts):
        shorter = delta[: min(cut, len(delta))]
        made = Restorations.of(shorter, AGENTS)
        earlier.append((shorter, taken_in(made), repr(taken_in(made))))
        made.add(
            [Recorded(epoch=99, event=Revoke(id="x", at=T0, author="A2", target="i1", why="-"))]
        )
    grown = Restorations.of(delta, AGENTS)
    whole = Restorations(AGENTS)
    whole.add(delta)

    assert taken_in(grown) == taken_in(whole)
    for shorter, _, was in earlier:  # what each earlier one took in is as it was
        assert repr(taken_in(Restorations.of(shorter, AGENTS))) == was


@given(deltas())
def test_a_restorations_read_with_other_principals_is_not_grown_from_it(
    delta: tuple[Recorded, ...],
) -> None:
    Restorations.of(delta[:-1], AGENTS)
    moved = {**AGENTS, "A2": Agent(id="A2", principal="agency", role="booking")}
    whole = Restorations(moved)
    whole.add(delta)

    assert taken_in(Restorations.of(delta, moved)) == taken_in(whole)
