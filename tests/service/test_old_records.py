"""Decisions logged by an older readmit still answer ``GET /v1/decisions/{id}``.

The audit log is never rewritten, so a record keeps the shape of the readmit that
logged it. Each case below writes a record in one of those older shapes straight into
the store (as that readmit did, through ``record_decision``) and reads it back as the
agent would, and what the agent is not told of it (what its judgment spent) as the
operator would.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from builders import KEY, spent
from readmit.admission.view import sign_view
from readmit.examples.travel import travel_scenario
from readmit.signing import HmacSha256Signer
from servicekit import Team, play


def _with_spare_notes() -> dict[str, Any]:
    """The travel case with more notes than a view holds: the selector leaves some out."""
    scenario = travel_scenario()
    first = scenario["events"][0]
    spare = [
        {
            "at": first["at"],
            "author": first["author"],
            "op": "assert",
            "item": {"id": f"spare{n}", "text": f"Spare note number {n}."},
        }
        for n in range(40)  # more than the view's 32 items
    ]
    scenario["events"] = spare + scenario["events"]
    return scenario


NAMED = ("missing", "obligation_coverage", "withheld_memories")
"""What decisions name since they say what is missing and why memories wait."""


def _not_selected_inside_excluded(record: dict[str, Any]) -> dict[str, Any]:
    """Before ``not_selected`` was split out: a full exclusion entry per item."""
    left = [
        {"item": i, "reason": "not_selected", "stage": "selection", "evidence": []}
        for i in record.pop("not_selected")
    ]
    return {**record, "excluded": record["excluded"] + left}


def _view_without_policy(record: dict[str, Any]) -> dict[str, Any]:
    """Before views named the policy they were made under (signed without it)."""
    if record["view"] is not None:
        unsigned = {k: v for k, v in record["view"].items() if k not in ("policy", "signature")}
        record["view"] = sign_view(unsigned, HmacSha256Signer(KEY))
    return record


def _first_service(record: dict[str, Any]) -> dict[str, Any]:
    for key in ("judgment", "texts", *NAMED):
        del record[key]
    return _view_without_policy(_not_selected_inside_excluded(record))


def _judgment_without_steps(record: dict[str, Any]) -> dict[str, Any]:
    """Before walk steps were counted (stop 62): none taken, and no budget of them."""
    del record["judgment"]["steps"]
    del record["judgment"]["budget"]["steps"]
    return record


def _judgment_without_seconds(record: dict[str, Any]) -> dict[str, Any]:
    """Before time budgets: no time spent, and a budget of calls and tokens only."""
    del record["judgment"]["seconds"]
    del record["judgment"]["budget"]["seconds"]
    return _judgment_without_steps(record)


def _judgment_without_scans(record: dict[str, Any]) -> dict[str, Any]:
    for key in ("texts", *NAMED):
        del record[key]
    del record["judgment"]["scans"]
    return _view_without_policy(_not_selected_inside_excluded(_judgment_without_seconds(record)))


def _before_the_split(record: dict[str, Any]) -> dict[str, Any]:
    return _not_selected_inside_excluded(_judgment_without_steps(record))


@dataclass(frozen=True)
class Case:
    id: str
    shape: Callable[[dict[str, Any]], dict[str, Any]]
    named: bool
    """Whether the old record names what is missing and why memories wait."""
    scans: int | None
    """The judgment's ``scans`` as the operator's copy shows it (the agent's copy does not
    say what the judgment spent), ``None`` when the record has no judgment."""


CASES = [
    Case("first service", _first_service, named=False, scans=None),
    Case("judgment without scans", _judgment_without_scans, named=False, scans=0),
    Case("not_selected inside excluded", _before_the_split, named=True, scans=0),
    Case(
        "judgment without seconds",
        lambda r: _not_selected_inside_excluded(_judgment_without_seconds(r)),
        named=True,
        scans=0,
    ),
]


def test_a_decision_of_the_first_readmit_is_not_shown_to_its_agent(
    client: httpx.Client, team: Team
) -> None:
    """Logged before records named what the agent may not see (``hidden``): the agent's
    copy cannot leave it out, so only the operator's ``readmit explain`` shows it."""
    play(client, team, _with_spare_notes())
    store = team.service.store
    summary = store.decisions("trip", "A1")[1]
    first = _first_service(store.decision(summary.id, "trip"))
    del first["hidden"]
    store.record_decision("trip", "A1", summary.at, summary.epoch, summary.outcome, first)

    response = client.get("/v1/decisions/3", headers=team.auth("A1"))

    assert response.status_code == 503
    assert response.json()["code"] == "store_error"
    assert "only the operator's copy (readmit explain)" in response.json()["message"]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
@pytest.mark.parametrize("which", [0, 1], ids=["blocked", "issued"])
def test_a_decision_logged_in_an_older_shape_reads_back(
    client: httpx.Client, team: Team, case: Case, which: int
) -> None:
    returns = play(client, team, _with_spare_notes())
    now = returns[which].json()
    store = team.service.store
    summary = store.decisions("trip", "A1")[which]
    logged = store.decision(summary.id, "trip")
    old = case.shape(store.decision(summary.id, "trip"))
    store.record_decision("trip", "A1", summary.at, summary.epoch, summary.outcome, old)
    assert any(e["reason"] == "not_selected" for e in old["excluded"])

    response = client.get("/v1/decisions/3", headers=team.auth("A1"))

    assert response.status_code == 200
    shown = response.json()
    assert shown["decision"] == 3
    assert shown["excluded"] == now["excluded"]  # never a not_selected entry
    assert all(e["reason"] != "not_selected" for e in shown["excluded"])
    for key in ("outcome", "at", "epoch", "coverage", "items", "selected", "readmitted"):
        assert shown[key] == now[key]
    for key in NAMED:
        assert shown.get(key) == (now[key] if case.named else None)  # absent, not invented
    if case.scans is None:
        assert shown["judgment"] is None
    else:  # its budget's seconds restored, if gone; its steps unknown: null, not invented
        budget = {**now["judgment"]["budget"], "steps": None}
        assert shown["judgment"] == {**now["judgment"], "budget": budget}
        operators = {**logged["judgment"], "budget": budget, "steps": None}
        assert spent(store, "trip", "A1") == {**operators, "scans": case.scans}
    assert shown["view"] == old["view"]  # exactly as it was signed
