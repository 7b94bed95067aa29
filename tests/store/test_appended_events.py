"""What a store appended, it keeps parsed: the next return reads the events it just
wrote from memory, and they must equal what any other reader parses from the log."""

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from conftest import store_url
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    Resolve,
    Revoke,
    Supersede,
)
from readmit.model import Agent
from readmit.store import open_store

AGENTS = [Agent(id="A1", principal="p", role="ops"), Agent(id="A2", principal="p", role="dev")]
EAST = timezone(timedelta(hours=5, minutes=30))  # an offset the log stores as UTC
T = datetime(2026, 5, 1, 13, 30, 0, 250_000, tzinfo=EAST)


def _every_op() -> list[Event]:
    def at(n: int) -> datetime:
        return T + timedelta(minutes=n)

    draft = ItemDraft(
        id="a", text="Fact a: Sunrise Hotel, 9:30.", key="k", supports=frozenset({"d2", "d1"})
    )
    # "*" among names: everyone, as the log holds it
    anyone: dict[str, Any] = {f: frozenset({"*", "p"}) for f in ("principals", "roles", "purposes")}
    return [
        Assert(id="e1", at=at(1), author="A2", item=draft),
        Assert(id="e2", at=at(2), author="A2", item=ItemDraft(id="b", text="Fact b.")),
        Evidence(id="e3", at=at(3), author="A2", source_id="s", text="A receipt."),
        Supersede(
            id="e4", at=at(4), author="A2", target="b", item=ItemDraft(id="b2", text="Fact b2.")
        ),
        Revoke(id="e5", at=at(5), author="A2", target="a", why="gone"),
        Assert(id="e6", at=at(6), author="A2", item=ItemDraft(id="c", text="Fact c.", **anyone)),
        Close(id="e7", at=at(7), author="A2", target="c"),
        OpenObligation(
            id="e8",
            at=at(8),
            author="A1",
            obligation=ObligationDraft(
                id="o",
                text="Keep it up.",
                role="ops",
                requires=frozenset({"d1", "d2"}),
                critical=frozenset({"d1"}),
                frontier_id="fo",
                frontier_text="Next: check.",
            ),
        ),
        Resolve(id="e9", at=at(9), author="A1", target="o"),
    ]


@pytest.mark.parametrize("clocked", [False, True], ids=["own time", "server time"])
def test_appended_events_equal_what_another_reader_parses(
    backend: str, tmp_path: Path, clocked: bool
) -> None:
    with store_url(backend, tmp_path) as url:
        writer = open_store(url)
        try:
            writer.create_workspace("ws", AGENTS)
            later = iter(T.astimezone(UTC) + timedelta(hours=1, microseconds=n) for n in range(99))
            clock = (lambda: next(later)) if clocked else None
            for event in _every_op():  # one batch each, as agents send them
                writer.append("ws", [event], clock=clock)
            kept = writer.events("ws")  # from the appending store's memory
            reader = open_store(url)  # parses every body from the log
            try:
                parsed = reader.events("ws")
            finally:
                reader.close()
        finally:
            writer.close()

    assert [r.epoch for r in kept] == list(range(1, 10))
    assert kept == parsed
    assert [r.event.at for r in kept] == [r.event.at for r in parsed]
