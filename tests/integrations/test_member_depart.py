"""`Member.depart` may say what the agent returns to, for judging ahead."""

import pytest

from builders import KEY
from readmit.errors import InvalidInput
from readmit.integrations.team import Member
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
