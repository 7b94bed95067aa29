"""A reader's screening binds only returns dated at or after it (`readmit.store.verdicts`).

A screening dated after news ended passed over the news (no evidence by then): a return
dated while the news was in force must still judge it. Returns are dated by their caller
(the library) or by each server's clock (several servers over one database, a
`readmit judge-ahead` run from another machine), so one dated earlier can follow.
"""

from pathlib import Path
from typing import Any

import pytest

from conftest import store_url
from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.ahead import judge_ahead
from readmit.clock import parse_time
from readmit.decide import decide
from readmit.errors import StoreError
from readmit.events import ReturnRequest
from readmit.policy import Policy
from readmit.replay import apply_steps
from readmit.scenario import load_scenario
from readmit.store import WorkStateStore, open_store
from readmit.store.connection import Conflict
from readmit.store.sql import SqlStore
from readmit.testing import FunctionVerifier
from trip import SIGNER, assert_item, at, depart, reason, ret, scenario


def _closure(pair: Pair) -> Verdict:
    """News that the Sunrise Hotel is closed makes a plan at the Sunrise Hotel stale."""
    hit = "closed" in pair.later.text and "Sunrise" in pair.earlier.text
    return Verdict(invalidates=hit, confidence=0.9, reason="the hotel is closed")


_HISTORY = [
    assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
    depart(2),
    depart(2, "A3"),
    # In force from 8:10 to 8:30 only.
    assert_item(10, "n1", "Sunrise Hotel is closed.", valid_to=at(30)),
]


def _steps(store: WorkStateStore, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of ``events``' returns, each decided as it comes."""
    records: list[dict[str, Any]] = []
    apply_steps(
        load_scenario(scenario(events)), store, lambda r: records.append(_decided(store, r))
    )
    return records


def _decided(store: WorkStateStore, request: ReturnRequest) -> dict[str, Any]:
    verifier = FunctionVerifier(_closure, name="closure")
    policy = Policy(max_items=8)
    return decide(store, "trip", request, policy=policy, verifier=verifier, signer=SIGNER).record


def _earlier(n: int, agent: str = "A1") -> ReturnRequest:
    """``agent``'s return at minute ``n``, dated before what the store has decided already."""
    (request,) = load_scenario(scenario([ret(n, agent)])).steps
    assert isinstance(request, ReturnRequest)
    return request


def test_a_return_dated_while_news_held_is_not_spared_by_a_screening_dated_after_it_ended(
    store: WorkStateStore,
) -> None:
    """A3, read as A1 is, returns at 8:31: the closure has ended, so nothing is judged
    against it and the pickup is screened through it. A1's return dated 8:12, decided
    after, must judge the pickup against the closure, in force then: stale."""
    (by_a3,) = _steps(store, [*_HISTORY, ret(31, "A3")])
    by_a1 = _decided(store, _earlier(12))

    assert "p0" in by_a3["items"]
    assert reason(by_a1, "p0") == "implicitly_invalidated"
    assert "p0" not in by_a1["items"]


def test_a_judge_ahead_dated_after_news_ended_does_not_spare_an_earlier_return(
    store: WorkStateStore,
) -> None:
    """Judging ahead for A1 at 8:31 screens the pickup past the ended closure; A1's return
    dated 8:12 still judges it against the closure."""
    _steps(store, _HISTORY)
    judge_ahead(
        store, "trip", "A1", task="trip", purpose="itinerary", policy=Policy(max_items=8),
        verifier=FunctionVerifier(_closure, name="closure"), signer=SIGNER, at=parse_time(at(31)),
    )  # fmt: skip

    assert reason(_decided(store, _earlier(12)), "p0") == "implicitly_invalidated"


def test_a_screening_binds_a_return_dated_after_it(store: WorkStateStore) -> None:
    """A1 returns at 8:12 and judges the pickup against the note on the lobby (not stale).
    A3 returns at 8:40 and is bound by A1's screening: nothing is judged again."""
    events = [
        assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        depart(2),
        depart(2, "A3"),
        assert_item(10, "n1", "Sunrise Hotel repainted its lobby."),
        ret(12),
        ret(40, "A3"),
    ]
    by_a1, by_a3 = _steps(store, events)

    assert "p0" in by_a1["items"]
    assert "p0" in by_a3["items"]
    assert by_a1["judgment"]["calls"] == 1
    assert by_a3["judgment"]["calls"] == 0


_OLD_UPSERT = (
    "INSERT INTO screenings (workspace, principal, role, verifier, item, through) "
    "VALUES ('trip', 'family', 'itinerary', ?, 'p0', 99) "
    "ON CONFLICT (workspace, principal, role, verifier, item) DO UPDATE SET through = CASE "
    "WHEN excluded.through > screenings.through THEN excluded.through "
    "ELSE screenings.through END"
)
"""How a readmit from before m032 keeps a screening: undated."""


def test_a_readmit_from_before_dates_still_running_cannot_keep_its_screenings(
    store: WorkStateStore,
) -> None:
    """An older process that opened the store before the upgrade raised a dated row's
    reach and left its date: a screening past ended news then bound returns dated before
    it (a review). Its screenings are refused now, a new one's and one raising a row's: since
    m034 for naming its reader by principal and role (before, by m032's check of a date)."""
    _steps(store, [*_HISTORY, ret(12)])
    assert isinstance(store, SqlStore)
    (verifier,) = store.conn.execute("SELECT DISTINCT verifier FROM screenings").fetchone()

    for item in ("n1", "x0"):  # a row a newer readmit kept, and a new one
        with (
            pytest.raises((Conflict, StoreError), match=r"(?i)principal"),
            store.conn.transaction(),
        ):
            store.conn.execute(_OLD_UPSERT.replace("'p0'", f"'{item}'"), (verifier,))

    kept = store.conn.execute("SELECT item, through, at FROM screenings ORDER BY item").fetchall()
    assert kept == [("n1", 2, "2026-05-01T08:12:00.000000+00:00")]


def test_the_upgrade_drops_the_undated_screenings(backend: str, tmp_path: Path) -> None:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        _steps(store, [*_HISTORY, ret(12)])
        assert isinstance(store, SqlStore)
        with store.conn.transaction():  # as a store before m032 holds it
            store.conn.execute("ALTER TABLE screenings DROP COLUMN at")
            store.conn.execute(
                "DELETE FROM _readmit_migrations WHERE name = ?", ("m032_screenings_dated",)
            )
        store.close()

        upgraded = open_store(url)
        assert isinstance(upgraded, SqlStore)
        (left,) = upgraded.conn.execute("SELECT COUNT(*) FROM screenings").fetchone()
        by_a3 = _decided(upgraded, _earlier(20, "A3"))
        upgraded.close()

    assert left == 0
    assert reason(by_a3, "p0") == "implicitly_invalidated"


def test_of_two_screenings_as_far_the_earlier_dated_is_kept(store: WorkStateStore) -> None:
    """Judging ahead for A1 is dated 8:50 (a machine ahead); A3, read as A1 is, screens as
    far at 8:30. A1's return at 8:35 is bound by A3's: kept as the later date of the two,
    it bound nothing before 8:50 and A1 judged everything again (a review)."""
    events = [
        assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        depart(2),
        depart(2, "A3"),
        assert_item(10, "n1", "Sunrise Hotel repainted its lobby."),
    ]
    _steps(store, events)
    judge_ahead(
        store, "trip", "A1", task="trip", purpose="itinerary", policy=Policy(max_items=8),
        verifier=FunctionVerifier(_closure, name="closure"), signer=SIGNER, at=parse_time(at(50)),
    )  # fmt: skip
    by_a3 = _decided(store, _earlier(30, "A3"))
    by_a1 = _decided(store, _earlier(35))

    assert by_a3["judgment"]["calls"] == 1
    assert by_a1["judgment"]["calls"] == 0
