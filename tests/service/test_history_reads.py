"""An agent's history read back, pinned where a mutation round (helper, stop 60) found a
change no other test saw: which decision a number explains, the query a route declares,
the MCP tools' pages, and what the judge-ahead worker reads of the audit log."""

from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from builders import KEY, T0, logged
from readmit.ahead import returned_to
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.service.mcp import create_mcp
from readmit.service.operations import Service
from readmit.service.schemas import AFTER_MOST, PAGE, PAGE_MOST
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore
from servicekit import Team

FACT = {"op": "assert", "author": "A1", "item": {"id": "f", "text": "Room 12 is free."}}


def _return(team: Team, agent: str, day: int, task: str) -> int:
    """``agent`` departs and returns to ``task`` on May ``day``; its decision's number."""
    caller = team.service.authenticate(team.keys[agent])
    team.clock.set(f"2026-05-{day:02d}T09:00:00Z")
    team.service.depart(caller)
    team.clock.set(f"2026-05-{day:02d}T10:00:00Z")
    return team.service.return_(caller, task, "p")["decision"]


def test_a_number_explains_the_callers_own_decision_not_the_workspaces(
    client: httpx.Client, team: Team
) -> None:
    """A1's first decision is the workspace's second when A2 returned before it: explaining
    A1's ``1`` showed A2's decision, had the store's number been read."""
    assert client.post("/v1/events", json={"events": [FACT]}, headers=team.auth("A1")).is_success
    _return(team, "A2", 1, "theirs")
    _return(team, "A1", 2, "mine")

    explained = client.get("/v1/decisions/1", headers=team.auth("A1"))

    assert explained.status_code == 200, explained.text
    assert (explained.json()["decision"], explained.json()["task"]) == (1, "mine")


def test_a_decision_is_explained_from_its_own_workspace_beside_another(
    client: httpx.Client, team: Team, store: SqlStore
) -> None:
    """Another workspace of the store has a decision numbered 1 too: the caller's is read
    from its own workspace, not refused as in several."""
    store.create_workspace("other", [Agent(id="A1", principal="p", role="r")])
    store.record_decision("other", "A1", T0, 0, "issued", logged("other"))
    _return(team, "A1", 2, "mine")

    explained = client.get("/v1/decisions/1", headers=team.auth("A1"))

    assert explained.status_code == 200, explained.text
    assert explained.json()["task"] == "mine"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/decisions/1?limit=1"),
        ("GET", "/v1/decisions/1?after=0"),
        ("POST", "/v1/depart?after=a"),
        ("POST", "/v1/return?limit=5"),
        ("POST", "/v1/memories?limit=5"),
    ],
)
def test_a_page_parameter_is_refused_where_the_route_declares_none(
    client: httpx.Client, team: Team, method: str, path: str
) -> None:
    """The query a route takes is read off its own declaration: ``after`` and ``limit``,
    which the list routes take, are unknown to the rest."""
    answer = client.request(method, path, json={}, headers=team.auth("A1"))

    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_request"), answer.text
    assert "query: unknown parameter" in answer.json()["message"]


def _tool(team: Team, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """What A1's in-process MCP server answers to ``calls``, in order."""
    server = create_mcp(team.service, team.service.authenticate(team.keys["A1"]))

    async def session() -> list[Any]:
        async with Client(server) as mcp:
            return [await mcp.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(session)


def _answer(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    answer: dict[str, Any] = result.structured_content
    return answer


def test_the_mcp_audit_tool_pages_by_its_limit_and_lists_all_unasked(team: Team) -> None:
    """``limit`` bounds a page and ``next`` says where the next starts; unasked, a page is
    `readmit.service.schemas.PAGE` long, which three decisions do not fill."""
    a1 = team.service.authenticate(team.keys["A1"])
    team.service.record(a1, [FACT])
    for day in (1, 2, 3):
        _return(team, "A1", day, "t")

    asked = _tool(team, ("audit", {"limit": 2}), ("audit", {"after": 2, "limit": 2}), ("audit", {}))

    pages = [_answer(result) for result in asked]

    listed = [([d["id"] for d in page["decisions"]], page["next"]) for page in pages]
    assert listed == [([1, 2], 2), ([3], None), ([1, 2, 3], None)]


def test_the_mcp_memories_tool_pages_by_its_limit(team: Team) -> None:
    """A page of ``limit`` memories and the last one's id as ``next``, until it is null."""
    a1 = team.service.authenticate(team.keys["A1"])
    team.service.record(a1, [FACT])
    for memory in ("m1", "m2", "m3"):
        team.service.remember(a1, memory, f"I noted {memory}.", "f")

    asked = _tool(team, ("memories", {"limit": 2}), ("memories", {"after": "m2"}))

    first, rest = [_answer(result) for result in asked]

    assert ([m["id"] for m in first["memories"]], first["next"]) == (["A1/m1", "A1/m2"], "A1/m2")
    assert ([m["id"] for m in rest["memories"]], rest["next"]) == (["A1/m3"], None)


def test_the_mcp_page_tools_publish_their_bounds(team: Team) -> None:
    """A client reads a page's bounds off the tools' input schemas, as off the HTTP API's
    OpenAPI: a size of 1 to 10,000, a decisions cursor of 0 or more, an id of 1,024
    characters at most."""
    server = create_mcp(team.service, team.service.authenticate(team.keys["A1"]))

    async def session() -> dict[str, Any]:
        async with Client(server) as mcp:
            return {t.name: t.input_schema["properties"] for t in (await mcp.list_tools()).tools}

    tools = anyio.run(session)

    for name in ("audit", "memories", "state"):
        limit = tools[name]["limit"]
        assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, PAGE_MOST, PAGE), name
    assert tools["audit"]["after"]["minimum"] == 0
    for name in ("memories", "state"):
        cursor = next(a for a in tools[name]["after"]["anyOf"] if a.get("type") == "string")
        assert cursor["maxLength"] == AFTER_MOST, name


def _decide(store: SqlStore, agent: str, task: str | None) -> None:
    """Log a decision of ``agent``'s: one that issued a view to ``task``, or (``None``) none."""
    view = None if task is None else {"task": task, "purpose": "p"}
    outcome = "blocked" if task is None else "issued"
    store.record_decision("ws", agent, T0, 0, outcome, logged("ws", agent, view=view))


@pytest.fixture
def pair(store: SqlStore) -> SqlStore:
    store.create_workspace("ws", [Agent(id=a, principal="p", role="r") for a in ("A1", "A2")])
    return store


LAST = 4
"""The decisions read for an agent's task: its last four, as `readmit.service.ahead` says
(`readmit.ahead.RECORDS_READ`)."""


@pytest.mark.parametrize("withheld", [0, 1, LAST - 1])
def test_the_task_returned_to_is_the_latest_issued_within_the_last_four(
    pair: SqlStore, withheld: int
) -> None:
    """The latest issued view's task, however many withheld returns came after it within
    the last four decisions; an earlier view's is not the answer."""
    _decide(pair, "A1", "older")
    _decide(pair, "A1", "latest")
    for _ in range(withheld):
        _decide(pair, "A1", None)

    assert returned_to(pair, "ws", "A1") == ("latest", "p")


def test_a_view_before_the_last_four_is_not_read(pair: SqlStore) -> None:
    """Only the last four decisions are read: an agent whose last four returns were all
    withheld has no known task, however its earlier ones went."""
    _decide(pair, "A1", "long ago")
    for _ in range(LAST):
        _decide(pair, "A1", None)

    assert returned_to(pair, "ws", "A1") is None


def test_a_teammates_decisions_tell_nothing_of_an_agents_task(pair: SqlStore) -> None:
    """The last decisions read are the agent's own, whatever its teammates returned to
    since."""
    _decide(pair, "A1", "mine")
    for _ in range(LAST + 2):
        _decide(pair, "A2", "theirs")
    _decide(pair, "A1", None)

    assert returned_to(pair, "ws", "A1") == ("mine", "p")
    assert returned_to(pair, "ws", "A2") == ("theirs", "p")


def test_the_judge_reads_the_audit_log_again_only_once_it_has_grown(
    pair: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent whose task is unknown is looked up in the audit log once per change to its
    count of decisions: not at every pass, and not never again (a later return tells)."""
    service = Service(pair, signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"))
    reads: list[str] = []

    def counted(store: SqlStore, workspace: str, agent: str) -> tuple[str, str] | None:
        reads.append(agent)
        return returned_to(store, workspace, agent)

    monkeypatch.setattr("readmit.service.ahead.returned_to", counted)
    ahead = service.judge_ahead(30.0)  # nothing recorded after: its thread stays idle
    try:
        unknown = [ahead._task("ws", "A1") for _ in range(3)]
        _decide(pair, "A1", None)
        still = ahead._task("ws", "A1")
        _decide(pair, "A1", "later")
        known = [ahead._task("ws", "A1") for _ in range(2)]
    finally:
        ahead.close()

    assert (unknown, still, known) == ([None] * 3, None, [("later", "p")] * 2)
    assert reads == ["A1"] * 3  # at the first call, after each decision; then remembered
