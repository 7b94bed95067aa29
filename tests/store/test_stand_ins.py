"""A narrowing undone: the booking held again wherever it held lapses what its narrowing made stale.

A booking "confirmed until 18:00" in the place of one with no end withdraws the first for
every use after 18:00, and a pickup resting on it is stale. When a booking "for the whole
stay" replaces the narrowed one, the statement holds again as if it had replaced the first
directly: the pickup comes back, in one return or across several (before, it stayed out for
good, though the same booking filed directly admitted it).
"""

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import store_url
from readmit.admission import admit
from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier
from readmit.clock import parse_time
from readmit.decide import decide
from readmit.events import ReturnRequest
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.replay import apply_steps
from readmit.report import decision_json
from readmit.scenario import load_scenario
from readmit.store import WorkStateStore, open_store
from readmit.store.sql import SqlStore
from readmit.testing import FunctionVerifier
from trip import SIGNER, at, depart, replayed, ret, scenario


def booking(n: int, id: str, until: int | None = None, **extra: Any) -> dict[str, Any]:
    bound = {} if until is None else {"valid_to": at(until)}
    text = extra.pop("text", "The Sunrise Hotel booking is confirmed.")
    item = {"id": id, "text": text, "key": "hotel", **bound, **extra}
    return {"at": at(n), "author": "A2", "op": "assert", "item": item}


def away(n: int) -> list[dict[str, Any]]:
    """A return, and the departure after it."""
    return [ret(n), depart(n)]


BASE = [
    booking(0, "h0", text="Sunrise Hotel is booked."),
    {"at": at(1), "author": "A2", "op": "assert",
     "item": {"id": "p", "text": "Pickup at 8:00 from Sunrise Hotel."}},
    depart(2),
]  # fmt: skip
NARROWED = booking(3, "h1", until=600)


def _withdrawn_booking(pair: Pair) -> Verdict:
    """A booking no longer held makes a pickup from its hotel stale; a replacement does not."""
    gone = pair.later.replacement_text is None and "Sunrise" in (pair.later.withdrawn_text or "")
    return Verdict(invalidates=gone and "Sunrise" in pair.earlier.text, confidence=0.9)


def run(
    store: WorkStateStore, events: list[dict[str, Any]], verifier: Verifier | None = None
) -> list[dict[str, Any]]:
    return replayed(store, events, verifier or FunctionVerifier(_withdrawn_booking, name="booking"))


def pickup(record: dict[str, Any]) -> str:
    found = next((e["reason"] for e in record["excluded"] if e["item"] == "p"), None)
    return found or ("admitted" if "p" in record["items"] else "absent")


WIDE = booking(5, "h2")
WIDER = booking(5, "h2", until=700)  # later than the narrowed one's end, still bounded
SUPERSEDED = {**booking(5, "h2"), "op": "supersede", "target": "h1"}
STALE, BACK = "implicitly_invalidated", "admitted"
_CASES = {
    "for the whole stay": ([NARROWED, WIDE, ret(6)], [BACK]),
    "for the whole stay, a return between": ([NARROWED, *away(4), WIDE, ret(6)], [STALE, BACK]),
    "superseded for the whole stay": ([NARROWED, SUPERSEDED, ret(6)], [BACK]),
    "superseded, a return between": ([NARROWED, *away(4), SUPERSEDED, ret(6)], [STALE, BACK]),
    # Still bounded, though later: the first booking is still not held after 19:40.
    "until later": ([NARROWED, WIDER, ret(6)], [STALE]),
    "until later, a return between": ([NARROWED, *away(4), WIDER, ret(6)], [STALE, "absent"]),
    # The stand-in is followed: what replaced the narrowed one is replaced in its turn.
    "until later, then for good": ([NARROWED, WIDER, booking(7, "h3"), ret(8)], [BACK]),
    "until later, then for good, returns between": (
        [NARROWED, *away(4), WIDER, *away(6), booking(7, "h3"), ret(8)],
        [STALE, "absent", BACK],
    ),
    # Nothing holds the booking any more, or not for every reader, or only as hearsay.
    "revoked": (
        [NARROWED, {"at": at(5), "author": "A2", "op": "revoke", "target": "h1", "why": "x"},
         booking(6, "h2"), ret(7)],
        [STALE],
    ),
    "for the booking role only": ([NARROWED, booking(5, "h2", readers={"roles": ["booking"]}),
                                   ret(6)], [STALE]),
    # Its stand-in replaced twice in one batch, the second time by a supersession with no
    # key (a review's finding: the writer looked the first up before it was stored).
    "until later, then superseded for good with no key, a return between": (
        [NARROWED, *away(4), WIDER,
         {**booking(6, "h3"), "op": "supersede", "target": "h2", "item": {
             "id": "h3", "text": "The Sunrise Hotel booking is confirmed."}}, ret(8)],
        [STALE, BACK],
    ),
    "hearsay, a return between": ([NARROWED, *away(4), booking(5, "h2", unconfirmed=True),
                                   ret(6)], [STALE, "absent"]),

}  # fmt: skip


@pytest.mark.parametrize("case", list(_CASES))
def test_a_narrowing_undone_lets_what_it_made_stale_back(store: WorkStateStore, case: str) -> None:
    events, expected = _CASES[case]

    assert [pickup(r) for r in run(store, [*BASE, *events])] == expected


def test_each_withdrawal_of_one_event_is_restored_by_what_held_its_own_statement(
    store: WorkStateStore,
) -> None:
    """One booking in the place of two in the same words, one ending at 18:50 (for bookers
    only) and one with no end: a booking until 18:50 holds the first in place, not the
    second, whose withdrawal stands (a review's finding: the answer for the first, kept
    by event and words, was taken for the second too)."""
    text = "Sunrise Hotel is booked."
    bookers = {"principals": ["*"], "roles": ["booking"]}
    events = [
        booking(0, "ha", until=650, text=text, readers=bookers),
        {**booking(1, "hz", text=text), "author": "A3"},  # A3 may not read ha: both hold
        *BASE[1:],
        NARROWED,  # replaces both
        booking(5, "h2", until=650),
        ret(6),
    ]

    assert [pickup(r) for r in run(store, events)] == [STALE]


_UNDOING = {
    "for the bookers only": booking(5, "h2", readers={"roles": ["booking"]}),
    "as hearsay in its place": {
        **booking(5, "h2", unconfirmed=True),
        "op": "supersede",
        "target": "h1",
    },
}


@pytest.mark.parametrize("how", list(_UNDOING))
def test_a_booking_some_readers_may_not_read_undoes_no_narrowing_for_them(
    store: WorkStateStore, tmp_path: Path, how: str
) -> None:
    """The bookers' own booking for the whole stay, or hearsay of one in the narrowed
    one's place, does not hold the first booking again for the pickup, which every role of
    the family reads: judged only on the first booking's withdrawal, the pickup stays
    stale (a mutation review: without the readers' test the narrowing was taken as undone
    for all, and only the booking's other withdrawal, which this verifier does not judge,
    kept the pickup out)."""
    first_only = FunctionVerifier(
        lambda pair: Verdict(
            invalidates=pair.later.withdrawn_text == "Sunrise Hotel is booked.",
            confidence=0.9,
        ),
        name="first-booking",
    )
    events = [*BASE, NARROWED, _UNDOING[how], ret(6)]
    everyone = [*BASE, NARROWED, booking(5, "h2"), ret(6)]

    assert [pickup(r) for r in run(store, events, first_only)] == [STALE]
    twin = open_store(f"sqlite:///{tmp_path / 'twin.db'}")
    try:  # booked for everyone, the same verifier lets the pickup back
        assert [pickup(r) for r in run(twin, everyone, first_only)] == [BACK]
    finally:
        twin.close()


FAMILY = {"principals": ["family"]}
TWO_PICKUPS = [
    BASE[0],
    {"at": at(1), "author": "A2", "op": "assert",
     "item": {"id": "p", "text": "Pickup at 8:00 from Sunrise Hotel.", "readers": "*"}},
    {"at": at(1), "author": "A2", "op": "assert",
     "item": {"id": "q", "text": "Pickup at 9:00 from Sunrise Hotel.", "readers": FAMILY}},
    depart(2),
    NARROWED,
]  # fmt: skip


def test_one_booking_lets_back_only_the_pickups_whose_readers_all_read_it(
    store: WorkStateStore,
) -> None:
    """Both pickups' verdicts rest on one narrowing; the family's booking for the whole
    stay holds it again for q (the family's), not for p, which the neighbours read too: p's
    verdict follows the new stand-in (each verdict decided for its own readers)."""
    events = [*TWO_PICKUPS, *away(4), booking(5, "h2", readers=FAMILY), ret(6)]

    first, last = run(store, events)

    assert [_reason(first, "p"), _reason(first, "q")] == [STALE, STALE]
    assert [_reason(last, "p"), _reason(last, "q")] == ["absent", BACK]


def test_a_booking_written_while_a_return_decides_lets_back_only_the_pickups_it_holds_for(
    store: WorkStateStore,
) -> None:
    """The same booking, written after the return read its context and before its verdicts
    are kept: they are kept lapsed for q only (the keeping decides each for its readers)."""
    apply_steps(load_scenario(scenario(TWO_PICKUPS)), store, on_return=None)
    request = ReturnRequest(
        id="r5", at=parse_time(at(5)), agent="A1", task="trip", purpose="itinerary"
    )
    verifier, policy = FunctionVerifier(_withdrawn_booking, name="booking"), Policy(max_items=8)
    ctx = store.return_context("trip", request)
    wide = {**booking(5, "h2", readers=FAMILY), "id": "wide"}
    store.append("trip", [load_scenario(scenario([wide])).steps[0]])  # type: ignore[list-item]
    decided = admit(ctx, policy=policy, verifier=verifier, signer=SIGNER)
    record = decision_json(decided, ctx, policy)
    store.record_decision(
        "trip", "A1", request.at, ctx.epoch, decided.outcome, record, judgment=decided.judgment
    )
    store.depart("trip", "A1", parse_time(at(6)))
    later = replace(request, id="r7", at=parse_time(at(7)))
    again = decide(store, "trip", later, policy=policy, verifier=verifier, signer=SIGNER)

    assert [_reason(record, "p"), _reason(record, "q")] == [STALE, STALE]
    assert [_reason(again.record, "p"), _reason(again.record, "q")] == ["absent", BACK]


def _reason(record: dict[str, Any], item: str) -> str:
    found = next((e["reason"] for e in record["excluded"] if e["item"] == item), None)
    return found or ("admitted" if item in record["items"] else "absent")


def test_the_built_in_verifier_decides_as_if_the_last_booking_replaced_the_first(
    store: WorkStateStore,
) -> None:
    """The reported instance: a pickup admitted where the booking was filed directly."""
    wide = booking(5, "h2", text="The Sunrise Hotel booking is confirmed for the whole stay.")
    builtin = make_verifier("builtin")
    records = run(store, [*BASE, NARROWED, *away(4), wide, ret(6), depart(7), ret(8)], builtin)

    assert [pickup(r) for r in records] == [STALE, BACK, BACK]
    assert records[2]["judgment"]["calls"] == 0


def test_m026_lapses_a_verdict_whose_stand_in_was_replaced_before_it(
    backend: str, tmp_path: Path
) -> None:
    """A verdict stored before m026 kept no stand-in: the migration follows it in the log."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, [*BASE, NARROWED, *away(4), WIDE])
        assert isinstance(store, SqlStore)
        with store.conn.transaction():  # as before m026: the writer lapsed nothing
            store.conn.execute("UPDATE invalidations SET lapsed_epoch = NULL")
            store.conn.execute("DROP INDEX invalidations_by_stand_in")
            store.conn.execute("ALTER TABLE invalidations DROP COLUMN restore_in_place")
            store.conn.execute("DELETE FROM _readmit_migrations WHERE name LIKE ?", ("m026_%",))
        before = store.depart("trip", "A1", parse_time(at(6)))
        store.close()
        again = open_store(url)
        after = again.depart("trip", "A1", parse_time(at(7)))
        again.close()

    assert ("p" in before.item_ids, "p" in after.item_ids) == (False, True)


_TEXTS = ["The Sunrise Hotel booking is confirmed.", "Sunrise Hotel is booked."]
_Step = tuple[str, int | None, int, bool]
"""How the booking changes ("key", "supersede" or "revoke"), until when, in which words,
and whether A1 returns (and departs again) after it."""


@st.composite
def bookings(draw: st.DrawFn) -> list[_Step]:
    """Bookings filed by key, superseded or revoked while A1 is away: none ends before the
    last return, so nothing is left out for having ended."""
    return draw(
        st.lists(
            st.tuples(
                st.sampled_from(["key", "key", "supersede", "revoke"]),
                st.sampled_from([None, 500, 600, 700]),
                st.integers(0, len(_TEXTS) - 1),
                st.booleans(),
            ),
            min_size=1,
            max_size=5,
        )
    )


def _events(steps: list[_Step], middle: bool) -> list[dict[str, Any]]:
    events, holder = list(BASE), "h0"
    for n, (how, until, words, back) in enumerate(steps):
        when, new = 3 + 2 * n, f"b{n}"
        if how == "revoke" and holder:
            events.append({"at": at(when), "author": "A2", "op": "revoke", "target": holder,
                           "why": "x"})  # fmt: skip
            holder = ""
        elif how != "revoke":
            filed = booking(when, new, until=until, text=_TEXTS[words])
            if how == "supersede" and holder:
                filed = {**filed, "op": "supersede", "target": holder}
            events.append(filed)
            holder = new
        if middle and back:
            events += away(when + 1)
    return [*events, ret(3 + 2 * len(steps))]


def _stale(steps: list[_Step]) -> bool:
    """Whether some withdrawal of a booking stands at the last return (the model).

    A booking in the place of one it holds for fewer uses withdraws it, as a revocation
    does; restored by its words stated again for good, or, where something was put in its
    place, by a booking there (followed from one replacement to the next) that holds
    wherever it held.
    """
    Held = tuple[str, int | None]  # a booking's words and end
    holder: Held | None = (_TEXTS[1], None)
    withdrawals: list[tuple[int, Held, bool]] = []  # when, what, whether put in its place
    brought: list[tuple[int, Held, bool]] = []  # each booking filed, and whether it replaced
    for n, (how, until, words, _) in enumerate(steps):
        new = (_TEXTS[words], until)
        if how == "revoke":
            if holder is not None:
                withdrawals.append((n, holder, False))
                holder = None
            continue
        if holder is not None and _narrower(new, holder):
            withdrawals.append((n, holder, True))
        brought.append((n, new, holder is not None))
        holder = new
    return any(not _restored(n, was, placed, brought, steps) for n, was, placed in withdrawals)


def _narrower(new: tuple[str, int | None], old: tuple[str, int | None]) -> bool:
    return new[1] is not None and (old[1] is None or old[1] > new[1])


def _restored(
    n: int,
    was: tuple[str, int | None],
    placed: bool,
    brought: list[tuple[int, tuple[str, int | None], bool]],
    steps: list[_Step],
) -> bool:
    if any(m > n and new == (was[0], None) for m, new, _ in brought):
        return True  # stated again, for good
    if not placed:
        return False
    for m, new, replaced in brought:
        if m <= n:
            continue
        if not replaced:  # after a revocation: news, the stand-in gone
            return False
        if not _narrower(new, was):
            return True
    return False


@settings(max_examples=60, deadline=None)
@given(bookings())
def test_a_booking_is_judged_by_what_holds_it_at_the_return_however_the_returns_fell(
    steps: list[_Step],
) -> None:
    """The last return excludes the pickup exactly when a withdrawal of the booking stands
    (the model, `_stale`), and decides as a return with no middle returns does."""
    stores = [open_store("sqlite:///:memory:") for _ in range(2)]
    try:
        records = run(stores[0], _events(steps, middle=True))
        (alone,) = run(stores[1], _events(steps, middle=False))
    finally:
        for store in stores:
            store.close()

    assert pickup(alone) == (STALE if _stale(steps) else BACK)
    assert sorted(records[-1]["items"]) == sorted(alone["items"])
