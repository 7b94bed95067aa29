"""Build scenario histories for generated episodes: a clock that only moves forward."""

from datetime import UTC, datetime, timedelta
from typing import Any

from readmit.clock import format_time

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class History:
    """Events of one workspace in time order, as ``readmit.scenario/1`` data."""

    def __init__(
        self,
        workspace: str,
        agents: list[tuple[str, str, str]],
        policy: dict[str, Any] | None = None,
    ) -> None:
        self.workspace = workspace
        self.agents = [{"id": a, "principal": p, "role": r} for a, p, r in agents]
        self.policy = policy or {}
        self.events: list[dict[str, Any]] = []
        self._at = START

    def _tick(self) -> str:
        self._at += timedelta(minutes=7)
        return format_time(self._at)

    def add(self, op: str, **fields: Any) -> dict[str, Any]:
        """Append one event with the next time; returns it."""
        event = {"at": self._tick(), "op": op, **fields}
        self.events.append(event)
        return event

    def item(self, author: str, item_id: str, text: str, **item: Any) -> None:
        """Assert an item."""
        self.add("assert", author=author, item={"id": item_id, "text": text, **item})

    def scenario(self) -> dict[str, Any]:
        """The history as a scenario document."""
        return {
            "format": "readmit.scenario/1",
            "workspace": self.workspace,
            "agents": self.agents,
            "policy": self.policy,
            "events": list(self.events),
        }
