"""A verdict on the withdrawal of a long text stands, and lapses when it is stated again,
on every backend: PostgreSQL's B-tree index refused rows over about 2.7 KB, and a verdict
resting on such a text failed every return that stored it with a store error (a review).
"""

from pathlib import Path

from conftest import before_m033, store_url
from readmit.clock import parse_time
from readmit.decide import decide
from readmit.events import ReturnRequest
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.scenario import load_scenario
from readmit.store import SqlStore, WorkStateStore, open_store
from trip import SIGNER, assert_item, at, depart, reason, replayed, ret, scenario

LONG = "Sunrise Hotel is booked. " + " ".join(f"note{n:05}" for n in range(1_500))
"""About 15,000 characters: under the service's limit on a text (16,384)."""

HISTORY = [
    assert_item(0, "h0", LONG),
    assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel."),
    depart(3),
    {"at": at(5), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
]


def test_a_verdict_on_a_long_texts_withdrawal_stands_and_lapses_when_it_is_stated_again(
    store: WorkStateStore,
) -> None:
    first, again, restored = replayed(
        store,
        [
            *HISTORY,
            ret(6),
            depart(7),
            ret(8),
            assert_item(9, "h1", LONG),
            depart(10),
            ret(11),
        ],
        make_verifier("builtin"),
    )

    assert reason(first, "p0") == "implicitly_invalidated"
    assert first["judgment"]["confirmed"] == 1
    assert "p0" not in again["items"]  # the verdict binds, with nothing judged
    assert "p0" not in again["selected"]
    assert again["judgment"]["calls"] == 0
    assert reason(restored, "p0") is None  # the same text stated again lapsed it
    assert "p0" in restored["selected"]


def test_the_upgrade_gives_each_verdict_its_texts_digest(backend: str, tmp_path: Path) -> None:
    """A verdict kept before m033 is found by its text's digest once upgraded."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        history = [assert_item(0, "h0", "Sunrise Hotel is booked."), *HISTORY[1:], ret(6)]
        replayed(store, history, make_verifier("builtin"))
        assert isinstance(store, SqlStore)
        before_m033(store)
        store.close()

        upgraded = open_store(url)
        assert isinstance(upgraded, SqlStore)
        (digests,) = upgraded.conn.execute(
            "SELECT COUNT(*) FROM invalidations WHERE restore_digest IS NOT NULL"
        ).fetchone()
        restated = {**assert_item(9, "h1", "Sunrise Hotel is booked."), "id": "again"}
        upgraded.append("trip", [load_scenario(scenario([restated])).steps[0]])  # type: ignore[list-item]
        upgraded.depart("trip", "A1", parse_time(at(10)))
        request = ReturnRequest(
            id="r11", at=parse_time(at(11)), agent="A1", task="trip", purpose="itinerary"
        )
        verifier, policy = make_verifier("builtin"), Policy(max_items=8)
        restored = decide(
            upgraded, "trip", request, policy=policy, verifier=verifier, signer=SIGNER
        ).record
        upgraded.close()

    assert digests == 1
    assert "p0" in restored["selected"]
