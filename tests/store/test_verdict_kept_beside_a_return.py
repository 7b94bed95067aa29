"""A standing verdict is not replaced by one a return decided beside it, on a context read
before it was stored (`readmit.store.verdicts.remember`: the upsert's ``WHERE``)."""

from typing import Any

from readmit.admission.invalidation.implicit import Verifier
from readmit.decide import decide
from readmit.events import Depart, RecordExperience, ReturnRequest
from readmit.plugins import make_verifier
from readmit.scenario import Scenario, load_scenario
from readmit.store import WorkStateStore
from trip import SIGNER, assert_item, at, depart, reason, ret, scenario


def replayed_beside(
    store: WorkStateStore,
    events: list[dict[str, Any]],
    beside: list[dict[str, Any]],
    verifier: Verifier,
) -> list[dict[str, Any]]:
    """The records of ``events``' returns, in the order they were recorded, with ``beside``
    happening while the first return is decided: after it read its context and judged,
    before it is recorded (``beside``'s own returns are recorded first)."""
    main = load_scenario(scenario(events))
    meanwhile = load_scenario(scenario([{"id": f"beside-{n}", **e} for n, e in enumerate(beside)]))
    records: list[dict[str, Any]] = []

    def returned(of: Scenario, request: ReturnRequest, first: bool = False) -> None:
        hook = (lambda: steps(meanwhile)) if first else None
        policy = of.policy_for(request)
        decided = decide(
            store,
            "trip",
            request,
            policy=policy,
            verifier=verifier,
            signer=SIGNER,
            before_record=hook,
        )
        records.append(decided.record)

    def steps(of: Scenario) -> None:
        for step in of.steps:
            if isinstance(step, ReturnRequest):
                returned(of, step, first=of is main and not records)
            elif isinstance(step, Depart):
                store.depart("trip", step.agent, step.at)
            elif isinstance(step, RecordExperience):
                store.record_experience("trip", step)
            else:
                store.append("trip", [step])

    store.create_workspace("trip", main.agents)
    steps(main)
    return records


def cited(record: dict[str, Any], item: str) -> list[str]:
    """The evidence ``record`` excluded ``item`` on."""
    return next(list(e["evidence"]) for e in record["excluded"] if e["item"] == item)


def test_a_verdict_stored_while_a_return_was_decided_stays_for_the_next_return(
    store: WorkStateStore,
) -> None:
    """A1 returns after the hotel booking was revoked and judges the pickup fallen with it.
    While its return is decided, the booking is stated again, the train is cancelled and A2
    returns: the booking came back, so A2 judges the pickup fallen with the train, and keeps
    that verdict. A1's verdict, recorded last, rests on the booking, restored since: the
    train's verdict stands, so A3's return excludes the pickup without judging it again
    (replaced by A1's, lapsed at once, the pickup would be screened anew)."""
    train = {"at": at(10), "author": "A2", "op": "revoke", "target": "t0", "why": "cancelled"}
    events = [
        assert_item(0, "h0", "Sunrise Hotel is booked."),
        assert_item(0, "t0", "The INC-42 train leaves at 9:10."),
        assert_item(1, "p0", "Pickup at 8:00 from Sunrise Hotel for the INC-42 train."),
        depart(3),
        depart(3, "A2"),
        depart(3, "A3"),
        {"at": at(5), "author": "A2", "op": "revoke", "target": "h0", "why": "cancelled"},
        ret(8),
        ret(14, "A3"),
    ]
    beside = [assert_item(9, "hx", "Sunrise Hotel is booked."), train, ret(11, "A2")]

    by_a2, by_a1, by_a3 = replayed_beside(store, events, beside, make_verifier("builtin"))

    assert [r["agent"] for r in (by_a2, by_a1, by_a3)] == ["A2", "A1", "A3"]
    assert reason(by_a1, "p0") == reason(by_a2, "p0") == "implicitly_invalidated"
    assert (cited(by_a1, "p0"), cited(by_a2, "p0")) == (["e6"], ["beside-1"])
    assert reason(by_a3, "p0") == "implicitly_invalidated"
    assert cited(by_a3, "p0") == ["beside-1"]
    assert (by_a3["judgment"]["standing"], by_a3["judgment"]["calls"]) == (1, 0)
