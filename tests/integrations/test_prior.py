"""`readmit.integrations.prior`: what came before a return, walked once and kept."""

import random
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import KEY
from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.errors import ReadmitError
from readmit.events import Assert, Close, Event, ItemDraft, Recorded, Revoke, Supersede
from readmit.integrations.following import Following
from readmit.integrations.mem0.ids import item_id, memory_of
from readmit.integrations.prior import Prior
from readmit.integrations.team import Member, Removal
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store

AGENTS = [("a1", "family"), ("a2", "family"), ("x1", "agency")]
T0 = datetime(2026, 3, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        self.at += timedelta(seconds=1)
        return self.at


@pytest.fixture
def members(tmp_path: Path) -> Iterator[dict[str, Member]]:
    """a1 and a2 of the family, x1 of the agency, on one clock."""
    yield from _members(tmp_path)


def _members(directory: Path) -> Iterator[dict[str, Member]]:
    store: SqlStore = open_store(f"sqlite:///{directory}/r.db")
    store.create_workspace("trip", [Agent(id=a, principal=p, role="planner") for a, p in AGENTS])
    signer, clock = HmacSha256Signer(KEY), Clock()
    yield {a: Member(store, "trip", a, signer, clock=clock) for a, _ in AGENTS}
    store.close()


def _said(prior: Prior, decided: Decided) -> list[tuple[str, str, str]]:
    """Everything ``prior`` names at ``decided``, in one comparable list."""
    return sorted((r.item, r.reason, r.detail) for r in prior.removals(decided))


def _event(rnd: random.Random, who: Member, n: int, stated: list[str]) -> Event:
    """A random write of ``who``: a statement (keyed, shared or not, on a premise) or a
    withdrawal of an earlier statement (the store refuses those it may not make)."""
    at, author = who.clock(), who.agent
    if stated and rnd.random() < 0.4:
        target = rnd.choice(stated)
        kind = rnd.choice(["revoke", "close", "supersede"])
        if kind == "revoke":
            return Revoke(id=f"e{n}", at=at, author=author, target=target, why=f"why {n}")
        if kind == "close":
            return Close(id=f"e{n}", at=at, author=author, target=target)
        memory = memory_of(target)
        new = item_id(memory[0], memory[1] + 1) if memory else f"s{n}"
        draft = ItemDraft(id=new, text=f"Version {n} of {target}.")
        return Supersede(id=f"e{n}", at=at, author=author, target=target, item=draft)
    fields: dict[str, Any] = {}
    if rnd.random() < 0.4:
        fields["key"] = rnd.choice(["hotel", "flight"])
    if rnd.random() < 0.3:
        fields["principals"] = frozenset({rnd.choice(["family", "agency", "*"])})
    if stated and rnd.random() < 0.4:
        fields["depends_on"] = frozenset({rnd.choice(stated)})
    new = item_id(f"m{n}", 1) if rnd.random() < 0.5 else f"i{n}"
    return Assert(
        id=f"e{n}", at=at, author=author, item=ItemDraft(id=new, text=f"Fact {n}.", **fields)
    )


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_walk_kept_across_returns_names_what_a_walk_from_the_start_does(seed: int) -> None:
    """Random histories of three agents (two principals), a1 departing and returning
    between them: at every return the walk kept since the first names exactly what a
    new one, reading the whole log, names."""
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as directory:
        for members in _members(Path(directory)):
            a1 = members["a1"]
            kept = Prior(a1, memory_of)
            stated: list[str] = []
            for n in range(60):
                if n % 12 == 11:
                    a1.depart()
                    decided = a1.return_()
                    assert _said(kept, decided) == _said(Prior(a1, memory_of), decided)
                    continue
                who = members[rnd.choice([a for a, _ in AGENTS])]
                event = _event(rnd, who, n, stated)
                try:
                    who.record([event])
                except ReadmitError:
                    continue
                if isinstance(event, Assert | Supersede):
                    stated.append(event.item.id)


class Counting:
    """A real store that notes the epochs each log read starts after."""

    def __init__(self, store: Any) -> None:
        self.store, self.reads = store, list[int]()

    def events(
        self, workspace: str, after_epoch: int = 0, upto: int | None = None
    ) -> list[Recorded]:
        self.reads.append(after_epoch)
        found: list[Recorded] = self.store.events(workspace, after_epoch, upto)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_a_later_return_reads_only_the_events_since_the_last(members: dict[str, Member]) -> None:
    a1, a2 = members["a1"], members["a2"]
    for n in range(5):
        a2.record(
            [
                Assert(
                    id=f"e{n}",
                    at=a2.clock(),
                    author="a2",
                    item=ItemDraft(id=f"i{n}", text=f"Fact {n}."),
                )
            ]
        )
    a1.depart()
    first = a1.return_()
    counting = Counting(a1.store)
    prior = Prior(Member(counting, "trip", "a1", a1.signer))
    prior.upto(first)
    a2.revoke({"i0"}, "cancelled")
    a1.depart()
    second = a1.return_()
    walk = prior.walk
    assert prior.upto(second) is walk
    assert counting.reads == [0, first.context.epoch]
    assert prior.upto(second) is walk
    assert len(counting.reads) == 2


def test_an_older_return_starts_the_walk_over(members: dict[str, Member]) -> None:
    a1, a2 = members["a1"], members["a2"]
    a2.record(
        [Assert(id="e1", at=a2.clock(), author="a2", item=ItemDraft(id="i1", text="Fact 1."))]
    )
    a1.depart()
    older = a1.return_()
    a2.revoke({"i1"}, "cancelled")
    a1.depart()
    newer = a1.return_()
    prior = Prior(a1)
    prior.upto(newer)
    assert [r.item for r in prior.withdrawn(newer)] == ["i1"]  # before its departure
    prior.upto(older)
    assert prior.withdrawn(older) == []


def test_withdrawn_asks_for_the_walk_up_to_its_return(members: dict[str, Member]) -> None:
    a1 = members["a1"]
    a1.depart()
    with pytest.raises(ValueError, match=r"Prior\.upto"):
        Prior(a1).withdrawn(a1.return_())


def test_a_statement_on_a_premise_withdrawn_at_an_earlier_read_falls_at_once(
    members: dict[str, Member],
) -> None:
    """What rests on a withdrawn item falls whether the two were read together or not;
    an item stated after its premise was read withdrawn was served (a review)."""
    a1, a2 = members["a1"], members["a2"]
    a2.record(
        [
            Assert(
                id="e1",
                at=a2.clock(),
                author="a2",
                item=ItemDraft(id="p", text="The hotel is the Ritz."),
            )
        ]
    )
    a1.depart()
    following = Following(a1.return_())
    a2.revoke({"p"}, "the Ritz is full")
    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [("p", "revoked")]

    on_it = ItemDraft(id="x", text="Dinner at the Ritz at eight.", depends_on=frozenset({"p"}))
    a1.record([Assert(id="e2", at=a1.clock(), author="a1", item=on_it)])
    assert following.withdrawn(a1) == [
        Removal("x", "premise_invalidated", "depends on p, which was withdrawn")
    ]
    a1.depart()
    decision = a1.return_().decision  # the return agrees: x is not admitted
    assert isinstance(decision, Issued)
    assert "x" not in {i.id for i in decision.items}


def test_a_walk_names_each_item_once_by_its_first_withdrawal_however_the_log_is_read(
    members: dict[str, Member],
) -> None:
    """x falls with its premise, then is replaced under its key: named once, as fallen,
    whether the two were read together or apart (the SDK listed or hid it by the split)."""
    a1, a2 = members["a1"], members["a2"]
    a2.record([Assert(id="e1", at=a2.clock(), author="a2", item=ItemDraft(id="p", text="Ritz."))])
    on_p = ItemDraft(id="x", text="Dinner at eight.", key="dinner", depends_on=frozenset({"p"}))
    a1.record([Assert(id="e2", at=a1.clock(), author="a1", item=on_p)])
    a2.revoke({"p"}, "full")
    again = ItemDraft(id="y", text="Dinner at nine.", key="dinner")
    a1.record([Assert(id="e3", at=a1.clock(), author="a1", item=again)])
    a1.depart()
    decided = a1.return_()
    log = a1.store.events("trip")

    named = []
    for split in range(len(log) + 1):
        walk = Following(decided, from_start=True)
        walk.take(log[:split], "a1")
        walk.take(log[split:], "a1")
        named.append([(r.item, r.reason) for r in walk.gone])
    assert named == [[("p", "revoked"), ("x", "premise_invalidated")]] * (len(log) + 1)


def test_an_item_stated_after_the_return_on_one_withdrawn_before_it_falls_at_once(
    members: dict[str, Member],
) -> None:
    """The premise is not in the return's C: the walk after the return did not know it
    withdrawn and served what rests on it until the next return (a review)."""
    a1, a2 = members["a1"], members["a2"]
    a2.record([Assert(id="e1", at=a2.clock(), author="a2", item=ItemDraft(id="p", text="Ritz."))])
    a2.revoke({"p"}, "full")
    a1.depart()
    prior = Prior(a1)
    following = prior.following(None, a1.return_())
    assert following.withdrawn(a1) == []

    on_p = ItemDraft(id="x", text="Dinner at the Ritz.", depends_on=frozenset({"p"}))
    a1.record([Assert(id="e2", at=a1.clock(), author="a1", item=on_p)])
    assert [(r.item, r.reason) for r in following.withdrawn(a1)] == [("x", "premise_invalidated")]
    assert prior.following(following, following.decided) is following
