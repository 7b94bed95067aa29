"""The MCP server as an MCP client sees it: a real `readmit mcp` process over stdio."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.to_thread
import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from builders import KEY, build_note, spent
from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.errors import ConfigError
from readmit.events import Assert
from readmit.examples.travel import travel_scenario
from readmit.service.app import create_app
from readmit.service.keys import require_key
from readmit.service.mcp import create_mcp
from readmit.store import SqlStore
from readmit.testing import FunctionVerifier
from servicekit import Team, make_team, play

HOTEL = {"id": "h0", "text": "Sunrise Hotel is booked.", "key": "hotel", "supports": ["d_h"]}
PICKUP = {"id": "p0", "text": "Pickup at 8:00 from Sunrise Hotel."}


def a1_server(store: SqlStore, team: Team) -> StdioServerParameters:
    """``readmit mcp`` over ``store``, acting as A1 with its key."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "readmit", "mcp", "--db", store.url],
        env={"READMIT_SIGNING_KEY": KEY.decode(), "READMIT_AGENT_KEY": team.keys["A1"]},
    )


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    value: dict[str, Any] = json.loads(result.content[0].text)
    return value


def test_an_agent_departs_and_returns_through_mcp_tools(store: SqlStore) -> None:
    team = make_team(store)
    a2 = team.service.authenticate(team.keys["A2"])
    team.service.record(
        a2,
        [
            {"op": "assert", "author": "A2", "item": HOTEL},
            {"op": "assert", "author": "A2", "item": PICKUP},
        ],
    )
    params = a1_server(store, team)

    async def session() -> tuple[set[str], dict[str, Any], dict[str, Any], list[Any]]:
        async with Client(params, read_timeout_seconds=60) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            first = structured(await client.call_tool("state", {"limit": 1}))  # a page
            rest = structured(await client.call_tool("state", {"after": first["next"]}))
            assert first["next"] == first["items"][0]["id"]
            assert [i["id"] for i in first["items"] + rest["items"]] == ["A2/h0", "A2/p0"]
            assert rest["next"] is None
            for asked in ({"limit": 0}, {"limit": True}, {"after": "x" * 1025}, {"after": "a\x00"}):
                refused = await client.call_tool("state", asked)  # as GET /v1/state refuses
                assert refused.is_error, asked
                assert "invalid_input" in getattr(refused.content[0], "text", "")
            noted = {"id": "m1", "text": "Ask for a late checkout.", "source": "A2/h0"}
            structured(await client.call_tool("remember", noted))
            bank = structured(await client.call_tool("memories", {"limit": 1}))  # a page
            assert ([m["id"] for m in bank["memories"]], bank["next"]) == (["A1/m1"], None)
            unknown = await client.call_tool("memories", {"after": "A1/m9"})
            assert "you have no memory 'A1/m9'" in getattr(unknown.content[0], "text", "")
            said = {"task": "trip", "purpose": "itinerary"}
            structured(await client.call_tool("depart", said))
            team.service.record(
                a2, [{"op": "revoke", "author": "A2", "target": "h0", "why": "Sunrise cancelled."}]
            )
            returned = structured(await client.call_tool("return_view", {}))  # as departed
            listed = structured(await client.call_tool("audit", {"limit": 1}))  # a page
            assert [(d["id"], d["outcome"]) for d in listed["decisions"]] == [(1, "issued")]
            assert listed["next"] is None
            past = structured(await client.call_tool("audit", {"after": 1}))
            assert past == {"decisions": [], "next": None}
            checked = structured(await client.call_tool("verify_view", {"view": returned["view"]}))
            text = json.dumps(returned["view"])  # as received: parsed strictly
            as_text = await client.call_tool("verify_view", {"view_json": text})
            repeated = '{"agent": "B1", ' + text[1:]
            twice = await client.call_tool("verify_view", {"view_json": repeated})
            return tools, returned, checked, [as_text, twice]

    tools, returned, checked, (as_text, twice) = anyio.run(session)

    assert {
        "record_events",
        "depart",
        "return_view",
        "verify_view",
        "audit",
        "explain",
        "state",
        "remember",
        "memories",
    } <= tools
    assert returned["outcome"] == "issued"
    assert {e["item"]: e["reason"] for e in returned["excluded"]} == {
        "A2/h0": "revoked",
        "A2/p0": "implicitly_invalidated",
    }
    assert checked["valid"] is True
    assert structured(as_text)["valid"] is True
    assert twice.is_error
    assert "JSON object repeats the key 'agent'" in twice.content[0].text
    assert store.departed_for("trip", "A1") == ("trip", "itinerary")


def test_an_mcp_server_judging_ahead_judges_an_away_teammates_return(store: SqlStore) -> None:
    """``readmit mcp --judge-ahead``: once A1's events through it have been quiet for a
    moment, its process judges A2's return; A2 then judges nothing."""
    team = make_team(store)
    a1, a2 = (team.service.authenticate(team.keys[a]) for a in ("A1", "A2"))
    team.service.record(a1, [build_note("A1", n) for n in range(6)])
    team.service.depart(a2, returning_to=("ops", "p"))
    params = a1_server(store, team)
    params.args.extend(["--judge-ahead", "30"])

    async def session() -> int:
        async with Client(params, read_timeout_seconds=60) as client:
            later = [build_note("A1", n) for n in range(6, 9)]  # replacing what A2 holds
            recorded = structured(await client.call_tool("record_events", {"events": later}))
            last = int(recorded["recorded"][-1]["epoch"])
            with anyio.fail_after(120):  # a loaded machine is slow
                while (
                    store.conn.execute(
                        "SELECT COALESCE(MAX(through), 0) FROM screenings"
                    ).fetchone()[0]
                    < last
                ):
                    await anyio.sleep(0.1)
            return last

    anyio.run(session)
    judgment = team.service.return_(a2, "ops", "p")["judgment"]

    assert judgment is not None
    assert spent(store, "trip", "A2")["calls"] == 0
    assert judgment["unscreened"] == 0


def test_the_mcp_server_refuses_to_start_without_a_key(store: SqlStore) -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "readmit", "mcp", "--db", store.url],
        env={"READMIT_SIGNING_KEY": KEY.decode(), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 2
    assert "READMIT_AGENT_KEY" in result.stderr


def test_a_refused_tool_call_carries_the_code_and_message_without_a_traceback(
    store: SqlStore, capfd: pytest.CaptureFixture[str]
) -> None:
    team = make_team(store)
    params = a1_server(store, team)
    theirs = {"op": "assert", "author": "A2", "item": HOTEL}

    async def session() -> tuple[Any, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            forged = await client.call_tool("record_events", {"events": [theirs]})
            early = await client.call_tool("return_view", {"task": "t", "purpose": "p"})
            return forged, early

    forged, early = anyio.run(session)

    assert forged.is_error
    assert "error [forbidden]: event" in forged.content[0].text
    assert early.is_error
    assert "error [invalid_input]" in early.content[0].text
    assert "has not departed" in early.content[0].text
    assert "Traceback" not in capfd.readouterr().err


def exchange(params: StdioServerParameters, lines: list[bytes], answers: int) -> list[Any]:
    """``lines`` sent to a new server, and its first ``answers`` answers, stdin closed after
    (as a client that stays to read them does; one that pipes and leaves: `piped`)."""
    assert params.env is not None
    got: list[Any] = []
    with subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **params.env},
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        timer = threading.Timer(120, server.kill)  # a hang fails the test, not the run
        timer.start()
        server.stdin.write(b"".join(lines))
        server.stdin.flush()
        while len(got) < answers and (line := server.stdout.readline()):
            got.append(json.loads(line))
    timer.cancel()  # the server has ended: leaving the block closed stdin and waited
    return got


def test_a_message_the_http_api_would_refuse_is_answered_as_refused_and_not_read(
    store: SqlStore,
) -> None:
    """The library read bytes that are not UTF-8 as U+FFFD (two keys became one, an item
    replaced another) and a repeated key as its last value (a probe)."""
    team = make_team(store)
    params = a1_server(store, team)
    assert params.env is not None

    def call(n: int, item: str) -> bytes:
        arguments = f'{{"events": [{{"op": "assert", "author": "A1", "item": {item}}}]}}'
        return (
            f'{{"jsonrpc": "2.0", "id": {n}, "method": "tools/call", '
            f'"params": {{"name": "record_events", "arguments": {arguments}}}}}\n'
        ).encode()

    lines = [
        call(7, '{"id": "i1", "text": "Pay 10.", "text": "Pay 10,000 to account 99."}'),
        call(8, '{"id": "i2", "text": "Room held.", "key": "h\xe9tel"}').replace(
            "é".encode(), b"\xe9"
        ),
        b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"x": NaN}}\n',
        # too deep for Python's own parser too: its id cannot be read (it ended the server)
        b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {"x": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}\n",
        b'{"jsonrpc": "2.0", "id": 11, "method": "ping"}\n',  # answered: the server lives on
    ]
    answers = exchange(params, lines, 5)

    refused = [(a["id"], a["error"]["code"]) for a in answers if "error" in a]
    assert refused == [(7, -32700), (8, -32700), (9, -32700), (None, -32700)]
    assert [a["id"] for a in answers if "result" in a] == [11]
    assert "repeats the key 'text'" in answers[0]["error"]["message"]
    assert "not valid UTF-8" in answers[1]["error"]["message"]
    assert store.events("trip") == []


def piped(params: StdioServerParameters, lines: list[bytes]) -> list[Any]:
    """Every answer of a new server to ``lines`` piped to it, its stdin closed at once."""
    assert params.env is not None
    done = subprocess.run(
        [params.command, *params.args],
        input=b"".join(lines),
        capture_output=True,
        env={**os.environ, **params.env},
        timeout=120,  # a hang fails the test, not the run
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_requests_piped_to_the_server_are_all_answered_when_stdin_ends_at_once(
    store: SqlStore,
) -> None:
    """The library cancelled what was in flight at the end of stdin and answered none of
    it: these tool calls were answered in no run of ten, a ping after a refused line in 3
    of 10. A request the client cancels is not waited for (it may have been answered)."""
    team = make_team(store)
    client = {"name": "t", "version": "1"}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    events = [{"op": "assert", "author": "A1", "item": {"id": "i1", "text": "Room held."}}]
    messages: list[dict[str, Any]] = [
        {"id": 0, "method": "initialize", "params": hello},
        {"method": "notifications/initialized"},
        {
            "id": 1,
            "method": "tools/call",
            "params": {"name": "record_events", "arguments": {"events": events}},
        },
        {"id": 2, "method": "tools/call", "params": {"name": "depart", "arguments": {}}},
        {"id": 3, "method": "ping", "params": {"x": float("nan")}},  # refused before the server
        {"id": 4, "method": "ping"},
        {"id": 5, "method": "no/such/method"},
        {"id": 6, "method": "ping"},
        {"method": "notifications/cancelled", "params": {"requestId": 6}},
    ]
    lines = [json.dumps({"jsonrpc": "2.0", **m}).encode() + b"\n" for m in messages]

    answers = {a["id"]: a for a in piped(a1_server(store, team), lines)}

    assert answers.keys() - {6} == {0, 1, 2, 3, 4, 5}
    assert [i for i, a in sorted(answers.items()) if "error" in a] == [3, 5]
    assert not answers[1]["result"]["isError"]
    assert not answers[2]["result"]["isError"]
    recorded = [r.event for r in store.events("trip")]
    assert [e.item.id for e in recorded if isinstance(e, Assert)] == ["A1/i1"]


def test_a_line_that_is_json_but_no_json_rpc_message_is_answered_as_an_invalid_request(
    store: SqlStore,
) -> None:
    """The library answered none of these, and read a request whose id is an object as a
    notification (never answered)."""
    team = make_team(store)
    lines = [
        b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]\n',
        b'{"jsonrpc": "1.0", "id": 2, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": {"n": 3}, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": 4, "method": 5}\n',
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": [1]}\n',
        b'"ping"\n',
        b'{"jsonrpc": "2.0", "id": 6, "method": "ping"}\n',
    ]

    answers = exchange(a1_server(store, team), lines, 7)

    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (None, -32600),
        (2, -32600),
        (None, -32600),
        (4, -32600),
        (5, -32600),
        (None, -32600),
        (6, None),
    ]
    said = [a["error"]["message"] for a in answers[:6]]
    assert said == [
        "the message is refused: a batch (a JSON array) is not read: MCP has none",
        "the message is refused: not a JSON-RPC 2.0 message: 'jsonrpc': Input should be '2.0'",
        "the message is refused: its 'id' is neither a string nor an integer",
        "the message is refused: not a JSON-RPC 2.0 message: 'method': "
        "Input should be a valid string",
        "the message is refused: not a JSON-RPC 2.0 message: 'params': Input should be an object",
        "the message is refused: a message is one JSON object",
    ]


def test_a_cancelled_return_view_stops_and_records_nothing(store: SqlStore) -> None:
    """It ran to the end and was recorded, the client gone (a probe); HTTP's stops."""
    team = make_team(store)
    scenario = travel_scenario()
    first = next(i for i, e in enumerate(scenario["events"]) if e["op"] == "return")
    with TestClient(create_app(team.service)) as client:
        play(cast(httpx.Client, client), team, {"events": scenario["events"][:first]})
    started, release = threading.Event(), threading.Event()

    def held(pair: Pair) -> Verdict:
        started.set()
        assert release.wait(60)
        return Verdict(invalidates=False, confidence=1.0)

    team.service.verifier = FunctionVerifier(held)
    returning = scenario["events"][first]
    team.clock.set(returning["at"])
    server = create_mcp(team.service, team.service.authenticate(team.keys["A1"]))
    asked = {"task": returning["task"], "purpose": returning["purpose"]}

    async def cancelled_then_asked_again() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(server.call_tool, "return_view", asked)
            assert await anyio.to_thread.run_sync(started.wait, 60)
            group.cancel_scope.cancel()
        assert not server.returns.settle(0.05)  # held by its verifier: still running
        release.set()
        assert server.returns.settle(60)  # what serve_stdio waits for before the store closes
        assert store.decisions("trip", "A1") == []
        await server.call_tool("return_view", asked)

    anyio.run(cancelled_then_asked_again)

    assert len(store.decisions("trip", "A1")) == 1  # the second's alone


def test_a_key_revoked_while_the_mcp_server_runs_is_refused_from_the_next_call(
    store: SqlStore,
) -> None:
    team = make_team(store)
    params = a1_server(store, team)
    mine = {"op": "assert", "author": "A1", "item": {"id": "x", "text": "Before."}}
    later = {"op": "assert", "author": "A1", "item": {"id": "y", "text": "After."}}

    async def session() -> tuple[Any, Any, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            before = await client.call_tool("record_events", {"events": [mine]})
            store.revoke_agent_keys("trip", "A1", None)
            after = await client.call_tool("record_events", {"events": [later]})
            wrong = await client.call_tool("explain", {"decision_id": "abc", "x": 1})
            return before, after, wrong

    before, after, wrong = anyio.run(session)

    assert not before.is_error
    assert after.is_error
    assert "error [unauthenticated]: that agent key is not known" in after.content[0].text
    # the key before the arguments, as HTTP answers 401 before it reads a body
    assert wrong.content[0].text.startswith("Error executing tool explain: error [unauth")
    assert [e.event.id for e in store.events("trip")][-1] != "A1/y"
    assert "A1/y" not in {i.id for i in store.visible_state("trip", "A2")}


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("remember", {"id": "m\x1b[2J", "text": "Quiet.", "source": "h0"}, "id: "),
        ("remember", {"id": "m", "text": "Quiet.\x1b[2J", "source": "h0"}, "text: "),
        ("remember", {"id": "m", "text": "Quiet.", "source": "h0\x07"}, "source: "),
        ("remember", {"id": " m", "text": "Quiet.", "source": "h0"}, "id: "),
        ("remember", {"id": "m", "text": "", "source": "h0"}, "text: "),
        ("return_view", {"task": "t\x1b[2J", "purpose": "p"}, "task: "),
        ("return_view", {"task": "t", "purpose": "p\x00"}, "purpose: "),
        ("return_view", {"task": "t" * 201, "purpose": "p"}, "task: "),
        ("return_view", {"task": "t"}, "give task and purpose together, or neither"),
        (
            "return_view",
            {},
            'give task and purpose ("*" for any): your latest departure named none',
        ),
        (
            "return_view",
            {"task": "t", "purpose": "p", "policy": {"gamma": 0}},
            "return_view: unknown argument 'policy'; it takes purpose, task",
        ),
        (
            "record_events",
            {"events": [], "event": 1},
            "record_events: unknown argument 'event' (did you mean 'events'?); it takes events",
        ),
        ("explain", {"decision_id": "abc"}, "explain: decision_id: Input should be a valid int"),
        ("explain", {"decision_id": "1"}, "explain: decision_id: Input should be a valid int"),
        ("explain", {"decision_id": True}, "explain: decision_id: Input should be a valid int"),
        ("audit", {"limit": 0}, "audit: limit: Input should be greater than or equal to 1"),
        ("audit", {"limit": 10_001}, "audit: limit: Input should be less than or equal to 10000"),
        ("audit", {"after": -1}, "audit: after: Input should be greater than or equal to 0"),
        ("memories", {"after": "m\u200b"}, "after must be an id: no control or invisible"),
    ],
)
def test_tool_arguments_are_checked_like_the_http_apis(
    store: SqlStore, tool: str, arguments: dict[str, Any], problem: str
) -> None:
    team = make_team(store)
    a1 = team.service.authenticate(team.keys["A1"])
    team.service.record(a1, [{"op": "assert", "author": "A1", "item": HOTEL}])
    team.service.depart(a1)
    params = a1_server(store, team)

    async def session() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            return await client.call_tool(tool, arguments)

    result = anyio.run(session)

    assert result.is_error
    assert f"error [invalid_input]: {problem}" in result.content[0].text
    assert "pydantic" not in result.content[0].text
    assert team.service.memories(a1) == ([], None)
    assert team.service.decisions(a1) == ([], None)


def test_a_blocked_return_through_mcp_names_what_is_missing_and_why_memories_wait(
    store: SqlStore,
) -> None:
    team = make_team(store)
    a1 = team.service.authenticate(team.keys["A1"])
    a2 = team.service.authenticate(team.keys["A2"])
    x1 = team.service.authenticate(team.keys["X1"])
    team.service.record(a1, [{"op": "assert", "author": "A1", "item": PICKUP}])
    team.service.remember(a1, "door", "The driver prefers the side entrance.", "p0")
    team.service.depart(a1)
    obligation = {
        "id": "o_p",
        "role": "itinerary",
        "text": "Confirm the pickup.",
        "requires": ["d_p"],
        "critical": ["d_p"],
        "frontier": {"id": "f_p", "text": "Pickup: to be confirmed."},
    }
    secret = {"id": "n9", "text": "Agency pickup 8:40.", "supports": ["d_p"]}
    team.service.record(a2, [{"op": "obligation", "author": "A2", "obligation": obligation}])
    unreadable = {**secret, "readers": {"principals": ["agency"]}}
    team.service.record(x1, [{"op": "assert", "author": "X1", "item": unreadable}])
    params = a1_server(store, team)

    async def session() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(params, read_timeout_seconds=60) as client:
            returned = structured(
                await client.call_tool("return_view", {"task": "trip", "purpose": "itinerary"})
            )
            explained = structured(await client.call_tool("explain", {"decision_id": 1}))
            return returned, explained

    returned, explained = anyio.run(session)

    assert returned["outcome"] == "blocked"
    assert returned["missing"] == [
        {
            "requirement": "d_p",
            "obligations": ["A2/o_p"],
            "critical": True,
            "supported_by_excluded": [],
        }
    ]
    assert returned["withheld_memories"] == [
        {"id": "A1/door", "source": "A1/p0", "reason": "view_withheld"}
    ]
    assert explained["missing"] == returned["missing"]
    assert explained["withheld_memories"] == returned["withheld_memories"]
    assert "n9" not in json.dumps([returned, explained])


def test_the_readme_client_entry_starts_a_server_after_the_readme_key_flow(
    tmp_path: Path,
) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("For MCP clients") :]
    entry = json.loads(section[section.index("```json") + 7 : section.index("```\n\nThe client")])
    server = entry["mcpServers"]["readmit-A1"]
    db = f"sqlite:///{tmp_path}/team.db"
    env = {**os.environ, "READMIT_DB": db, "READMIT_SIGNING_KEY": KEY.decode()}
    readmit = [sys.executable, "-m", "readmit"]

    def run(*args: str) -> str:
        done = subprocess.run([*readmit, *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("workspace", "create", "trip", "--agent", "A1:family:itinerary")
    printed = run("keys", "create", "trip", "A1")
    key = printed.split()[0]
    assert key.startswith("rmk_")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "readmit", *server["args"]],
        env={
            **server["env"],
            "READMIT_AGENT_KEY": key,
            "READMIT_DB": db,
            "READMIT_SIGNING_KEY": KEY.decode(),
        },
    )

    async def session() -> tuple[set[str], dict[str, Any]]:
        async with Client(params, read_timeout_seconds=60) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            return tools, structured(await client.call_tool("state", {}))

    tools, state = anyio.run(session)

    assert set(server["env"]) == {"READMIT_AGENT_KEY", "READMIT_DB", "READMIT_SIGNING_KEY"}
    assert "return_view" in tools
    assert state == {"items": [], "next": None}


@pytest.mark.parametrize("pasted", ["rmk_abc\n", "  rmk_abc ", "rmk_abc"])
def test_an_agent_key_pasted_with_spaces_or_its_line_end_is_read_as_the_key(pasted: str) -> None:
    assert require_key({"READMIT_AGENT_KEY": pasted}, "READMIT_AGENT_KEY") == "rmk_abc"


def test_an_agent_key_of_only_spaces_is_unset() -> None:
    with pytest.raises(ConfigError, match="set READMIT_AGENT_KEY"):
        require_key({"READMIT_AGENT_KEY": "  \n"}, "READMIT_AGENT_KEY")


@pytest.mark.parametrize(
    ("view_json", "message"),
    [
        (
            "{bad",
            "view_json is not valid JSON: Expecting property name enclosed in double quotes "
            "(at character 1)",
        ),
        ("[" * 100 + "]" * 100, "view_json nests deeper than 64 levels: JSON is read no deeper"),
        ('{"view": 1e400}', "view_json is refused: JSON number '1e400' is out of range"),
        ("null", "view_json: give the view, a JSON object"),
    ],
    ids=["not json", "too deep", "out of range", "no object"],
)
def test_verify_view_refuses_view_json_in_the_words_of_v1_verify(
    team: Team, view_json: str, message: str
) -> None:
    """It said "not JSON: Expecting property name ...: line 1 column 2 (char 1)", and called
    JSON too deep to read not JSON."""
    server = create_mcp(team.service, team.service.authenticate(team.keys["A1"]))

    async def session() -> Any:
        async with Client(server) as mcp:
            return await mcp.call_tool("verify_view", {"view_json": view_json})

    result = anyio.run(session)

    assert result.is_error
    assert f"error [invalid_request]: {message}" in result.content[0].text
