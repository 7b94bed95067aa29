"""LangGraph: a write over a path whose version the agent may not read is refused.

The inner store keeps one value a path; readmit keeps another principal's item there
whatever the agent writes (it replaces only what its writer may read). Before this was
refused, a put replaced that principal's value in the inner store, and a delete removed
it, while readmit went on admitting the item to its owner.
"""

import asyncio

import pytest
from langgraph.store.base import GetOp, Op, PutOp
from langgraph.store.memory import InMemoryStore

from readmit.errors import Forbidden
from readmit.integrations.langgraph import ReadmitStore
from readmit.integrations.team import Member

PRIVATE = {"text": "C-PRIVATE", "_readmit": {"readers": {"principals": ["other"]}}}
REFUSED = "the path holds a version 'a' may not read in readmit"


def _stores(three: dict[str, Member]) -> tuple[InMemoryStore, ReadmitStore, ReadmitStore]:
    """The inner store, a's store (principal team) and c's (principal other), with c's
    private value at ("shared", "plan")."""
    inner = InMemoryStore()
    a, c = ReadmitStore(inner, three["a"]), ReadmitStore(inner, three["c"])
    c.put(("shared",), "plan", PRIVATE)
    return inner, a, c


def _events(member: Member) -> int:
    return len(member.store.events(member.workspace))


@pytest.mark.parametrize("value", [{"text": "A-OVER"}, None], ids=["put", "delete"])
def test_a_write_over_another_principals_path_is_refused_and_changes_neither_store(
    three: dict[str, Member], value: dict[str, str] | None
) -> None:
    inner, a, _ = _stores(three)
    before = _events(three["a"])

    with pytest.raises(Forbidden, match=REFUSED):
        a.batch([PutOp(("shared",), "plan", value)])

    held = inner.get(("shared",), "plan")
    assert held is not None
    assert held.value == PRIVATE
    assert _events(three["a"]) == before


def test_a_batch_with_one_such_path_writes_none_of_its_paths(three: dict[str, Member]) -> None:
    inner, a, _ = _stores(three)

    with pytest.raises(Forbidden, match=r"put 'shared/plan'"):
        a.batch(
            [
                PutOp(("own",), "note", {"text": "A-NOTE"}),
                PutOp(("shared",), "plan", {"text": "A-OVER"}),
            ]
        )

    assert inner.get(("own",), "note") is None
    assert inner.get(("shared",), "plan").value == PRIVATE  # type: ignore[union-attr]


def test_an_async_write_over_such_a_path_is_refused(three: dict[str, Member]) -> None:
    inner, a, _ = _stores(three)

    with pytest.raises(Forbidden, match=REFUSED):
        asyncio.run(a.aput(("shared",), "plan", {"text": "A-OVER"}))

    assert inner.get(("shared",), "plan").value == PRIVATE  # type: ignore[union-attr]


def test_a_path_whose_version_the_agent_may_read_is_written(three: dict[str, Member]) -> None:
    """A teammate's value the agent may read (its own principal's) is replaced as before;
    so is a path whose private version its owner deleted."""
    inner = InMemoryStore()
    a, b, c = (ReadmitStore(inner, three[n]) for n in "abc")
    b.put(("shared",), "team", {"text": "B-PLAN"})
    c.put(("shared",), "plan", PRIVATE)
    c.delete(("shared",), "plan")

    a.put(("shared",), "team", {"text": "A-PLAN"})
    a.put(("shared",), "plan", {"text": "A-OVER"})

    assert inner.get(("shared",), "team").value == {"text": "A-PLAN"}  # type: ignore[union-attr]
    assert inner.get(("shared",), "plan").value == {"text": "A-OVER"}  # type: ignore[union-attr]


def test_the_owner_still_writes_its_own_path(three: dict[str, Member]) -> None:
    inner, _, c = _stores(three)

    c.put(("shared",), "plan", {**PRIVATE, "text": "C-NEWER"})

    assert inner.get(("shared",), "plan").value["text"] == "C-NEWER"  # type: ignore[union-attr]


@pytest.mark.parametrize("run", ["batch", "abatch"])
def test_a_batch_read_through_a_return_and_writing_such_a_path_is_refused_whole(
    three: dict[str, Member], run: str
) -> None:
    """After a return (reads go through its view), a batch that reads and writes, one
    write over such a path, writes nothing and leaves nothing pending: a later write of
    its own path is shown."""
    inner, a, _ = _stores(three)
    a.put(("own",), "note", {"text": "A-NOTE"})
    three["a"].depart()
    three["a"].return_()
    before = _events(three["a"])
    ops: list[Op] = [
        GetOp(("own",), "note"),
        PutOp(("own",), "next", {"text": "A-NEXT"}),
        PutOp(("shared",), "plan", None),
    ]

    with pytest.raises(Forbidden, match=r"delete 'shared/plan'"):
        a.batch(ops) if run == "batch" else asyncio.run(a.abatch(ops))

    assert _events(three["a"]) == before
    assert inner.get(("own",), "next") is None
    assert inner.get(("shared",), "plan").value == PRIVATE  # type: ignore[union-attr]
    a.put(("own",), "later", {"text": "A-LATER"})
    assert a.get(("own",), "later").value == {"text": "A-LATER"}  # type: ignore[union-attr]
