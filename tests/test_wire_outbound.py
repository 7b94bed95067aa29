"""What goes out has one shape per thing: the decision record, views, times written one way."""

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from builders import KEY
from readmit.examples.travel import travel_scenario
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.replay import replay
from readmit.report import thresholds_json
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store.sqlite import SQLiteStore
from readmit.wire import event_to_wire, parse_event
from readmit.wire.outbound import DecisionRecordOut, ExclusionOut, SignedViewOut

RECORD: TypeAdapter[DecisionRecordOut] = TypeAdapter(DecisionRecordOut)


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    store = SQLiteStore(":memory:")
    try:
        decided = replay(
            load_scenario(travel_scenario()),
            store,
            verifier=make_verifier("builtin"),
            signer=HmacSha256Signer(KEY),
        )
    finally:
        store.close()
    return [d.record for d in decided]


def test_every_decision_record_has_the_published_shape(records: list[dict[str, Any]]) -> None:
    checked = [RECORD.validate_python(r) for r in records]

    assert [r["outcome"] for r in checked] == ["blocked", "issued"]


def test_a_record_names_the_thresholds_of_the_policy_it_was_decided_under(
    records: list[dict[str, Any]],
) -> None:
    policy = load_scenario(travel_scenario()).policy

    assert [r["thresholds"] for r in records] == [thresholds_json(policy)] * 2
    assert records[0]["thresholds"] == {
        "obligations": policy.gamma,
        "critical": policy.rho,
        "confidence": policy.threshold,
        "max_items": policy.max_items,
        "max_chars": policy.max_chars,
        "max_item_chars": policy.max_item_chars,
    }


def test_a_record_logged_before_it_named_thresholds_still_has_the_published_shape(
    records: list[dict[str, Any]],
) -> None:
    old = {k: v for k, v in records[0].items() if k != "thresholds"}

    assert "thresholds" not in RECORD.validate_python(old)


def test_with_the_complete_view_gate_off_a_view_needed_no_coverage() -> None:
    off = thresholds_json(Policy(gamma=0.9, rho=0.8, complete_view_gate=False))

    assert (off["obligations"], off["critical"]) == (0.0, 0.0)


def test_a_signed_view_comes_out_exactly_as_it_was_signed(records: list[dict[str, Any]]) -> None:
    view = records[1]["view"]
    adapter: TypeAdapter[SignedViewOut] = TypeAdapter(SignedViewOut)

    assert adapter.dump_python(adapter.validate_python(view), mode="json") == view


def test_an_optional_field_is_absent_never_null() -> None:
    adapter: TypeAdapter[ExclusionOut] = TypeAdapter(ExclusionOut)
    plain = {"item": "h0", "reason": "revoked", "stage": "explicit", "evidence": ["e1"]}

    assert adapter.dump_python(adapter.validate_python(plain), mode="json") == plain


def test_a_field_the_shape_does_not_know_is_refused(records: list[dict[str, Any]]) -> None:
    with pytest.raises(ValidationError, match="extra"):
        RECORD.validate_python({**records[0], "surprise": 1})


def test_times_are_written_in_utc_with_a_z() -> None:
    raw = {
        "id": "e1",
        "at": "2026-05-01T10:00:00+02:00",
        "op": "assert",
        "author": "A2",
        "item": {"id": "h1", "text": "Booked.", "valid_to": "2026-05-02T01:30:00-05:00"},
    }

    written = event_to_wire(parse_event(raw, 0))

    assert written["at"] == "2026-05-01T08:00:00Z"
    assert written["item"]["valid_to"] == "2026-05-02T06:30:00Z"
