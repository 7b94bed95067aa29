"""News that has ended is no evidence: nothing is excluded on it, and a verdict on it lapses.

A pool "closed until 8:20" said nothing of the state at a return at 8:30: the view
leaves it out as ``expired``, and a swim it made stale at 8:06 comes back (before, the
verdict stood until the news was withdrawn, which nothing would do).
"""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import store_url
from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.clock import parse_time
from readmit.store import WorkStateStore, open_store
from readmit.store.sql import SqlStore
from readmit.testing import FunctionVerifier
from trip import assert_item, at, depart, reason, replayed, ret

SWIM = assert_item(0, "s", "Swim at 9 in the pool.", readers="*")
CLOSED = assert_item(5, "n2", "The pool is closed.", readers="*", valid_to=at(20))


def _pool_closed(pair: Pair) -> Verdict:
    """News that the pool is closed makes a swim in it stale."""
    closed = "closed" in (pair.later.replacement_text or "")
    return Verdict(invalidates=closed and "pool" in pair.earlier.text, confidence=0.9)


def run(
    store: WorkStateStore, events: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], FunctionVerifier]:
    verifier = FunctionVerifier(_pool_closed, name="pool")
    return replayed(store, events, verifier), verifier


def test_a_verdict_on_news_lapses_when_the_news_ends(store: WorkStateStore) -> None:
    events = [SWIM, depart(1), CLOSED, ret(6), depart(7), ret(15), depart(16), ret(30)]
    (during, still, after), verifier = run(store, events)

    assert reason(during, "s") == "implicitly_invalidated"
    assert "s" not in still["items"]  # its departure left it out, as found stale
    assert still["judgment"]["calls"] == 0
    assert "s" in after["items"]
    assert reason(after, "n2") == "expired"
    assert all(p.later.event_id != "e2" for batch in verifier.calls[1:] for p in batch)


def test_a_verdict_on_news_lapses_at_the_very_time_the_news_ends(store: WorkStateStore) -> None:
    """At 8:20 the pool's closing until 8:20 says nothing, as the view's gates hold; the
    verdict on it lapses then too (a mutation review: ``>=`` kept it standing there)."""
    (during, at_end), _ = run(store, [SWIM, depart(1), CLOSED, ret(6), depart(7), ret(20)])

    assert reason(during, "s") == "implicitly_invalidated"
    assert "s" in at_end["items"]
    assert at_end["judgment"]["standing"] == 0


def test_news_that_ended_while_the_agent_was_away_excludes_nothing(store: WorkStateStore) -> None:
    (record,), verifier = run(store, [SWIM, depart(1), CLOSED, ret(30)])

    assert "s" in record["items"]
    assert reason(record, "n2") == "expired"
    assert verifier.calls == []  # not shown to the verifier at all


def test_what_rested_on_the_item_comes_back_with_it(store: WorkStateStore) -> None:
    towels = assert_item(0, "t", "Pack towels for the swim.", readers="*", depends_on=["s"])
    events = [SWIM, towels, depart(1), CLOSED, ret(6), depart(7), ret(30)]
    (during, after), _ = run(store, events)

    assert (reason(during, "s"), reason(during, "t")) == (
        "implicitly_invalidated",
        "premise_invalidated",
    )
    assert {"s", "t"} <= set(after["items"])


def test_a_departure_after_the_end_captures_the_item_again(store: WorkStateStore) -> None:
    run(store, [SWIM, depart(1), CLOSED, ret(6)])

    before = store.depart("trip", "A1", parse_time(at(10)))
    after = store.depart("trip", "A3", parse_time(at(25)))

    assert "s" not in before.item_ids
    assert "s" in after.item_ids


def test_news_after_the_end_confirms_a_verdict_that_binds_again(store: WorkStateStore) -> None:
    """The lapsed verdict's row is replaced by the new one, which binds the next return."""
    again = assert_item(40, "n3", "The pool is closed.", readers="*")
    events = [SWIM, depart(1), CLOSED, ret(6), depart(7), ret(30), depart(31), again, ret(41)]
    records, _ = run(store, [*events, depart(42), ret(43)])

    assert [reason(r, "s") for r in records[:3]] == ["implicitly_invalidated", None] * 1 + [
        "implicitly_invalidated"
    ]
    assert "s" in records[1]["items"]
    assert "s" not in records[3]["items"]
    assert records[3]["judgment"]["calls"] == 0


OPEN = assert_item(2, "n1", "The pool is open.", key="pool", readers="*", valid_to=at(10))
_BROUGHT = {
    # Everyone's closure filed again in its words, by key or by supersession: news filed
    # again, shown in the first filing's place (a review's finding: no end was read there).
    "refiled": [
        assert_item(2, "n1", "The pool is closed.", key="pool", readers="*", valid_to=at(10)),
        assert_item(5, "n2", "The pool is closed.", key="pool", readers="*", valid_to=at(20)),
    ],
    "superseded": [
        assert_item(2, "n1", "The pool is closed.", readers="*", valid_to=at(10)),
        {**assert_item(5, "n2", "The pool is closed.", readers="*", valid_to=at(20)),
         "op": "supersede", "target": "n1"},
    ],
    # For the family alone: to everyone's swim, news and the opening's withdrawal.
    "for fewer readers": [
        OPEN,
        assert_item(5, "n2", "The pool is closed.", key="pool", valid_to=at(20),
             readers={"principals": ["family"]}),
    ],
    # The same in the place of an opening for good: shown as the opening's withdrawal (it
    # holds for fewer uses), which stands, and as news, which ends.
    "for fewer readers, for good": [
        {**OPEN, "item": {k: v for k, v in OPEN["item"].items() if k != "valid_to"}},
        assert_item(5, "n2", "The pool is closed.", key="pool", valid_to=at(20),
             readers={"principals": ["family"]}),
    ],
    # In another's place, in other words: once both have ended.
    "in other words": [
        OPEN, assert_item(5, "n2", "The pool is closed.", key="pool", readers="*", valid_to=at(20))
    ],
}  # fmt: skip


@pytest.mark.parametrize("how", list(_BROUGHT))
def test_what_an_event_brought_in_anothers_place_ends_too(store: WorkStateStore, how: str) -> None:
    events = [SWIM, depart(1), *_BROUGHT[how], ret(6), depart(7), ret(30), depart(31), ret(90)]
    records, _ = run(store, events)

    assert reason(records[0], "s") == "implicitly_invalidated"
    assert ["s" in r["items"] for r in records[1:]] == [True, True]


@pytest.mark.parametrize(
    "evidence", [[CLOSED], _BROUGHT["in other words"]], ids=["news", "other words"]
)
def test_m025_keeps_when_the_evidence_of_each_verdict_ends(
    backend: str, tmp_path: Path, evidence: list[dict[str, Any]]
) -> None:
    """A verdict stored before m025 did not say when its evidence ends: the migration reads
    it, for news and for an item in another's place (once both end)."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        run(store, [SWIM, depart(1), *evidence, ret(6)])
        assert isinstance(store, SqlStore)
        with store.conn.transaction():
            store.conn.execute("ALTER TABLE invalidations DROP COLUMN restore_until")
            store.conn.execute("DELETE FROM _readmit_migrations WHERE name LIKE ?", ("m025_%",))
        store.close()
        again = open_store(url)
        assert isinstance(again, SqlStore)
        rows = again.conn.execute("SELECT item, restore_until FROM invalidations").fetchall()
        again.close()

    assert [tuple(r) for r in rows] == [("s", "2026-05-01T08:20:00.000000+00:00")]


@st.composite
def bounded_histories(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[int]]:
    """Swims, then closures (and openings) filed while A1 is away, each with or without
    an end, some by a key (so filed again); A1 returns several times, and departs after
    each return but the last."""
    events = [
        assert_item(
            0, f"s{n}", f"Swim at {9 + n} in the pool.", readers=draw(st.sampled_from(_READERS))
        )
        for n in range(draw(st.integers(1, 3)))
    ]
    events.append(depart(1))
    returns = sorted(draw(st.lists(st.integers(3, 40), min_size=1, max_size=3, unique=True)))
    for k in range(draw(st.integers(1, 3))):
        said = draw(st.sampled_from(["The pool is closed.", "The pool is open."]))
        end = draw(st.sampled_from([None, 4, 12, 25, 60]))
        filed = draw(st.integers(2, max(2, min(end or 60, returns[-1]) - 1)))
        bounded = {} if end is None else {"valid_to": at(end)}
        if draw(st.booleans()):  # filed again by its key, in its words or others
            bounded["key"] = "pool"
        events.append(
            {**assert_item(filed, f"n{k}", said, readers="*", **bounded), "id": f"e_n{k}"}
        )
    for n, when in enumerate(returns):
        events.append(ret(when))
        if n < len(returns) - 1:
            events.append(depart(when))
    events.sort(key=lambda e: (e["at"], e["op"] in ("return", "depart")))
    return events, returns


_READERS: list[Any] = ["*", {"principals": ["family"]}]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bounded_histories())
def test_no_return_excludes_on_news_that_ended_and_middle_returns_change_nothing(
    history: tuple[list[dict[str, Any]], list[int]],
) -> None:
    """Whatever the returns in between: nothing is excluded on news ended by the return,
    and the last return decides as a return with no middle ones does."""
    events, returns = history
    ends = {e["id"]: e["item"].get("valid_to") for e in events if e.get("id", "").startswith("e_n")}
    alone = [
        e
        for e in events
        if e["op"] not in ("return", "depart") or e["at"] in (at(1), at(returns[-1]))
    ]
    stores = [open_store("sqlite:///:memory:") for _ in range(2)]
    try:
        records, _ = run(stores[0], events)
        (last_alone,), _ = run(stores[1], alone)
    finally:
        for store in stores:
            store.close()

    for record in records:
        for excluded in record["excluded"]:
            if excluded["reason"] == "implicitly_invalidated":
                end = ends.get(excluded["evidence"][0])
                assert end is None or end > record["at"], (record["at"], excluded)
    assert sorted(records[-1]["items"]) == sorted(last_alone["items"])
