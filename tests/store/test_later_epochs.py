"""A process that returned before extends what it derived then (C's id index, the same-key
groups, Δ's observations, read from tuples the store extends); every return it makes at a
later epoch must decide exactly as a process that reads everything afresh."""

import tempfile
from dataclasses import replace
from datetime import timedelta
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import KEY
from readmit.admission import admit
from readmit.admission.context import ReturnContext
from readmit.admission.invalidation.observations import observations
from readmit.decide import decide
from readmit.events import ReturnRequest
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.report import decision_json
from readmit.signing import HmacSha256Signer
from readmit.store import open_store
from readmit.store.sql import SqlStore
from strategies import OPS, START, TEAM, Drawn, record_op

POLICY = Policy(max_items=3, complete_view_gate=False)


def decided(ctx: ReturnContext) -> dict[str, Any]:
    verifier = make_verifier("builtin")
    decision = admit(ctx, policy=POLICY, verifier=verifier, signer=HmacSha256Signer(KEY))
    return decision_json(decision, ctx, POLICY)


def same_as_afresh(store: SqlStore, url: str, request: ReturnRequest) -> None:
    """A return on ``store`` decides as one on a store just opened over the same database."""
    extended = store.return_context("ws", request)
    fresh_store = open_store(url)
    try:
        fresh = fresh_store.return_context("ws", request)
        assert observations(extended) == observations(fresh)
        assert decided(extended) == decided(fresh)
    finally:
        fresh_store.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_returns_at_later_epochs_decide_as_a_fresh_process_would(data: st.DataObject) -> None:
    """Also a second return at the same epoch, after the first one's verdicts and
    screenings were recorded: what each stage remembers of the first must not serve it."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/s.db"
        store, draw = open_store(url), cast(st.DrawFn, data.draw)
        try:
            store.create_workspace("ws", TEAM)
            seen, at, index = Drawn(), START, 0
            for op in data.draw(st.lists(st.sampled_from(OPS), min_size=3, max_size=10)):
                at, index = at + timedelta(minutes=10), index + 1
                record_op(draw, store, seen, op, index, at)
            store.depart("ws", "A1", at)
            for step in range(data.draw(st.integers(2, 4))):
                for op in data.draw(st.lists(st.sampled_from(OPS), max_size=4)):
                    at, index = at + timedelta(minutes=10), index + 1
                    record_op(draw, store, seen, op, index, at)
                request = ReturnRequest(
                    id=f"r{step}", at=at, agent="A1", task="trip", purpose="itinerary"
                )
                same_as_afresh(store, url, request)
                verifier, signer = make_verifier("builtin"), HmacSha256Signer(KEY)
                decide(store, "ws", request, policy=POLICY, verifier=verifier, signer=signer)
                same_as_afresh(store, url, replace(request, id=f"again{step}"))
        finally:
            store.close()
