"""Many verdicts resting on one key's history: what restores them is read once, not once a verdict.

Two shapes a scaling probe found quadratic (each above a second a return, and a quarter of
a second an append, at a few thousand events): verdicts resting on different events along
one chain of narrowed replacements, each walking the chain to its end when kept and read
again at every append on the key; and one keyed event replacing many items, each a premise
of its own verdict, all of them parsed again for every verdict. Counted here, not timed.
"""

import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from readmit.admission import admit
from readmit.admission.decision import Decision
from readmit.admission.invalidation import restored
from readmit.admission.invalidation.implicit import SPENT, UNFOLLOWED
from readmit.cli.render import render_decision
from readmit.decide import decide
from readmit.events import Assert, Event, ItemDraft, ReturnRequest, Revoke
from readmit.model import Agent, Item, Scope, Validity
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.signing import HmacSha256Signer
from readmit.store import restoring, stand_ins
from readmit.store.sqlite import SQLiteConnection, SQLiteStore
from readmit.wire import codec

T0 = datetime(2026, 1, 1, tzinfo=UTC)
END = T0 + timedelta(days=300)
SIGNER = HmacSha256Signer(b"verdicts-at-scale-key-0123456789")


class Counted:
    """Counts the calls of one module attribute while it is patched."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> None:
        self.calls = 0
        inner: Callable[..., Any] = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return inner(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the stored item bodies decoded, wherever in the store they are."""
    count, inner = [0], codec.item_from_json

    def counted(*args: Any, **kwargs: Any) -> Item:
        count[0] += 1
        return inner(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("readmit.") and getattr(module, "item_from_json", None) is inner:
            monkeypatch.setattr(module, "item_from_json", counted)
    return count


def clock() -> Iterator[datetime]:
    return (T0 + timedelta(seconds=i) for i in range(10**6))


def booking(n: int, at: datetime, item: str | None = None, **extra: Any) -> Assert:
    """The n-th booking of room R0X, each confirmed for a shorter time than the one before."""
    draft = ItemDraft(
        id=item or f"n{n}",
        text=f"The booking of room R0X is confirmed under code Zq{n}k.",
        key="room0",
        validity=Validity(valid_to=END - timedelta(minutes=n)),
        **extra,
    )
    return Assert(id=f"b{n}", at=at, author="T2", item=draft)


def chain(links: int, at: Iterator[datetime]) -> list[Assert]:
    """A booking replaced ``links`` times, with a pickup naming each link but the last."""
    events: list[Assert] = []
    for n in range(links + 1):
        events.append(booking(n, next(at)))
        if n < links:  # a pickup naming the link, made stale by the next one
            pickup = ItemDraft(id=f"q{n}", text=f"Pickup for booking code Zq{n}k.")
            events.append(Assert(id=f"p{n}", at=next(at), author="T2", item=pickup))
    return events


def returns(store: SQLiteStore, at: Iterator[datetime]) -> int:
    """A1 returns (and departs again) until nothing more is found stale; the verdicts kept."""
    kept = 0
    for n in range(50):
        request = ReturnRequest(id=f"ret{n}", at=next(at), agent="A1", task="t", purpose="p")
        made = decide(
            store, "w", request, policy=Policy(), verifier=make_verifier("builtin"), signer=SIGNER
        )
        if not made.decision.judgment.confirmed:
            return kept
        kept += len(made.decision.judgment.confirmed)
        store.depart("w", "A1", next(at))
    raise AssertionError("the returns kept finding more")


def workspace() -> SQLiteStore:
    store = SQLiteStore(":memory:")
    store.create_workspace("w", [Agent(id=a, principal="org", role="ops") for a in ("A1", "T2")])
    return store


def test_verdicts_along_one_chain_walk_each_replacement_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    links, at = 150, clock()
    store = workspace()
    store.append("w", chain(links, at))
    store.depart("w", "A1", next(at))
    steps = Counted(monkeypatch, stand_ins, "may_replace")

    assert returns(store, at) == links  # each pickup on the event after its own link
    # Each verdict walked from its evidence to the chain's end: 11,175 steps before.
    assert steps.calls <= 2 * links

    sent: list[str] = []
    sqlite = cast(SQLiteConnection, store.conn).db
    sqlite.set_trace_callback(sent.append)
    store.append("w", [booking(links + 1, next(at))])  # moves every verdict's stand-in
    sqlite.set_trace_callback(None)
    moved = store.conn.execute(
        "SELECT count(*) FROM invalidations WHERE restore_in_place = 'n151'"
    ).fetchone()
    assert moved[0] == links
    # What each verdict's evidence replaced is found by its epoch: found by the key, each
    # of the 150 read every item the key ever held.
    replaced = [q for q in sent if "FROM withdrawn w JOIN items i" in q]
    assert len(replaced) == links
    plan = str(sqlite.execute("EXPLAIN QUERY PLAN " + replaced[0]).fetchall())
    assert "withdrawn_by_epoch" in plan
    assert "items_by_key" not in plan


def test_one_event_replacing_many_items_is_read_once_for_all_their_verdicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held, at = 120, clock()
    store = workspace()
    events: list[Assert] = []
    for n in range(held):  # hearsay replaces nothing: every one holds the key at once
        events.append(booking(1000 + n, next(at), f"h{n}", unconfirmed=True))
        pickup = ItemDraft(id=f"q{n}", text=f"Pickup for booking code Zq{1000 + n}k.")
        events.append(Assert(id=f"p{n}", at=next(at), author="T2", item=pickup))
    store.append("w", events)
    store.depart("w", "A1", next(at))
    store.append("w", [booking(0, next(at))])  # confirmed: it replaces every one of them
    parsed = Counted(monkeypatch, restoring, "decoded_item")

    assert returns(store, at) == held
    assert parsed.calls <= 4 * held  # each of the replaced parsed once a return: 29,160 before

    parsed.calls = 0
    store.append("w", [booking(1, next(at))])  # moves the verdicts' stand-in, n0
    assert parsed.calls <= 4 * held  # 14,520 before


def test_withdrawals_asked_for_by_id_are_found_by_id() -> None:
    """m027's index of withdrawals by epoch serves only what a keyed event replaced.

    A review's finding: with it, SQLite read every withdrawal up to an epoch to find a few
    of them by id (`readmit.store.history`), 0.03 → 14.5 ms a call at 200k withdrawals.
    """
    at, store = clock(), workspace()
    store.append("w", chain(5, at))  # judged from before the departure: the log read back
    store.depart("w", "A1", next(at))
    sent: list[str] = []
    sqlite = cast(SQLiteConnection, store.conn).db
    sqlite.set_trace_callback(sent.append)
    returns(store, at)
    store.append("w", [booking(6, next(at))])
    sqlite.set_trace_callback(None)

    asked = [q for q in sent if "FROM withdrawn" in q and q.lstrip().startswith("SELECT")]
    assert any("epoch" in q and " id IN (" in q for q in asked)  # the history's, read
    for query in asked:
        plan = str(sqlite.execute("EXPLAIN QUERY PLAN " + query).fetchall())
        if "withdrawn_by_epoch" in plan:  # what a keyed event replaced, or one with no epoch
            assert "status = 'replaced'" in query, query
            assert " IN (" not in query, query


def test_a_restatement_reads_the_verdicts_items_as_the_store_decoded_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One that restores none of the verdicts resting on its words parses none of their items.

    A probe's shape: a restatement for fewer readers than the pickups have parsed every
    pickup's body again to find it so, 58 ms an append at 10,000 verdicts.
    """
    held, at = 200, clock()
    store = workspace()
    booked = "Room R0X at Atlas Hotel is booked."
    events = [Assert(id="a", at=next(at), author="T2", item=ItemDraft(id="h", text=booked))]
    for n in range(held):
        pickup = ItemDraft(id=f"q{n}", text=f"Pickup {n} for room R0X at Atlas Hotel.")
        events.append(Assert(id=f"p{n}", at=next(at), author="T2", item=pickup))
    store.append("w", events)
    store.depart("w", "A1", next(at))
    store.append("w", [Revoke(id="r", at=next(at), author="T2", target="h", why="cancelled")])
    assert returns(store, at) == held
    made = decodes(monkeypatch)

    fewer = ItemDraft(id="h2", text=booked, roles=frozenset({"booking"}))
    store.append("w", [Assert(id="a2", at=next(at), author="T2", item=fewer)])

    standing = store.conn.execute(
        "SELECT count(*) FROM invalidations WHERE lapsed_epoch IS NULL"
    ).fetchone()
    assert standing[0] == held  # the pickups' readers may not all read it: none lapses
    assert made[0] <= 10  # 201 before


def pickups_on_a_chain(pickups: int, links: int, at: Iterator[datetime]) -> SQLiteStore:
    """A booking with ``pickups`` naming its early links, then replaced ``links`` times
    after A1 departs, each for a shorter time: each pickup's walks follow most of the chain."""
    store = workspace()
    named = [booking(0, next(at))]
    named += [
        Assert(id=f"p{n}", at=next(at), author="T2",
               item=ItemDraft(id=f"q{n}", text=f"Pickup for booking code Zq{n}k."))
        for n in range(1, pickups + 1)
    ]  # fmt: skip
    store.append("w", named)
    store.depart("w", "A1", next(at))
    store.append("w", [booking(n, next(at)) for n in range(1, links + 1)])
    return store


def decided(store: SQLiteStore, policy: Policy, at: Iterator[datetime], n: int = 0) -> Decision:
    """A1's return, decided with the built-in verifier."""
    request = ReturnRequest(id=f"ret{n}", at=next(at), agent="A1", task="t", purpose="p")
    verifier = make_verifier("builtin")
    return decide(store, "w", request, policy=policy, verifier=verifier, signer=SIGNER).decision


def test_walks_along_a_chain_stop_at_the_policy_s_steps_and_withhold_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A return asks about `Policy.walk_steps` whether a replacement restores a premise.

    Each pickup names a booking early in a chain of 3,000 replacements, each for a shorter
    time, so the walks from the observations it is judged against follow most of the chain
    (`readmit.admission.invalidation.narrowed.Steps`). A return judging 128 pickups against
    a chain of 20,000 asked 2.6 million steps (3.0 s). The item begun with steps left
    finishes its walks, though they alone need more than the policy allows (cut short, it
    was withheld at every return: a review's finding); what the steps cannot follow after
    it is withheld as ``unscreened``, never admitted. Each return with nothing new judges
    one more, its verdict kept.
    """
    at = clock()
    store = pickups_on_a_chain(3, 3000, at)
    asked = Counted(monkeypatch, restored, "holds_in_place")
    policy = Policy(max_items=8, max_judgments=4)  # 4,096 steps: not even a pickup's walks
    found: list[tuple[int, int]] = []
    for n in range(4):
        asked.calls = 0
        decision = decided(store, policy, at, n)
        assert decision.outcome == "issued"
        assert asked.calls <= policy.walk_steps + 2 * 3000  # and the walks of the item begun
        assert not [item.id for item in decision.items if item.id.startswith("q")]
        withheld = [e for e in decision.decided if e.reason is Reason.UNSCREENED]
        assert all(e.detail == UNFOLLOWED for e in withheld)
        assert decision.judgment.unscreened == len(withheld)
        found.append((len(decision.judgment.confirmed), len(withheld)))
        store.depart("w", "A1", next(at))

    assert found == [(1, 2), (1, 1), (1, 0), (0, 0)]


def test_a_return_whose_steps_ran_out_says_so_in_its_record() -> None:
    """The record counts the steps taken against the policy's, as it counts calls.

    Before, a return that withheld items as ``unscreened`` with most of its calls unmade
    said nothing of the steps that had run out.
    """
    at = clock()
    store = pickups_on_a_chain(3, 3000, at)
    request = ReturnRequest(id="ret", at=next(at), agent="A1", task="t", purpose="p")
    policy, verifier = Policy(max_items=8, max_judgments=4), make_verifier("builtin")
    made = decide(store, "w", request, policy=policy, verifier=verifier, signer=SIGNER)
    judgment, logged = made.decision.judgment, store.decision(made.id, "w")["judgment"]

    assert judgment.unscreened == 2
    assert judgment.calls < judgment.max_calls  # the steps ran out, not the calls
    assert logged["budget"] == {"calls": 4, "tokens": None, "seconds": None, "steps": 4096}
    assert logged["steps"] == judgment.steps > 4096  # the item begun finished its walks
    line = f", {judgment.steps:,} of 4,096 walk steps; 1 new and 0 standing"
    assert any(line in x for x in render_decision(store.decision(made.id, "w")))


def test_what_is_withheld_names_the_calls_when_they_ran_out_too() -> None:
    """The item begun spends the steps and the one call: the others say the calls ran out."""
    at = clock()
    store = pickups_on_a_chain(3, 3000, at)
    decision = decided(store, Policy(max_items=8, max_judgments=1), at)

    assert len(decision.judgment.confirmed) == 1
    withheld = [e for e in decision.decided if e.reason is Reason.UNSCREENED]
    assert len(withheld) == 2
    assert all(e.detail == SPENT for e in withheld)


def test_once_the_steps_are_spent_the_selector_stops_as_past_any_budget() -> None:
    """Spent steps are a spent budget: past `Policy.unscreened_limit` items the selector stops.

    Otherwise it went on down its order ranking what it could no longer judge, every
    pickup of the store withheld one by one.
    """
    at = clock()
    store = pickups_on_a_chain(40, 2000, at)
    policy = Policy(max_items=2, max_judgments=4)
    decision = decided(store, policy, at)

    assert len(decision.judgment.confirmed) == 2
    # The second confirmed spent the steps: it and 7 withheld after it make the limit, 8.
    assert decision.judgment.unscreened == policy.unscreened_limit - 1 == 7
    assert len([item for item in decision.not_selected if item.startswith("q")]) == 31


def restated(at: Iterator[datetime], roles: Callable[[int], str]) -> SQLiteStore:
    """16 bookings in the same words and 40 pickups, each read by a role of its own; after
    A1 departs, the bookings revoked and their words restated 600 times, for ``roles(n)``."""
    store = workspace()
    words = "Room R0X at Atlas Hotel is booked."
    held = [Assert(id=f"a{n}", at=next(at), author="T2", item=ItemDraft(id=f"h{n}", text=words))
            for n in range(16)]  # fmt: skip
    held += [
        Assert(id=f"p{n}", at=next(at), author="T2",
               item=ItemDraft(id=f"q{n}", text=f"Pickup {n} for room R0X at Atlas Hotel.",
                              roles=frozenset({"ops", f"y{n}"})))
        for n in range(40)
    ]  # fmt: skip
    store.append("w", held)
    store.depart("w", "A1", next(at))
    later: list[Event] = [
        Revoke(id=f"r{n}", at=next(at), author="T2", target=f"h{n}", why="cancelled")
        for n in range(16)
    ]
    later += [
        Assert(id=f"s{n}", at=next(at), author="T2",
               item=ItemDraft(id=f"t{n}", text=words, roles=frozenset({roles(n)})))
        for n in range(600)
    ]  # fmt: skip
    store.append("w", later)
    return store


def test_a_text_restated_for_other_readers_is_read_once_for_the_readers_of_each_item(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whether a withdrawn text was stated again for every reader of an item is found once.

    A probe's shape: 16 bookings in the same words revoked, then their words restated
    thousands of times, each for other readers. Each (observation, item) pair read every
    statement again: 1.9 s a return at 5,000, 384,000 readers' checks here.
    """
    at = clock()
    store = restated(at, lambda n: f"r{n}")
    checks = Counted(monkeypatch, Scope, "read_within")
    request = ReturnRequest(id="ret", at=next(at), agent="A1", task="t", purpose="p")
    policy = Policy(max_items=32, max_chars=8192)
    made = admit(
        store.return_context("w", request),
        policy=policy,
        verifier=make_verifier("builtin"),
        signer=SIGNER,
    )

    assert len(made.judgment.confirmed) == 40  # none of the statements restores them
    assert checks.calls <= 41 * 600  # each pickup's readers against each statement, once


def test_keeping_verdicts_asks_who_reads_a_restatement_once_for_its_author_and_readers() -> None:
    """The same words restated 600 times for the same readers: the kept verdicts ask the
    agents table about them once, not once a statement a verdict (24,004 queries before)."""
    at = clock()
    store = restated(at, lambda n: "r")
    sent: list[str] = []
    sqlite = cast(SQLiteConnection, store.conn).db
    sqlite.set_trace_callback(sent.append)
    decision = decided(store, Policy(max_items=32, max_chars=8192), at)
    sqlite.set_trace_callback(None)

    assert len(decision.judgment.confirmed) == 40
    assert len([q for q in sent if "FROM agents" in q]) <= 10 * 40
