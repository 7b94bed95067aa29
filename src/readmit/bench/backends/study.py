"""Run return episodes through each backend with TRACE and score the views side by side.

For each episode and backend: a fresh readmit store and team (`team.team`), the
history written step by step at each step's time (item events through the backend;
obligations, evidence, closes and resolves recorded through the author's `Member`,
as an application states them; private experiences and departures in readmit's
store, which is where an agent's own memory and checkpoint live in every
backend), then the returner returns 30 minutes after the last event, deciding with
TRACE for the episode's task and probes, and reads everything through the backend.
VIA and IIR are scored on what those reads show, plus the experiences the decision
readmitted, with the project's metric functions, exactly as the method runner
scores a method's view. Given ``on_unbuilt``, `run` first records each episode's history
into readmit's own store, as the method runner does: an episode the store refuses is
skipped, and told, as the method runner skips it, instead of scoring 0 in each backend.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta

from readmit.admission.decision import Issued
from readmit.admission.invalidation.implicit import Verifier
from readmit.bench import metrics, runner
from readmit.bench.backends import BACKENDS
from readmit.bench.backends.base import Backend, ReadmitBackend
from readmit.bench.backends.team import Clock, Tracking, team
from readmit.bench.episode import Episode
from readmit.bench.methods import rank
from readmit.clock import parse_time
from readmit.errors import ConfigError, InvalidInput, install_hint
from readmit.events import Assert, Depart, RecordExperience, ReturnRequest, Revoke, Step, Supersede
from readmit.scenario import load_scenario


@dataclass(frozen=True, slots=True, kw_only=True)
class Played:
    """One backend's result on one episode."""

    backend: str
    suite: str
    condition: str
    episode: str
    team_size: int
    via: float
    iir: float
    outcome: str
    seconds: float
    """Wall time of the return: the decision and the reads through the backend."""
    reads: int
    writes: int
    """Calls made against the backend's own API over the whole episode."""
    gaps: list[str] = field(default_factory=list)
    error: str | None = None


def make(name: str, members: dict[str, Tracking]) -> Backend:
    """The backend called ``name`` over ``members``' store.

    Raises:
        ConfigError: for an unknown backend, or one whose extra is not installed.
    """
    try:
        match name:
            case "readmit":
                return ReadmitBackend(dict(members))
            case "langgraph":
                from readmit.bench.backends.langgraph_store import LangGraphBackend

                return LangGraphBackend(members)
            case "mem0":
                from readmit.bench.backends.mem0_bank import Mem0Backend

                return Mem0Backend(members)
    except ImportError as exc:
        raise ConfigError(f"--backend {name} needs {install_hint(name)} ({exc})") from None
    raise ConfigError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")


def _write(step: Step, members: dict[str, Tracking], backend: Backend) -> None:
    """Write one history step through the backend or the author's member."""
    match step:
        case Assert():
            backend.put(step)
        case Supersede():
            backend.replace(step)
        case Revoke():
            backend.delete(step)
        case RecordExperience():
            member = members[step.agent]
            source = member.ids.of.get(step.source, step.source)
            member.store.record_experience(member.workspace, replace(step, source=source))
        case Depart():
            members[step.agent].depart()
        case ReturnRequest():
            backend.tally.gaps.append(f"return {step.id} before the episode's own was skipped")
        case _:
            members[step.author].record([step])
    for member in members.values():
        member.pending = None


def play(episode: Episode, name: str, verifier: Verifier | None) -> Played:
    """Write ``episode`` through backend ``name``, return its agent and score the view."""
    scenario = load_scenario(episode.scenario)
    clock = Clock(parse_time(episode.scenario["events"][0]["at"]))
    members = team(scenario, verifier, clock)
    backend = make(name, members)
    query = " ".join(p.question for p in episode.probes) or episode.task
    returner = members[episode.returner]
    try:
        for step in scenario.steps:
            clock.at = step.at
            _write(step, members, backend)
        clock.at = parse_time(episode.scenario["events"][-1]["at"]) + timedelta(minutes=30)
        start = time.perf_counter()
        decided = returner.return_(episode.task, episode.purpose, query=query)
        shown = backend.read(episode.returner)
        seconds = time.perf_counter() - start
    finally:
        backend.close()
        returner.store.close()
    decision = decided.decision
    if episode.retrieve is not None:  # the reader sees the top of what was shown, as in runner
        by_id = decided.context.by_id
        policy = replace(returner.policy, max_items=episode.retrieve)
        items = [by_id[returner.ids.of.get(s, s)] for s in shown]
        back = returner.ids.back
        shown = [back.get(i, i) for i in rank(items, query, policy)]
    memories = [e.id for e in decision.readmitted] if isinstance(decision, Issued) else []
    admitted = [*shown, *memories]
    return Played(
        backend=name,
        suite=episode.suite,
        condition=episode.condition,
        episode=episode.id,
        team_size=episode.team_size,
        via=metrics.via(episode.valid, admitted),
        iir=metrics.iir(episode.invalid, admitted),
        outcome=decision.outcome,
        seconds=seconds,
        reads=backend.tally.reads,
        writes=backend.tally.writes,
        gaps=backend.tally.gaps,
    )


def run(
    episodes: Sequence[Episode],
    backends: Sequence[str],
    verifier: Verifier | None,
    on_episode: Callable[[Episode], None] | None = None,
    on_unbuilt: runner.Unbuilt | None = None,
) -> list[Played]:
    """Every backend on every episode; a backend that raises scores 0 on that episode.

    With ``on_unbuilt``, an episode whose history readmit's store refuses (`runner.context`)
    plays in no backend: it is told to ``on_unbuilt``, as `runner.run` tells it.
    """
    for name in backends:
        if name not in BACKENDS:
            raise ConfigError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
    played: list[Played] = []
    for episode in episodes:
        refused = None if on_unbuilt is None else _refused(episode)
        if on_unbuilt is not None and refused is not None:
            on_unbuilt(episode, refused)
        for name in backends if refused is None else ():
            try:
                played.append(play(episode, name, verifier))
            except ConfigError:
                raise
            except Exception as exc:
                played.append(_failed(episode, name, exc))
        if on_episode is not None:
            on_episode(episode)
    return played


def _refused(episode: Episode) -> str | None:
    """Why readmit's store refuses ``episode``'s history (`runner.context`), or ``None``."""
    try:
        runner.context(episode, load_scenario(episode.scenario))
    except InvalidInput as exc:
        return str(exc)
    return None


def _failed(episode: Episode, name: str, exc: Exception) -> Played:
    return Played(
        backend=name,
        suite=episode.suite,
        condition=episode.condition,
        episode=episode.id,
        team_size=episode.team_size,
        via=0.0,
        iir=0.0,
        outcome="failed",
        seconds=0.0,
        reads=0,
        writes=0,
        error=f"{type(exc).__name__}: {exc}",
    )
