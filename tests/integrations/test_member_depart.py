"""`Member.depart` may say what the agent returns to, for judging ahead."""

import pytest

from builders import KEY
from readmit.clock import now
from readmit.errors import InvalidInput
from readmit.events import Assert, ItemDraft, ObligationDraft, OpenObligation
from readmit.integrations.team import Member
from readmit.integrations.withheld import ViewWithheld, agent_notice
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore


def _member(store: SqlStore) -> Member:
    store.create_workspace("w", [Agent(id="a", principal="org", role="r")])
    return Member(store, "w", "a", HmacSha256Signer(KEY))


def test_a_departure_keeps_what_the_agent_says_it_returns_to(store: SqlStore) -> None:
    member = _member(store)

    member.depart("ops", "triage")

    assert store.departed_for("w", "a") == ("ops", "triage")
    assert store.away("w") == ["a"]


@pytest.mark.parametrize(("task", "purpose"), [("ops", None), (None, "triage"), ("", "triage")])
def test_half_of_it_or_a_bad_name_is_refused_and_departs_nothing(
    store: SqlStore, task: str | None, purpose: str | None
) -> None:
    member = _member(store)

    with pytest.raises(InvalidInput, match="task"):
        member.depart(task, purpose)
    assert store.away("w") == []


def test_a_return_without_a_task_goes_to_what_the_departure_named(store: SqlStore) -> None:
    member = _member(store)
    member.depart("ops", "triage")

    decided = member.return_()

    assert (decided.record["task"], decided.record["purpose"]) == ("ops", "triage")


def test_a_return_after_a_departure_that_named_nothing_goes_to_every_task(
    store: SqlStore,
) -> None:
    member = _member(store)
    member.depart()

    decided = member.return_()

    assert (decided.record["task"], decided.record["purpose"]) == ("*", "*")


def test_a_return_given_half_of_what_it_returns_to_is_refused(store: SqlStore) -> None:
    member = _member(store)
    member.depart("ops", "triage")

    with pytest.raises(InvalidInput, match="task and purpose together"):
        member.return_("ops")
    assert member.latest is None


def test_a_members_decisions_are_numbered_as_the_agent_knows_them(store: SqlStore) -> None:
    store.create_workspace("w", [Agent(id=a, principal="org", role="r") for a in "ab"])
    a, b = (Member(store, "w", agent, HmacSha256Signer(KEY)) for agent in "ab")
    for member in (a, b, b):
        member.depart()
        member.return_()

    assert b.latest is not None
    assert (b.latest.id, b.latest.number) == (3, 2)
    assert agent_notice(b.latest)["decision"] == 2
    assert store.own_number("w", "b", b.latest.id) == 2


def test_a_withheld_return_says_what_is_missing_and_how_to_return_again(
    store: SqlStore,
) -> None:
    member = _member(store)
    draft = ObligationDraft(
        id="o",
        text="Keep the rota.",
        role="r",
        requires=frozenset({"d_rota"}),
        critical=frozenset({"d_rota"}),
        frontier_id="f",
        frontier_text="Nothing yet.",
    )
    member.record([OpenObligation(id="open", at=member.clock(), author="a", obligation=draft)])
    member.depart()

    decided = member.return_()

    assert decided.record["outcome"] == "blocked"
    message = str(ViewWithheld(decided))
    assert "nothing supports d_rota" in message
    assert "until the agent's next return (`Member.return_`" in message


def test_a_member_records_only_its_own_events_and_revokes_ids_not_characters(
    store: SqlStore,
) -> None:
    store.create_workspace("v", [Agent(id=a, principal="org", role="r") for a in ("a", "b")])
    member = Member(store, "v", "a", HmacSha256Signer(KEY))
    theirs = Assert(id="e1", at=now(), author="b", item=ItemDraft(id="x", text="By a."))

    with pytest.raises(InvalidInput, match="authored by 'b'; 'a''s member records only"):
        member.record([theirs])
    with pytest.raises(InvalidInput, match=r"give the ids as a set or list, e.g. \{'ab'\}"):
        member.revoke("ab", "cancelled")
    assert store.events("v") == []
