"""Decision ids are numbered per workspace: one reveals nothing of another workspace's activity."""

from pathlib import Path

import pytest

from builders import T0
from conftest import store_url
from readmit.errors import StoreError
from readmit.model import Agent
from readmit.store import WorkStateStore, open_store
from readmit.store.connection import Connection
from readmit.store.migrations import MIGRATIONS
from readmit.store.sqlite import SQLiteConnection

AGENTS = [Agent(id="A1", principal="p", role="r")]


def _decide(store: WorkStateStore, workspace: str, n: int) -> int:
    return store.record_decision(workspace, "A1", T0, 0, "issued", {"n": n})


@pytest.fixture
def two(store: WorkStateStore) -> WorkStateStore:
    store.create_workspace("ws", AGENTS)
    store.create_workspace("other", AGENTS)
    return store


def test_each_workspace_numbers_its_decisions_from_one(two: WorkStateStore) -> None:
    busy = [_decide(two, "other", n) for n in range(3)]

    mine = [_decide(two, "ws", n) for n in range(10, 12)]

    assert busy == [1, 2, 3]
    assert mine == [1, 2]
    assert [d.id for d in two.decisions("ws")] == [1, 2]
    assert two.decision(2, workspace="ws") == {"n": 11}
    assert two.decision(2, workspace="other") == {"n": 1}


def test_an_id_in_several_workspaces_needs_one_named(two: WorkStateStore) -> None:
    _decide(two, "ws", 0)
    _decide(two, "other", 1)

    with pytest.raises(StoreError, match="several workspaces"):
        two.decision(1)
    with pytest.raises(StoreError, match="no decision 2"):
        two.decision(2, workspace="ws")


def test_an_id_in_one_workspace_needs_none_named(two: WorkStateStore) -> None:
    _decide(two, "ws", 7)

    assert two.decision(1) == {"n": 7}


def test_an_agent_counts_only_its_own_decisions(store: WorkStateStore) -> None:
    team = [Agent(id=a, principal="p", role="r") for a in ("A1", "A2")]
    store.create_workspace("ws", team)
    store.create_workspace("other", team)
    order = ["A1", "A2", "A2", "A1", "A2", "A1"]
    ids = [store.record_decision("ws", a, T0, 0, "issued", {}) for a in order]
    store.record_decision("other", "A1", T0, 0, "issued", {})

    for agent in ("A1", "A2"):
        own = [d.id for d in store.decisions("ws", agent)]
        assert [store.own_number("ws", agent, i) for i in own] == [1, 2, 3]
    assert store.own_number("ws", "A1", ids[-1]) == 3
    assert store.own_number("other", "A1", 1) == 1


def _connect(backend: str, url: str) -> Connection:
    if backend == "sqlite":
        return SQLiteConnection(url.removeprefix("sqlite:///"))
    from readmit.store.postgres import PostgresConnection

    return PostgresConnection(url)


def test_decisions_stored_before_the_numbering_keep_their_ids(backend: str, tmp_path: Path) -> None:
    with store_url(backend, tmp_path) as url:
        old = _connect(backend, url)
        with old.transaction():
            old.execute(
                "CREATE TABLE _readmit_migrations (name TEXT PRIMARY KEY, "
                "applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
            )
            for name, statements in MIGRATIONS[:4]:
                dialect = {"serial": "INTEGER PRIMARY KEY", "without_rowid": ""}
                if backend == "postgres":
                    dialect["serial"] = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
                for statement in statements:
                    old.execute(statement.format(**dialect))
                old.execute("INSERT INTO _readmit_migrations (name) VALUES (?)", (name,))
            for n, workspace in enumerate(["ws", "other", "ws"]):
                old.execute(
                    "INSERT INTO decisions (workspace, agent, at, epoch, outcome, body) "
                    "VALUES (?, 'A1', '2026-01-01', 0, 'issued', ?)",
                    (workspace, f'{{"n": {n}}}'),
                )
        old.close()

        store = open_store(url)
        store.create_workspace("ws", AGENTS)
        before = [(d.workspace, d.id) for d in store.decisions()]
        new = _decide(store, "ws", 9)
        third = store.decision(3, workspace="ws")
        store.close()

    assert before == [("ws", 1), ("other", 2), ("ws", 3)]
    assert third == {"n": 2}
    assert new == 4
