"""Helpers for service tests: a team of agents with keys, a loopback server, the travel case."""

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from builders import KEY, build_note
from readmit.bench.served import served as bench_served
from readmit.clock import now, parse_time
from readmit.examples.travel import travel_scenario
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.service.keys import key_hash, new_key
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store

AGENTS = [Agent(**a) for a in travel_scenario()["agents"]]
"""The travel case's team: A1-A4 of the family, X1 of the agency."""


@dataclass
class SetClock:
    """The server's clock for a test: the real one until a test sets a time."""

    at: datetime | None = None

    def __call__(self) -> datetime:
        return self.at or now()

    def set(self, text: str) -> None:
        self.at = parse_time(text)


@dataclass
class Team:
    service: Service
    keys: dict[str, str]
    clock: SetClock = field(default_factory=SetClock)

    def auth(self, agent: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[agent]}"}


def make_team(store: SqlStore, agents: list[Agent] = AGENTS) -> Team:
    store.create_workspace("trip", agents)
    keys = {}
    for agent in agents:
        keys[agent.id] = new_key()
        store.add_agent_key("trip", agent.id, key_hash(keys[agent.id]), now())
    clock = SetClock()
    service = Service(
        store, signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"), clock=clock
    )
    return Team(service=service, keys=keys, clock=clock)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """Run ``app`` with uvicorn on a free loopback port; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # generous: a busy CI machine starts slowly
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=120)


def keyed_workspace(directory: Path) -> tuple[str, str]:
    """A SQLite store in ``directory`` with workspace ``trip`` and agent A1: its URL and
    A1's key (for a ``readmit serve`` of its own)."""
    db = f"sqlite:///{directory / 'readmit.db'}"
    store = open_store(db)
    store.create_workspace("trip", [Agent(id="A1", principal="org", role="planner")])
    key = new_key()
    store.add_agent_key("trip", "A1", key_hash(key), now())
    store.close()
    return db, key


@contextmanager
def served(db: str, *flags: str) -> Iterator[tuple[str, "subprocess.Popen[bytes]"]]:
    """``readmit serve [flags]`` over ``db`` in a process of its own, on a free loopback
    port, signing with the tests' key, until the block ends: its base URL and the process."""
    with bench_served(db, KEY.decode(), *flags) as running:
        yield running


def as_sent(event: dict[str, Any], owners: dict[str, str]) -> dict[str, Any]:
    """A scenario event as its agent sends it: a teammate's id by its full ``<owner>/<id>``.

    Records in ``owners`` who named each new id (the service stores it as ``<owner>/<id>``).
    """
    agent = event.get("author") or event["agent"]
    new = [event.get(k, {}).get("id") for k in ("item", "source", "experience")]
    obligation = event.get("obligation", {})
    new += [obligation.get("id"), obligation.get("frontier", {}).get("id")]
    owners.update({i: agent for i in new if i is not None})

    def full(ref: str) -> str:
        return f"{owners[ref]}/{ref}" if ref in owners else ref

    sent = dict(event)
    if "target" in sent:
        sent["target"] = full(sent["target"])
    if "item" in sent:
        item = sent["item"] = dict(sent["item"])
        for k in ("depends_on", "cites"):
            if k in item:
                item[k] = [full(r) for r in item[k]]
    if "experience" in sent:
        sent["experience"] = {**sent["experience"], "source": full(sent["experience"]["source"])}
    return sent


def play(client: httpx.Client, team: Team, scenario: dict[str, Any]) -> list[httpx.Response]:
    """Drive a scenario through the HTTP API, each step with its agent's key; return the returns.

    The server's clock follows the scenario: each step happens at its own ``at``. Each id
    is stored as ``<agent>/<id>`` (see `readmit.service.ids`).
    """
    returns = []
    owners: dict[str, str] = {}
    for index, raw in enumerate(scenario["events"]):
        team.clock.set(raw["at"])
        event = as_sent(raw, owners)
        op = event["op"]
        agent = event.get("author") or event["agent"]
        headers = team.auth(agent)
        if op == "depart":
            response = client.post("/v1/depart", json={"at": event["at"]}, headers=headers)
        elif op == "return":
            body = {k: event[k] for k in ("task", "purpose", "at")}
            response = client.post("/v1/return", json=body, headers=headers)
            returns.append(response)
        elif op == "experience":
            memory = {**event["experience"], "at": event["at"]}
            response = client.post("/v1/memories", json=memory, headers=headers)
        else:
            dated = {"id": f"evt{index}", **event}  # the scenario's own e<index>, server-unique
            response = client.post("/v1/events", json={"events": [dated]}, headers=headers)
        assert response.status_code == 200, response.text
    return returns


def team_away_while_changed(service: Service, workspace: str, prefix: str) -> list[Caller]:
    """A team of four in a new ``workspace`` (agents ``prefix``0..3 of one principal and
    role): each records notes, all depart, then each replaces items every checkpoint holds."""
    team = [Agent(id=f"{prefix}{n}", principal="org", role="r") for n in range(4)]
    service.store.create_workspace(workspace, team)
    callers = [Caller(workspace=workspace, agent=agent) for agent in team]
    for n in range(9):
        if n == 6:
            for caller in callers:
                service.depart(caller)
        for caller in callers:
            service.record(caller, [build_note(caller.agent.id, n)])
    return callers


LISTS = {"/v1/state": "items", "/v1/decisions": "decisions", "/v1/memories": "memories"}
"""Each paged list's path, and the key its answer lists under."""


def pages(
    client: httpx.Client, team: Team, path: str, limit: int, agent: str = "A1"
) -> list[list[Any]]:
    """The ids of each page of the list at ``path``, as ``agent`` walks it from ``next`` to
    ``next`` with pages of ``limit``."""
    walked, after = [], None
    while True:
        params: dict[str, Any] = {"limit": limit} | ({} if after is None else {"after": after})
        answer = client.get(path, params=params, headers=team.auth(agent))
        assert answer.status_code == 200, answer.text
        walked.append([entry["id"] for entry in answer.json()[LISTS[path]]])
        after = answer.json()["next"]
        if after is None:
            return walked
