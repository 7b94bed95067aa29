"""A private memory bound to an obligation or its frontier: found by its id, not by reading
every obligation the workspace ever had (155 ms at 10,000, under the workspace's write
lock: one agent's memories held its teammates' writes; a security probe's finding)."""

from datetime import timedelta
from pathlib import Path

import pytest

from builders import T0
from conftest import store_url
from readmit.errors import InvalidEvent
from readmit.events import ObligationDraft, OpenObligation, RecordExperience, Resolve
from readmit.model import Agent, Obligation
from readmit.store import SqlStore, WorkStateStore, obligations, open_store
from readmit.store.damaged import decoded_obligation

AGENTS = [
    Agent(id="A1", principal="family", role="itinerary"),
    Agent(id="A2", principal="family", role="booking"),
    Agent(id="X1", principal="agency", role="partner"),
]


def _opened(n: int) -> OpenObligation:
    draft = ObligationDraft(
        id=f"o{n}",
        text=f"Do part {n}.",
        role="itinerary",
        requires=frozenset({"d"}),
        critical=frozenset(),
        frontier_id=f"f{n}",
        frontier_text=f"Part {n} is open.",
    )
    return OpenObligation(id=f"e{n}", at=T0, author="A2", obligation=draft)


def _remember(store: WorkStateStore, n: int, source: str, agent: str = "A1") -> None:
    memory = RecordExperience(
        id=f"x{n}", at=T0, agent=agent, experience_id=f"m{n}", text="memo", source=source
    )
    store.record_experience("ws", memory)


@pytest.fixture
def ws(store: WorkStateStore) -> WorkStateStore:
    store.create_workspace("ws", AGENTS)
    store.append("ws", [_opened(n) for n in range(3)])
    store.append("ws", [Resolve(id="r1", at=T0, author="A2", target="o1")])
    return store


def test_a_memory_binds_to_an_obligation_or_its_frontier_open_or_resolved(
    ws: WorkStateStore,
) -> None:
    for n, source in enumerate(["o0", "f0", "o1", "f1"]):
        _remember(ws, n, source)

    assert [e.source_item_id for e in ws.experiences("ws", "A1")] == ["o0", "f0", "o1", "f1"]


@pytest.mark.parametrize(("agent", "source"), [("A1", "f9"), ("A1", "nothing"), ("X1", "f0")])
def test_a_source_the_agent_may_not_read_is_no_known_item(
    ws: WorkStateStore, agent: str, source: str
) -> None:
    with pytest.raises(InvalidEvent, match="no known item"):
        _remember(ws, 0, source, agent)


def test_binding_a_memory_decodes_only_the_obligation_it_names(
    ws: WorkStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.append("ws", [_opened(n) for n in range(3, 200)])
    decoded: list[str] = []

    def counted(body: str, obligation_id: str = "") -> Obligation:
        found = decoded_obligation(body, obligation_id)
        decoded.append(found.id)
        return found

    monkeypatch.setattr(obligations, "decoded_obligation", counted)

    with pytest.raises(InvalidEvent):
        _remember(ws, 0, "nothing")
    _remember(ws, 1, "f137")

    assert decoded == ["o137"]


def test_obligations_stored_before_frontiers_were_kept_are_found_by_their_frontier(
    backend: str, tmp_path: Path
) -> None:
    """Migration m029 fills in each obligation's frontier; one an older readmit wrote since,
    with none, is still found."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        store.create_workspace("ws", AGENTS)
        store.append("ws", [_opened(n) for n in range(3)])
        with store.conn.transaction():
            store.conn.execute("DROP INDEX obligations_by_frontier")
            store.conn.execute("ALTER TABLE obligations DROP COLUMN frontier")
            store.conn.execute(
                "DELETE FROM _readmit_migrations WHERE name = 'm029_obligations_by_frontier'"
            )
        store.close()

        store = open_store(url)
        assert isinstance(store, SqlStore)
        rows = store.conn.execute("SELECT id, frontier FROM obligations ORDER BY id").fetchall()
        with store.conn.transaction():
            store.conn.execute("UPDATE obligations SET frontier = NULL WHERE id = 'o2'")
        _remember(store, 1, "f1")
        _remember(store, 2, "f2")
        later = T0 + timedelta(hours=1)
        store.append("ws", [Resolve(id="r2", at=later, author="A2", target="o2")])
        sources = [e.source_item_id for e in store.experiences("ws", "A1")]
        store.close()

    assert [tuple(r) for r in rows] == [("o0", "f0"), ("o1", "f1"), ("o2", "f2")]
    assert sources == ["f1", "f2"]
