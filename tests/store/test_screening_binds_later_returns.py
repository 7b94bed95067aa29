"""A reader's screening binds only returns dated at or after it (`readmit.store.verdicts`).

A screening dated after news ended passed over the news (no evidence by then): a return
dated while the news was in force must still judge it. Returns are dated by their caller
(the library) or by each server's clock (several servers over one database, a
`readmit judge-ahead` run from another machine), so one dated earlier can follow.
"""

from typing import Any

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.ahead import judge_ahead
from readmit.clock import parse_time
from readmit.decide import decide
from readmit.events import ReturnRequest
from readmit.policy import Policy
from readmit.replay import apply_steps
from readmit.scenario import load_scenario
from readmit.store import WorkStateStore
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


def _earlier(n: int) -> ReturnRequest:
    """A1's return at minute ``n``, dated before what the store has decided already."""
    (request,) = load_scenario(scenario([ret(n)])).steps
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
    """A1 returns at 8:12 and judges the pickup (not stale: no closure yet is in force
    against it past its end). A3 returns at 8:40 and is bound by A1's screening: nothing
    is judged again."""
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


def test_a_screening_from_before_its_date_was_kept_binds_no_return(store: WorkStateStore) -> None:
    """A store upgraded to m032 holds screenings with no date: they bind no return, whose
    own screening then replaces them, dated."""
    events = [
        assert_item(0, "p0", "Pickup at 8:00 from Sunrise Hotel."),
        depart(2),
        depart(2, "A3"),
        assert_item(10, "n1", "Sunrise Hotel repainted its lobby."),
        ret(12),
    ]
    _steps(store, events)
    assert isinstance(store, SqlStore)
    with store.conn.transaction():
        store.conn.execute("UPDATE screenings SET at = NULL")
    (request,) = load_scenario(scenario([ret(40, "A3")])).steps
    assert isinstance(request, ReturnRequest)

    by_a3 = _decided(store, request)

    assert by_a3["judgment"]["calls"] == 1
    dated = store.conn.execute("SELECT at FROM screenings WHERE item = 'p0'").fetchall()
    assert dated == [("2026-05-01T08:40:00.000000+00:00",)]
