"""Decision ids are numbered per workspace: one reveals nothing of another workspace's activity.
A record is kept compressed on SQLite and read back whole from either form."""

import json
import time
from datetime import timedelta
from pathlib import Path

import pytest

from builders import T0, logged
from conftest import store_url
from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier
from readmit.decide import ATTEMPTS, Decided, decide
from readmit.errors import DepartedMeanwhile, InvalidInput, StoreError
from readmit.events import Assert, ItemDraft, ReturnRequest
from readmit.model import Agent
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store
from readmit.store.connection import Connection
from readmit.store.migrations import MIGRATIONS
from readmit.store.sql import SqlStore
from readmit.store.sqlite import SQLiteConnection
from readmit.testing import FunctionVerifier

AGENTS = [Agent(id="A1", principal="p", role="r")]
SIGNER = HmacSha256Signer(b"test-signing-key-0123456789")


def _decide(store: WorkStateStore, workspace: str, n: int) -> int:
    return store.record_decision(workspace, "A1", T0, 0, "issued", logged(workspace, n=n))


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
    assert two.decision(2, workspace="ws")["n"] == 11
    assert two.decision(2, workspace="other")["n"] == 1


def test_an_agents_decisions_are_read_a_page_at_a_time_and_counted(two: WorkStateStore) -> None:
    """Pages of one agent's decisions in one workspace, interleaved with another workspace's:
    by the agent's own order, whatever the other workspace numbered meanwhile."""
    for n in range(7):
        _decide(two, "ws", n)
        _decide(two, "other", 100 + n)

    pages = [two.decisions("ws", "A1", after, 3) for after in (0, 3, 6, 7)]

    assert [[d.id for d in page] for page in pages] == [[1, 2, 3], [4, 5, 6], [7], []]
    assert {d.workspace for page in pages for d in page} == {"ws"}
    assert two.decisions("ws", "A1", 5) == two.decisions("ws", "A1")[5:]  # no limit
    assert two.decisions("ws", "A1", 2**70, 2**70) == []  # past any database's integers
    assert [d.id for d in two.decisions("ws", "A1", 0, 2**70)] == list(range(1, 8))
    assert (two.decision_count("ws", "A1"), two.decision_count("ws", "A2")) == (7, 0)
    assert [d.workspace for d in two.decisions(None, None, 12, 5)] == ["ws", "other"]
    for after, limit in ((-1, None), (0, -1)):  # SQLite read -1 as no limit at all
        with pytest.raises(InvalidInput, match="may not be negative"):
            two.decisions("ws", "A1", after, limit)


def test_an_id_in_several_workspaces_needs_one_named(two: WorkStateStore) -> None:
    _decide(two, "ws", 0)
    _decide(two, "other", 1)

    with pytest.raises(InvalidInput, match=r"several workspaces \(other, ws\): name its workspace"):
        two.decision(1)
    with pytest.raises(StoreError, match="no decision 2"):
        two.decision(2, workspace="ws")


def test_an_id_in_one_workspace_needs_none_named(two: WorkStateStore) -> None:
    _decide(two, "ws", 7)

    assert two.decision(1) == logged(n=7)


def test_an_agent_counts_only_its_own_decisions(store: WorkStateStore) -> None:
    team = [Agent(id=a, principal="p", role="r") for a in ("A1", "A2")]
    store.create_workspace("ws", team)
    store.create_workspace("other", team)
    order = ["A1", "A2", "A2", "A1", "A2", "A1"]
    ids = [store.record_decision("ws", a, T0, 0, "issued", logged(agent=a)) for a in order]
    store.record_decision("other", "A1", T0, 0, "issued", logged("other"))

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
                    assert isinstance(statement, str)
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


def _stored(store: WorkStateStore, number: int) -> object:
    assert isinstance(store, SqlStore)
    (body,) = store.conn.execute(
        "SELECT body FROM decisions WHERE workspace = 'ws' AND number = ?", (number,)
    ).fetchone()
    return body


def test_a_record_is_kept_compressed_on_sqlite_and_as_text_on_postgres(
    store: WorkStateStore,
) -> None:
    store.create_workspace("ws", AGENTS)
    exclusions = [
        {"item": f"i{n}", "reason": "revoked", "stage": "explicit", "evidence": [f"r{n}"]}
        for n in range(500)
    ]
    record = logged(excluded=exclusions, texts={f"i{n}": f"Fact {n}." for n in range(500)})

    number = store.record_decision("ws", "A1", T0, 0, "issued", record)

    body = _stored(store, number)
    whole = json.dumps(record)
    assert store.decision(number, workspace="ws") == record
    assert isinstance(store, SqlStore)
    if store.conn.dialect == "sqlite":
        assert isinstance(body, bytes)
        assert len(body) * 5 < len(whole)  # a record repeats its shapes
    else:  # the server compresses the column (lz4)
        assert isinstance(body, str)
        assert json.loads(body) == record


def test_a_record_stored_as_text_before_compression_is_read_back(store: WorkStateStore) -> None:
    store.create_workspace("ws", AGENTS)
    assert isinstance(store, SqlStore)
    # As every store wrote a record before: its JSON text.
    store.conn.execute(
        "INSERT INTO decisions (workspace, agent, at, epoch, outcome, body, number) "
        "VALUES ('ws', 'A1', ?, 0, 'issued', ?, 1)",
        (T0.isoformat(), json.dumps({"n": 1})),
    )

    assert store.decision(1, workspace="ws") == {"n": 1}


def test_a_damaged_compressed_record_is_a_clear_error(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/s.db")
    try:
        store.create_workspace("ws", AGENTS)
        number = _decide(store, "ws", 1)
        assert isinstance(store, SqlStore)
        store.conn.execute("UPDATE decisions SET body = ?", (b"\x78\x01not zlib",))

        with pytest.raises(StoreError, match="decision record in the audit log is damaged"):
            store.decision(number, workspace="ws")
    finally:
        store.close()


def _departed_meanwhile(
    store: WorkStateStore, times: int, news: bool = True, verifier: Verifier | None = None
) -> Decided:
    """A1's return at T0 + 1 h, with A1 departing again ``times`` times while it is decided
    (between its context and its record, as another process or thread can), each after a
    new event (``news``) or at the same epoch as the departure before. The return is to
    what the latest departure said, asked anew at each try."""
    store.create_workspace("ws", [*AGENTS, Agent(id="A2", principal="p", role="r")])
    fact = Assert(id="e1", at=T0, author="A2", item=ItemDraft(id="f1", text="Gate 4 is open."))
    store.append("ws", [fact])
    store.depart("ws", "A1", T0 + timedelta(minutes=1), ("task 1", "p"))
    closed = ItemDraft(id="c1", text="Gate 4 is closed.")
    store.append("ws", [Assert(id="c", at=T0 + timedelta(seconds=90), author="A2", item=closed)])
    departures = iter(T0 + timedelta(minutes=2 + n) for n in range(times))

    def meanwhile() -> None:
        at = next(departures, None)
        if at is not None:
            note = ItemDraft(id=f"f{at.minute}", text=f"Gate {at.minute} is open.")
            if news:
                store.append("ws", [Assert(id=f"e{at.minute}", at=at, author="A2", item=note)])
            store.depart("ws", "A1", at, (f"task {at.minute}", "p"))

    def request() -> ReturnRequest:
        at = T0 + timedelta(hours=1)
        task, purpose = store.departed_for("ws", "A1", at) or ("?", "?")
        return ReturnRequest(id="r", at=at, agent="A1", task=task, purpose=purpose)

    policy = Policy(max_judgment_seconds=600)  # a time budget: the time spent is recorded
    return decide(
        store,
        "ws",
        request,
        policy=policy,
        verifier=verifier,
        signer=SIGNER,
        before_record=meanwhile,
    )


@pytest.mark.parametrize("news", [True, False], ids=["after an event", "at the same epoch"])
def test_a_return_is_decided_again_on_a_departure_recorded_while_it_was_decided(
    store: WorkStateStore, news: bool
) -> None:
    decided = _departed_meanwhile(store, 1, news)

    assert decided.record["departure_epoch"] == (3 if news else 2)
    assert decided.record["task"] == "task 2"  # the latest departure's, not the first's
    assert [d.epoch for d in store.decisions("ws")] == [decided.record["epoch"]]
    assert store.away("ws") == []


def test_the_time_of_a_try_before_counts_against_the_returns_time_budget(
    store: WorkStateStore,
) -> None:
    waits = iter([0.3])  # the first try's one call takes 0.3 s, the second's none

    def slow_once(pair: Pair) -> Verdict:
        time.sleep(next(waits, 0.0))
        return Verdict(invalidates=False, confidence=1.0)

    decided = _departed_meanwhile(store, 1, verifier=FunctionVerifier(slow_once))

    assert decided.record["judgment"]["seconds"] >= 0.3


def test_a_return_whose_agent_keeps_departing_is_refused_and_nothing_is_recorded(
    store: WorkStateStore,
) -> None:
    with pytest.raises(DepartedMeanwhile, match=r"A1 departed again .* decide the return again"):
        _departed_meanwhile(store, ATTEMPTS)

    assert store.decisions("ws") == []
    assert store.away("ws") == ["A1"]
