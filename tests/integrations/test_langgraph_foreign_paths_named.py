"""LangGraph: a batch refused for several paths it may not write names the first of them
in the batch's order and counts the others."""

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from readmit.errors import Forbidden
from readmit.integrations.langgraph import ReadmitStore
from readmit.integrations.team import Member

PRIVATE = {"text": "C-PRIVATE", "_readmit": {"readers": {"principals": ["other"]}}}


def _refused(three: dict[str, Member], names: list[str], written: list[str]) -> str:
    """What ``a`` is told when it writes ``written`` after ``c`` wrote ``names`` privately."""
    inner = InMemoryStore()
    a, c = ReadmitStore(inner, three["a"]), ReadmitStore(inner, three["c"])
    for name in names:
        c.put(("shared",), name, PRIVATE)
    with pytest.raises(Forbidden) as refused:
        a.batch([PutOp(("shared",), name, {"text": "A-OVER"}) for name in written])
    for name in names:
        assert inner.get(("shared",), name).value == PRIVATE  # type: ignore[union-attr]
    return str(refused.value)


def test_one_such_path_is_named_alone(three: dict[str, Member]) -> None:
    said = _refused(three, ["plan"], ["own", "plan"])

    assert said.startswith("put 'shared/plan': the path holds a version 'a' may not read")
    assert "more)" not in said


def test_two_such_paths_name_the_first_and_one_more(three: dict[str, Member]) -> None:
    said = _refused(three, ["a1", "b2"], ["b2", "own", "a1"])

    assert said.startswith("put 'shared/b2' (and 1 more): the path holds a version")


def test_three_such_paths_name_the_first_and_two_more(three: dict[str, Member]) -> None:
    said = _refused(three, ["a1", "b2", "c3"], ["c3", "b2", "a1"])

    assert said.startswith("put 'shared/c3' (and 2 more): the path holds a version")
