"""`readmit.integrations.following`: what teammates withdrew after a return (store rules)."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from builders import KEY
from readmit.events import Assert, ItemDraft
from readmit.integrations.following import Following
from readmit.integrations.team import Member, Removal
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store


@pytest.fixture
def members(tmp_path: Path) -> Iterator[dict[str, Member]]:
    """a1 and a2 of the family, x1 of the agency."""
    store: SqlStore = open_store(f"sqlite:///{tmp_path}/r.db")
    agents = [("a1", "family"), ("a2", "family"), ("x1", "agency")]
    store.create_workspace("trip", [Agent(id=a, principal=p, role="planner") for a, p in agents])
    signer = HmacSha256Signer(KEY)
    yield {a: Member(store, "trip", a, signer) for a, _ in agents}
    store.close()


def _state(member: Member, n: int, text: str, **fields: object) -> None:
    item = ItemDraft(id=f"{member.agent}-{n}", text=text, key="hotel", **fields)  # type: ignore[arg-type]
    member.record(
        [Assert(id=f"e-{member.agent}-{n}", at=member.clock(), author=member.agent, item=item)]
    )


def test_a_keyed_statement_withdraws_only_what_its_author_may_read(
    members: dict[str, Member],
) -> None:
    """The agency's newer hotel cannot replace the family's (the writer's rule); a2's
    replaces both, as the store does."""
    a1 = members["a1"]
    _state(a1, 1, "The hotel is the Hilton.")
    a1.depart()
    following = Following(a1.return_())

    _state(members["x1"], 1, "The hotel is the Marriott.", principals=frozenset({"*"}))
    assert following.withdrawn(a1) == []
    assert [i.id for i in a1.visible() if i.key == "hotel"] == ["a1-1", "x1-1"]

    _state(members["a2"], 1, "The hotel is the Ritz.")
    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [
        ("a1-1", "stale_or_superseded"),
        ("x1-1", "stale_or_superseded"),
    ]
    assert [i.id for i in a1.visible() if i.key == "hotel"] == ["a2-1"]


def test_the_agents_own_item_only_another_principal_reads_is_withdrawn_from_it(
    members: dict[str, Member],
) -> None:
    """As a return holds it (the agent may not read it): a process that followed the log
    served it, one restarted after a return hid it (a probe)."""
    a1 = members["a1"]
    a1.depart()
    following = Following(a1.return_())

    theirs = ItemDraft(id="a1-9", text="The agency's fee is 5%.", principals=frozenset({"agency"}))
    a1.record([Assert(id="e-a1-9", at=a1.clock(), author="a1", item=theirs)])

    assert following.withdrawn(a1) == [Removal("a1-9", "unauthorized", "")]
    assert "a1-9" not in {i.id for i in a1.visible()}
