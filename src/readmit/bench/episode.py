"""Return episodes: a workspace history up to one return, and what the evaluator knows.

The history is a ``readmit.scenario/1`` document (what the agents saw). Everything
else on `Episode` is evaluator-only and never reaches a method or an agent.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """A question the returning agent must answer from what it was given."""

    id: str
    question: str
    answer: str
    """The correct answer now (evaluator-only)."""
    options: tuple[str, ...] = ()
    """Possible answers; a reader with no evidence guesses among them."""
    key: str | None = None
    """For the offline reader: which recorded values answer this probe."""
    stale_answer: str | None = None
    """The answer the departure state would give, if different (for RSR)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Episode:
    """One return of one agent to a changed workspace."""

    id: str
    suite: str
    condition: str
    scenario: dict[str, Any]
    """The history as data, ending just before the return."""
    returner: str
    task: str = "work"
    purpose: str = "work"
    valid: frozenset[str] = frozenset()
    """Item and memory ids still valid at return that the agent needs (for VIA)."""
    invalid: frozenset[str] = frozenset()
    """Item and memory ids invalidated during the absence (for IIR)."""
    probes: tuple[Probe, ...] = ()
    values: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Item or memory id → (probe key, the answer it supports), for the offline reader."""
    derive: dict[str, dict[str, str]] = field(default_factory=dict)
    """Rule item id → {probe key: answer}: what an admitted rule lets a reader infer."""
    retrieve: int | None = None
    """If set, the reader sees only this many of a method's items, ranked by the probes
    (retrieval from the admitted state, the same for every method)."""
    team_size: int = 4
    seed: int = 0
    judge: dict[str, Any] = field(default_factory=dict)
    """Benchmark-native judge material (criteria, M_old/M_new): evaluator-only."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Planned:
    """An episode not built yet: what filtering and sampling read, and how to build it.

    A loader plans every episode of its data cheaply; ``readmit bench`` builds only those
    it chose to run (``--sample`` builds a few of a large file's, not all).
    """

    id: str
    suite: str
    condition: str
    team_size: int
    build: Callable[[], Episode]
    """Makes the episode; each call makes it anew."""

    @classmethod
    def of(cls, episode: Episode) -> "Planned":
        """An episode already built, planned."""
        return cls(
            id=episode.id,
            suite=episode.suite,
            condition=episode.condition,
            team_size=episode.team_size,
            build=lambda: episode,
        )
