"""The travel case of paper appendix C.6 as a golden test: exact sets and coverages."""

from dataclasses import replace
from typing import Any

import pytest

from readmit.admission.view import verify_view
from readmit.clock import parse_time
from readmit.examples.travel import travel_scenario
from readmit.plugins import make_verifier
from readmit.replay import replay
from readmit.scenario import load_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore


@pytest.fixture
def decisions(
    travel: dict[str, Any], store: WorkStateStore, signer: HmacSha256Signer
) -> list[dict[str, Any]]:
    decided = replay(load_scenario(travel), store, verifier=make_verifier("builtin"), signer=signer)
    return [d.record for d in decided]


def reasons(record: dict[str, Any]) -> dict[str, str]:
    return {e["item"]: e["reason"] for e in record["excluded"]}


def test_first_return_is_blocked_with_half_coverage(decisions: list[dict[str, Any]]) -> None:
    first = decisions[0]

    assert first["outcome"] == "blocked"
    assert first["coverage"] == {"obligations": 0.5, "critical": 0.75}
    assert first["items"] == []
    assert set(first["selected"]) == {"o_h", "f_h", "o_t", "f_t", "h1", "t1", "c"}
    assert first["view"] is None


def test_first_return_excludes_h0_t0_p0_with_their_reasons(decisions: list[dict[str, Any]]) -> None:
    assert reasons(decisions[0]) == {
        "h0": "revoked",
        "t0": "stale_or_superseded",
        "p0": "implicitly_invalidated",
        "px": "missing_receipt",
        "n1": "unauthorized",
    }


def test_p0_is_invalidated_through_the_sunrise_reference(decisions: list[dict[str, Any]]) -> None:
    p0 = next(e for e in decisions[0]["excluded"] if e["item"] == "p0")

    assert p0["stage"] == "implicit"
    assert p0["evidence"] == ["e9"]  # the revocation of h0
    assert "Sunrise" in p0["detail"]
    assert p0["confidence"] >= 0.65


def test_nothing_is_readmitted_without_an_issued_view(decisions: list[dict[str, Any]]) -> None:
    assert decisions[0]["readmitted"] == []
    assert set(decisions[0]["withheld"]) == {"x_quiet", "x_desk", "x_door"}


def test_second_return_issues_the_papers_view(decisions: list[dict[str, Any]]) -> None:
    second = decisions[1]

    assert second["outcome"] == "issued"
    assert second["coverage"] == {"obligations": 1.0, "critical": 1.0}
    assert set(second["items"]) == {"o_h", "f_h", "o_t", "f_t", "h1", "t1", "p1", "c"}
    assert second["items"][:4] == ["o_h", "f_h", "o_t", "f_t"]
    assert set(reasons(second)) == {"h0", "t0", "p0", "px", "n1"}


def test_second_return_readmits_only_memory_bound_to_c(decisions: list[dict[str, Any]]) -> None:
    assert decisions[1]["readmitted"] == ["x_quiet"]
    assert set(decisions[1]["withheld"]) == {"x_desk", "x_door"}


def test_issued_view_verifies_and_hides_what_the_agent_may_not_read(
    decisions: list[dict[str, Any]], signer: HmacSha256Signer
) -> None:
    view = decisions[1]["view"]

    verified = verify_view(view, signer, parse_time("2026-05-03T14:30:00Z"))

    assert set(verified.item_ids) == set(decisions[1]["items"])
    assert "n1" not in str(view)
    assert "e14" not in str(view)  # the event that recorded the agency's private note


def test_every_decision_is_in_the_audit_log_with_all_exclusions(
    decisions: list[dict[str, Any]], store: WorkStateStore
) -> None:
    stored = [store.decision(row.id) for row in store.decisions("family-trip")]

    assert [d["outcome"] for d in stored] == ["blocked", "issued"]
    assert reasons(stored[0]) == reasons(decisions[0])


def test_a_reset_policy_returns_with_no_inherited_memory(
    travel: dict[str, Any], store: WorkStateStore, signer: HmacSha256Signer
) -> None:
    travel["policy"]["on_incomplete"] = "reset"

    first, second = (
        d.record
        for d in replay(
            load_scenario(travel), store, verifier=make_verifier("builtin"), signer=signer
        )
    )

    assert (first["outcome"], first["items"], first["readmitted"], first["view"]) == (
        "reset",
        [],
        [],
        None,
    )
    assert second["outcome"] == "issued"


def test_a_lower_gamma_issues_the_partial_view_as_such(
    travel: dict[str, Any], store: WorkStateStore, signer: HmacSha256Signer
) -> None:
    travel["events"][15]["policy"] = {"gamma": 0.5, "rho": 0.75}

    first, _ = (
        d.record
        for d in replay(
            load_scenario(travel), store, verifier=make_verifier("builtin"), signer=signer
        )
    )

    assert first["outcome"] == "issued"
    assert first["view"]["coverage"] == {"obligations": 0.5, "critical": 0.75}
    assert first["readmitted"] == ["x_quiet"]


@pytest.mark.parametrize(
    ("ablation", "first_outcome", "p0_reason", "readmitted"),
    [
        # without implicit invalidation the stale Sunrise pickup covers d_p: issued, wrongly
        ("I", "issued", None, ["x_door", "x_quiet"]),
        ("CVG", "issued", "implicitly_invalidated", ["x_quiet"]),
        ("SBPR", "blocked", "implicitly_invalidated", []),
    ],
)
def test_each_ablation_removes_exactly_its_mechanism(
    ablation: str,
    first_outcome: str,
    p0_reason: str | None,
    readmitted: list[str],
    store: WorkStateStore,
    signer: HmacSha256Signer,
) -> None:
    scenario = load_scenario(travel_scenario())
    scenario = replace(scenario, policy=scenario.policy.ablate(ablation))

    decided = replay(scenario, store, verifier=make_verifier("builtin"), signer=signer)
    first, second = (d.record for d in decided)

    assert first["outcome"] == first_outcome
    assert reasons(first).get("p0") == p0_reason
    assert first["readmitted"] == readmitted
    if ablation == "SBPR":
        assert set(second["readmitted"]) == {"x_quiet", "x_desk", "x_door"}
