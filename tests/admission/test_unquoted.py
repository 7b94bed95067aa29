"""Δ's withdrawals as a return quotes them: what D_a left out, keys with several holders."""

from dataclasses import replace

from builders import T0, context, item, revoke, supersede
from readmit.admission.invalidation.implicit import Verdict
from readmit.admission.invalidation.observations import observations
from readmit.admission.invalidation.screening import Screener
from readmit.admission.invalidation.unquoted import kept, unquoted
from readmit.events import Assert, ItemDraft, Recorded
from readmit.model import Agent, Scope
from readmit.policy import Policy
from readmit.testing import FunctionVerifier

HELD = item("x", "The standup room is Room Atlas.", key="room", epoch=1)
TARGET = item("t", "The standup is at 9:00.", epoch=1)
NEW = item("t2", "The standup room is Room Borealis.", key="room", epoch=3)
GONE = item("gone", "Dinner at Casa Rio.", epoch=1)


def keyed(id: str, epoch: int, author: str = "A2", unconfirmed: bool = False) -> Recorded:
    draft = ItemDraft(id=id, text=f"The standup room is {id}.", key="room", unconfirmed=unconfirmed)
    return Recorded(epoch=epoch, event=Assert(id=f"e-{id}", at=T0, author=author, item=draft))


def withdrawn(ctx: object) -> set[tuple[str, str | None, str | None]]:
    return {(o.event_id, o.withdrawn_id, o.withdrawn_text) for o in observations(ctx, False)}  # type: ignore[arg-type]


def test_a_revocation_of_an_item_c_lacks_is_unquoted() -> None:
    ctx = context((TARGET,), delta=(revoke("gone", 2), revoke("t", 3)))

    assert unquoted(ctx) == (2,)


def test_a_keyed_supersession_replaces_what_held_its_key_too() -> None:
    held = context((HELD, TARGET), delta=(supersede("t", NEW),))
    lacked = context((TARGET,), delta=(supersede("t", NEW),))

    assert unquoted(held) == ()
    assert unquoted(lacked) == (3,)  # nothing says whether a key was held: taken to be
    assert withdrawn(held) == {("ss-t", "t", TARGET.text), ("ss-t", "x", HELD.text)}


def test_what_d_a_left_out_is_quoted_and_not_counted_unquoted() -> None:
    delta = (revoke("gone", 2), supersede("t", NEW))
    ctx = replace(context((TARGET,), delta=delta), left_out=(HELD, GONE))

    assert unquoted(ctx) == ()
    assert withdrawn(ctx) == {
        ("rv-gone", "gone", GONE.text),
        ("ss-t", "t", TARGET.text),
        ("ss-t", "x", HELD.text),
    }


# A key held by several items (a keyed assert replaces only what its author may read).
FAMILY = item("h1", "The standup room is Room Atlas.", key="room", epoch=1)
SHARED = item(
    "h2",
    "The standup room is Room Cedar.",
    key="room",
    epoch=2,
    author="B1",
    scope=Scope(principals=frozenset({"family", "neighbours"})),
)
AGENTS = {
    "A2": Agent(id="A2", principal="family", role="booking"),
    "B1": Agent(id="B1", principal="neighbours", role="booking"),
}


def _holders(event: Recorded) -> set[str | None]:
    ctx = replace(context((FAMILY, SHARED), delta=(event,)), agents=AGENTS)
    return {o.withdrawn_id for o in observations(ctx)}


def test_a_keyed_assert_withdraws_every_holder_its_author_may_read() -> None:
    assert _holders(keyed("Room Borealis", 3)) == {"h1", "h2"}
    assert _holders(keyed("Room Borealis", 3, author="B1")) == {"h2"}


def test_hearsay_replaces_nothing_and_is_news() -> None:
    assert _holders(keyed("Room Borealis", 3, unconfirmed=True)) == {None}


def test_observations_grown_from_a_remembered_value_leave_it_as_it_was() -> None:
    first = context((HELD, TARGET), delta=(revoke("t", 2),))
    made = [(o.event_id, o.withdrawn_id) for o in observations(first, False)]
    grown = context((HELD, TARGET), delta=(*first.delta, keyed("Room Borealis", 3)))
    grown = replace(grown, items=first.items)  # C's very tuple: the memo grows from it

    assert len(observations(grown, False)) > len(made)
    assert [(o.event_id, o.withdrawn_id) for o in observations(first, False)] == made


def test_a_watermark_stops_before_the_first_unquoted_withdrawal_after_its_start() -> None:
    """A mutation review: nothing tested the cut, nor where it falls (one before the
    withdrawal, and only a withdrawal after the screening's start)."""
    screened = {"a": 10, "b": 10, "c": 3, "d": 10}
    starts = {"a": 1, "b": 5, "c": 1, "d": 7}

    assert kept(screened, starts, [2, 5, 7]) == {"a": 1, "b": 6, "c": 1, "d": 10}
    assert kept(screened, starts, []) == screened


def test_a_screening_is_kept_only_up_to_what_this_reader_could_quote() -> None:
    """C lacks ``gone``: its revocation (epoch 2) is unquoted here, so the screening of
    ``t`` through epoch 3 is kept through epoch 1 only, for a reader whose C holds it."""
    ctx = context((TARGET,), delta=(revoke("gone", 2), keyed("Borealis", 3)))
    verifier = FunctionVerifier(lambda pair: Verdict(invalidates=False, confidence=0.9))
    screener = Screener(ctx, ctx.items, verifier, Policy())

    assert screener.admits(TARGET)
    assert screener.screened == {"t": 3}
    assert screener.judgment(0).screened == {"t": 1}
