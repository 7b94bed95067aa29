"""What a keyed item replaced, as a return observes it, is what the store's writer replaced.

Generated histories of keyed asserts and supersessions by agents of two principals and
two roles (items private to one of them, hearsay), revocations and closings, recorded by
a real store; for each keyed event of Δ, the observations of a return name exactly the
items the store marked ``replaced`` at that epoch, whether the return's observations
were made afresh or grown from an earlier return's (the memo), with and without news.
"""

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from readmit.admission.invalidation.observations import observations
from readmit.clock import parse_time
from readmit.errors import InvalidEvent
from readmit.events import Assert, Depart, RecordExperience, ReturnRequest, Supersede
from readmit.scenario import load_scenario
from readmit.store import SqlStore, open_store
from trip import at

AGENTS = [
    {"id": "A1", "principal": "family", "role": "itinerary"},
    {"id": "A2", "principal": "family", "role": "booking"},
    {"id": "A3", "principal": "family", "role": "itinerary"},
    {"id": "B1", "principal": "neighbours", "role": "itinerary"},
]


def scenario(events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "readmit.scenario/1", "workspace": "trip", "agents": AGENTS, "events": events}


READERS: list[Any] = [
    "*",
    {"principals": ["neighbours"]},
    {"roles": ["booking"]},
    {"principals": ["family"]},
]


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    ids: list[str] = []
    for n in range(draw(st.integers(2, 12))):
        author = draw(st.sampled_from(["A2", "A3", "B1"]))
        op = draw(st.sampled_from(["assert", "assert", "supersede", "revoke", "close"]))
        if op in ("revoke", "close", "supersede") and not ids:
            op = "assert"
        new = {
            "id": f"i{n}",
            "text": f"Note {n}.",
            "key": draw(st.sampled_from(["k1", "k1", "k2"])),
            "readers": draw(st.sampled_from(READERS)),
            **({"unconfirmed": True} if draw(st.integers(0, 4)) == 0 else {}),
        }
        event: dict[str, Any] = {"at": at(n + 1), "author": author, "op": op}
        if op == "assert":
            event["item"] = new
        elif op == "supersede":
            event |= {"target": draw(st.sampled_from(ids)), "item": new}
        else:
            event["target"] = draw(st.sampled_from(ids))
            event |= {"why": "x"} if op == "revoke" else {}
        if "item" in event:
            ids.append(new["id"])
        events.append(event)
    return events


def _replaced_by_key(
    store: SqlStore, request: ReturnRequest, news: bool
) -> list[tuple[int, set[str], set[str]]]:
    """For each keyed event of Δ: its epoch, what the store replaced, what was observed."""
    ctx = store.return_context("trip", request)
    known = {i.id for i in (*ctx.items, *ctx.left_out)}
    rows = store.conn.execute("SELECT id, epoch FROM withdrawn WHERE status = 'replaced'")
    truth: dict[int, set[str]] = {}
    for item, epoch in rows.fetchall():
        if item in known:
            truth.setdefault(epoch, set()).add(item)
    laters = observations(ctx, news)
    found = []
    for r in ctx.delta:
        event = r.event
        if isinstance(event, Assert | Supersede) and event.item.key is not None:
            seen = {x.withdrawn_id for x in laters if x.epoch == r.epoch and x.withdrawn_id}
            seen.discard(event.target if isinstance(event, Supersede) else None)
            found.append((r.epoch, truth.get(r.epoch, set()), seen))
    return found


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.floats(0.2, 0.8), st.booleans())
def test_what_a_keyed_item_replaced_is_observed_as_the_writer_replaced_it(
    events: list[dict[str, Any]], share: float, news: bool
) -> None:
    middle = max(1, int(len(events) * share))
    store = open_store("sqlite:///:memory:")
    assert isinstance(store, SqlStore)
    try:
        made = load_scenario(scenario([{"at": at(0), "op": "depart", "agent": "A1"}, *events]))
        store.create_workspace(made.workspace, made.agents)
        store.depart("trip", "A1", made.steps[0].at)
        for n, step in enumerate(made.steps[1:], start=1):
            assert not isinstance(step, ReturnRequest | Depart | RecordExperience)
            try:
                store.append("trip", [step])
            except InvalidEvent:
                continue  # a write its author may not make: the store refused it whole
            if n == middle:  # an earlier return: the last one's observations grow from it
                early = ReturnRequest(id="r1", at=step.at, agent="A1", task="t", purpose="p")
                _replaced_by_key(store, early, news)
        last = ReturnRequest(id="r2", at=parse_time(at(99)), agent="A1", task="t", purpose="p")
        for epoch, replaced, observed in _replaced_by_key(store, last, news):
            assert observed == replaced, (epoch, events)
    finally:
        store.close()
