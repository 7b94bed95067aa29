"""``readmit serve --workers N``: several processes over one store, one set of per-agent limits."""

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from builders import KEY, build_note, spent
from readmit.cli import cli
from readmit.clock import now
from readmit.model import Agent
from readmit.service.keys import key_hash, new_key
from readmit.store import open_store
from servicekit import keyed_workspace, served


@contextmanager
def workers(db: str, *flags: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``readmit serve --workers 2 [flags]`` on a free loopback port, until the block ends."""
    with served(db, "--workers", "2", *flags) as running:
        yield running


NOTE = {"op": "assert", "author": "A1", "item": {"id": "n0", "text": "A note."}}


def children(pid: int) -> set[int]:
    return {int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_returns_run_in_the_workers_and_the_workers_stop_with_the_server(tmp_path: Path) -> None:
    db, key = keyed_workspace(tmp_path)

    with workers(db) as (url, server):
        spawned = children(server.pid)
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
        ) as c:  # not httpx's 5 s: a return through a new worker on a loaded machine
            assert c.post("/v1/events", json={"events": [NOTE]}).status_code == 200
            assert c.post("/v1/depart", json={}).status_code == 200
            returned = c.post("/v1/return", json={"task": "t", "purpose": "p"})
            explained = c.get(f"/v1/decisions/{returned.json()['decision']}")
            verified = c.post("/v1/verify", json={"view": returned.json()["view"]})

    assert returned.status_code == 200
    assert explained.content == returned.content
    assert verified.json()["valid"] is True
    assert len(spawned) >= 2  # the two workers (and multiprocessing's resource tracker)
    deadline = time.monotonic() + 120  # they stop in their own time on a loaded machine
    while any(alive(p) for p in spawned) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in spawned)


def test_a_bad_limit_fails_before_any_worker_starts(tmp_path: Path) -> None:
    db = tmp_path / "readmit.db"
    result = CliRunner().invoke(
        cli,
        ["serve", "--db", f"sqlite:///{db}", "--workers", "2", "--rate", "0"],
        env={"READMIT_SIGNING_KEY": KEY.decode()},
    )

    assert result.exit_code == 2, result.output
    assert "rate must be a positive number" in result.output
    assert not db.exists()


def test_zero_workers_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["serve", "--db", f"sqlite:///{tmp_path / 'r.db'}", "--workers", "0"],
        env={"READMIT_SIGNING_KEY": KEY.decode()},
    )

    assert result.exit_code == 2
    assert "--workers" in result.output


def return_workers(pid: int) -> set[int]:
    """The pool's processes among ``pid``'s children (not multiprocessing's resource tracker)."""
    found = set()
    for child in children(pid):
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
            found.add(child)
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_a_worker_that_dies_costs_one_answer_not_the_pool(tmp_path: Path) -> None:
    db, key = keyed_workspace(tmp_path)

    with (
        workers(db) as (url, server),
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as c,
    ):
        assert c.post("/v1/events", json={"events": [NOTE]}).status_code == 200
        assert c.post("/v1/depart", json={}).status_code == 200
        assert c.post("/v1/return", json={"task": "t", "purpose": "p"}).status_code == 200
        os.kill(min(return_workers(server.pid)), signal.SIGKILL)
        answers = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the pool answers again
            answers.append(c.post("/v1/return", json={"task": "t", "purpose": "p"}))
            if answers[-1].status_code == 200:
                break
            time.sleep(0.2)

    lost = [a for a in answers if a.status_code != 200]
    assert answers[-1].status_code == 200
    assert all(a.status_code == 503 and a.json()["code"] == "worker_lost" for a in lost)
    assert len(lost) <= 1  # the pool is started again as soon as one return finds it broken


@pytest.mark.slow
def test_a_return_to_a_server_judging_ahead_finds_its_items_judged(tmp_path: Path) -> None:
    """``--judge-ahead``: the server process judges the away agent's return in the
    background (its task known from its return through a worker), and the return judges
    nothing."""
    db = f"sqlite:///{tmp_path / 'readmit.db'}"
    store = open_store(db)
    store.create_workspace("trip", [Agent(id=a, principal="org", role="r") for a in ("A1", "A2")])
    keys = {a: new_key() for a in ("A1", "A2")}
    for agent, key in keys.items():
        store.add_agent_key("trip", agent, key_hash(key), now())
    store.close()
    auth = {a: {"Authorization": f"Bearer {k}"} for a, k in keys.items()}

    with (
        workers(db, "--judge-ahead", "30") as (url, _),
        httpx.Client(base_url=url, timeout=120) as c,
    ):
        notes = [build_note("A2", n) for n in range(6)]
        assert c.post("/v1/events", json={"events": notes}, headers=auth["A2"]).is_success
        assert c.post("/v1/depart", json={}, headers=auth["A1"]).is_success
        assert c.post("/v1/return", json=TASK, headers=auth["A1"]).is_success
        assert c.post("/v1/depart", json={}, headers=auth["A1"]).is_success
        later = [build_note("A2", n) for n in range(6, 9)]  # replacing what A1 holds
        recorded = c.post("/v1/events", json={"events": later}, headers=auth["A2"])
        last = recorded.json()["recorded"][-1]["epoch"]
        until_screened_through(db, last)
        judgment = c.post("/v1/return", json=TASK, headers=auth["A1"]).json()["judgment"]
    store = open_store(db)
    try:
        logged = spent(store, "trip", "A1")  # what it spent: only the operator's record says
    finally:
        store.close()

    assert logged["calls"] == 0
    assert judgment["unscreened"] == 0


TASK = {"task": "ops", "purpose": "p"}


def until_screened_through(db: str, epoch: int) -> None:
    """Wait (a loaded machine is slow) until the store has items screened through ``epoch``."""
    store = open_store(db)
    try:
        deadline = time.monotonic() + 120
        while True:
            (through,) = store.conn.execute("SELECT MAX(through) FROM screenings").fetchone()
            if through is not None and through >= epoch:
                return
            assert time.monotonic() < deadline, "nothing was judged ahead"
            time.sleep(0.1)
    finally:
        store.close()
