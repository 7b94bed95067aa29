"""The audit log keeps an issued view's exclusions once (they are the record's, redacted)
and gives back exactly the record it was given: explain shows what the return showed."""

import json
from typing import Any

import httpx

from readmit.admission import hidden
from readmit.examples.travel import travel_scenario
from readmit.store import audit
from servicekit import Team, play


def unread(workspace: str, checkpoint: int, epoch: int) -> list[str]:
    raise AssertionError("a body that lists its not_selected ids reads no candidates")


def logged(team: Team, agent: str) -> list[dict[str, Any]]:
    store = team.service.store
    return [store.decision(r.id, "trip") for r in store.decisions("trip", agent)]


def test_explain_shows_byte_for_byte_what_the_return_answered(
    client: httpx.Client, team: Team
) -> None:
    first, second = play(client, team, travel_scenario())

    for answered in (first, second):
        number = answered.json()["decision"]
        explained = client.get(f"/v1/decisions/{number}", headers=team.auth("A1"))
        assert explained.content == answered.content
    view = second.json()["view"]
    assert client.post("/v1/verify", json={"view": view}).json()["valid"] is True


def test_an_issued_views_exclusions_are_stored_once_and_read_back_whole(
    client: httpx.Client, team: Team
) -> None:
    play(client, team, travel_scenario())
    issued = next(r for r in logged(team, "A1") if r["view"] is not None)
    assert issued["hidden"]  # the agency's note: the view's list is the record's, redacted

    stored = audit.body(issued)

    assert json.loads(stored)[audit.VIEW_EXCLUDED_REDACTED] == hidden.RULE == 3
    assert "excluded" not in json.loads(stored)["view"]
    assert audit.restored(json.loads(stored), unread) == issued
    assert list(audit.restored(json.loads(stored), unread)["view"]) == sorted(issued["view"])


def test_a_view_whose_exclusions_are_not_the_records_is_stored_as_it_is(
    client: httpx.Client, team: Team
) -> None:
    play(client, team, travel_scenario())
    issued = next(r for r in logged(team, "A1") if r["view"] is not None)
    odd = {**issued, "view": {**issued["view"], "excluded": issued["view"]["excluded"][1:]}}

    stored = json.loads(audit.body(odd))

    assert audit.VIEW_EXCLUDED_REDACTED not in stored
    assert audit.restored(stored, unread) == odd


def test_a_withheld_decision_is_stored_as_it_is(client: httpx.Client, team: Team) -> None:
    play(client, team, travel_scenario())
    blocked = next(r for r in logged(team, "A1") if r["view"] is None)

    stored = json.loads(audit.body(blocked))

    assert audit.VIEW_EXCLUDED_REDACTED not in stored
    assert audit.restored(stored, unread) == blocked


def test_a_view_is_rebuilt_by_the_redaction_it_was_signed_under() -> None:
    """Stop 58 shows an item replaced by one the agent reads whole, its event with it; a
    view signed before lists only the replacing item, and reads back so (a review: rebuilt
    by today's rule, a view logged before the upgrade no longer matched its signature)."""
    replaced = {
        "item": "i",
        "reason": "stale_or_superseded",
        "stage": "explicit",
        "evidence": ["e", "f2"],
        "detail": "replaced by f2 (same key 'car')",
    }

    def stored(rule: object) -> dict[str, Any]:
        return {
            "excluded": [replaced],
            "hidden": ["e"],
            "not_selected": [],
            "view": {"items": []},
            audit.VIEW_EXCLUDED_REDACTED: rule,
        }

    before = audit.restored(stored(True), unread)["view"]["excluded"]
    since = audit.restored(stored(2), unread)["view"]["excluded"]

    assert before == [{k: v for k, v in replaced.items() if k != "detail"} | {"evidence": ["f2"]}]
    assert since == [replaced]


def test_a_view_signed_before_stop_59_is_rebuilt_without_what_stop_59_names() -> None:
    """Stop 59 names an event a verifier read with the item where the agent may read the
    observation (``sighted``), and keeps an ``unscreened`` item's reason; a view signed
    under rule 2 is rebuilt without both, as it was signed."""
    excluded = [
        {
            "item": "i",
            "reason": "implicitly_invalidated",
            "stage": "implicit",
            "evidence": ["e"],
            "detail": "v: the pool closed",
            "sighted": ["e"],
        },
        {
            "item": "j",
            "reason": "unscreened",
            "stage": "implicit",
            "evidence": ["e", "f"],
            "detail": "the return's judgment budget was spent",
            "sighted": ["e"],
        },
    ]

    def rebuilt(rule: int) -> list[dict[str, Any]]:
        stored = {
            "excluded": excluded,
            "hidden": ["e", "f"],
            "not_selected": [],
            "view": {"items": []},
            audit.VIEW_EXCLUDED_REDACTED: rule,
        }
        return list(audit.restored(stored, unread)["view"]["excluded"])

    plain = [{k: v for k, v in e.items() if k != "sighted"} for e in excluded]
    assert rebuilt(2) == [
        {k: v for k, v in e.items() if k != "detail"} | {"evidence": []} for e in plain
    ]
    assert rebuilt(3) == [plain[0], plain[1] | {"evidence": ["e"]}]
