"""What a backend does for the study: write an episode's item events, read a return's view."""

from dataclasses import dataclass, field
from typing import Protocol

from readmit.events import Assert, Revoke, Supersede
from readmit.integrations.team import Member


@dataclass
class Tally:
    """Calls the study made against a backend's own API, and what it could not express."""

    reads: int = 0
    writes: int = 0
    gaps: list[str] = field(default_factory=list)
    """One line per scenario event the backend could not express (it was skipped)."""


class Backend(Protocol):
    """One memory backend, written through by every agent of an episode's team."""

    name: str
    tally: Tally

    def put(self, event: Assert) -> None:
        """Write a new item as ``event.author``."""
        ...

    def replace(self, event: Supersede) -> None:
        """Write ``event.item`` in place of ``event.target`` as ``event.author``."""
        ...

    def delete(self, event: Revoke) -> None:
        """Delete ``event.target`` as ``event.author``."""
        ...

    def read(self, agent: str) -> list[str]:
        """The scenario ids of the items ``agent``'s reads show now (after its return)."""
        ...

    def close(self) -> None:
        """Release what the backend holds."""
        ...


class Paths:
    """Which scenario item each of a backend's slots (path, memory id) holds now."""

    def __init__(self) -> None:
        self.slot: dict[str, str] = {}
        """Scenario item id -> its slot."""
        self.holds: dict[str, str] = {}
        """Slot -> the scenario item id written there last."""

    def write(self, scenario_id: str, slot: str) -> None:
        self.slot[scenario_id] = slot
        self.holds[slot] = scenario_id

    def current(self, scenario_id: str) -> str | None:
        """The slot of ``scenario_id`` if it still holds that item (None: overwritten or gone)."""
        slot = self.slot.get(scenario_id)
        return slot if slot is not None and self.holds.get(slot) == scenario_id else None


class ReadmitBackend:
    """readmit's own store: events are recorded as they are; the view is the decision's items."""

    name = "readmit"

    def __init__(self, members: dict[str, Member]) -> None:
        self.members = members
        self.tally = Tally()

    def put(self, event: Assert) -> None:
        self._record(event)

    def replace(self, event: Supersede) -> None:
        self._record(event)

    def delete(self, event: Revoke) -> None:
        self._record(event)

    def _record(self, event: Assert | Supersede | Revoke) -> None:
        self.tally.writes += 1
        self.members[event.author].record([event])

    def read(self, agent: str) -> list[str]:
        self.tally.reads += 1  # the decision read C; its items are the view
        admitted = self.members[agent].admitted()
        return [i.id for i in admitted or []]

    def close(self) -> None:
        return None
