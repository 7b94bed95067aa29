"""Mem0 reads its settings when imported: telemetry off, its files in a folder removed at exit."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from builders import KEY
from readmit.bench.backends.mem0_bank import quiet_home
from readmit.integrations.langgraph import writes
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

quiet_home()


def team(path: Path, agents: list[tuple[str, str]]) -> Iterator[dict[str, Member]]:
    """Members of workspace ``trip`` (agent, principal) on a SQLite store at ``path``, on
    one clock that moves a second at each reading."""
    store = open_store(f"sqlite:///{path}")
    store.create_workspace("trip", [Agent(id=a, principal=p, role="planner") for a, p in agents])
    at = [datetime(2026, 5, 1, 8, tzinfo=UTC)]

    def tick() -> datetime:
        at[0] += timedelta(seconds=1)
        return at[0]

    signer = HmacSha256Signer(KEY)
    yield {a: Member(store, "trip", a, signer, clock=tick) for a, _ in agents}
    store.close()


@pytest.fixture
def three(tmp_path: Path) -> Iterator[dict[str, Member]]:
    """Agents ``a`` and ``b`` of one principal and ``c`` of another, on one store and clock."""
    yield from team(tmp_path / "three.db", [("a", "team"), ("b", "team"), ("c", "other")])


@pytest.fixture
def checks_raced(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangGraph writes as if each path's check ran before another principal's write there.

    `readmit.integrations.langgraph.writes.may_write` refuses a write over a version the
    writer may not read; between that check and the write, another principal's write can
    still land at the path, a race the check does not close. Tests of what readers show
    then reach that state by writing past the check.
    """
    monkeypatch.setattr(writes, "may_write", lambda member, last: None)
