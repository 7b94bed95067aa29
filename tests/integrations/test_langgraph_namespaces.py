"""LangGraph: ``list_namespaces`` names no namespace that holds only what the agent may not read.

A namespace is listed because something is stored there. The prefix of an admitted
value's namespace is no such thing: listed, it would tell the agent that a value it
may not read (another principal's, or one no view judged) is stored at that prefix.
"""

import asyncio

from langgraph.store.memory import InMemoryStore

from readmit.integrations.langgraph import ReadmitStore, arrive
from readmit.integrations.team import Member

PRIVATE = {"text": "the agency's terms", "_readmit": {"readers": {"principals": ["other"]}}}


def returned(three: dict[str, Member]) -> ReadmitStore:
    """a's store after its return: its note is admitted under the prefix of c's value."""
    inner = InMemoryStore()
    a, c = ReadmitStore(inner, three["a"]), ReadmitStore(inner, three["c"])
    a.put(("clients", "acme", "notes"), "n1", {"text": "call them on Monday"})
    c.put(("clients", "acme"), "deal", PRIVATE)
    three["a"].depart()
    arrive(three["a"])
    return a


def test_a_prefix_holding_only_another_principals_value_is_not_listed(
    three: dict[str, Member],
) -> None:
    a = returned(three)

    assert a.list_namespaces() == [("clients", "acme", "notes")]
    assert a.list_namespaces(prefix=("clients",)) == [("clients", "acme", "notes")]
    assert asyncio.run(a.alist_namespaces()) == [("clients", "acme", "notes")]


def test_a_listing_cut_at_a_depth_names_the_admitted_namespaces_cut_there(
    three: dict[str, Member],
) -> None:
    a = returned(three)

    assert a.list_namespaces(max_depth=2) == [("clients", "acme")]
    assert a.list_namespaces(max_depth=3) == [("clients", "acme", "notes")]
    assert a.list_namespaces(max_depth=1) == [("clients",)]
