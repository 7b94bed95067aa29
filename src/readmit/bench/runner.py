"""Run episodes through methods and score them: one row per (episode, method).

Each episode is recorded once into a fresh in-memory store; every method gets
the same post-absence checkpoint C. A method that raises is recorded as a
failure and kept in the denominator (it scores 0 on every metric). An episode whose
history cannot be recorded (a refused name or event) makes no row: `run` skips it and
tells the caller which and why, so one bad episode never loses the others' results.
"""

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Protocol, TypeVar

from readmit.admission.context import ReturnContext
from readmit.bench import metrics
from readmit.bench.episode import Episode
from readmit.bench.methods import MethodView, ReturnMethod, rank
from readmit.bench.reader import read
from readmit.clock import parse_time
from readmit.errors import ConfigError, InvalidInput
from readmit.events import ReturnRequest
from readmit.policy import Policy
from readmit.replay import apply_steps
from readmit.scenario import Scenario, load_scenario
from readmit.store.sqlite import SQLiteStore

Reader = Callable[[Episode, ReturnContext, MethodView], list[str | None]]
Judge = Callable[[Episode, list[str | None]], dict[str, float]]
"""Answer-level metrics of one episode from a reader's answers (an LLM judge)."""
Unbuilt = Callable[[Episode, str], None]
"""Told of an episode whose history cannot be recorded, and why (the store's refusal)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One method's result on one episode."""

    suite: str
    condition: str
    method: str
    episode: str
    team_size: int
    via: float
    iir: float
    accuracy: float | None
    """Share of probes answered correctly; ``None`` when no reader could answer."""
    outcome: str
    verifier_calls: int = 0
    tokens: int = 0
    """LLM tokens the method's decision spent (its verifier)."""
    answer_tokens: int = 0
    """LLM tokens the reader spent answering from the method's context."""
    seconds: float = 0.0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def context(episode: Episode, scenario: Scenario | None = None) -> ReturnContext:
    """C for the episode's return: its history recorded into a fresh store.

    This is the episode's one replay, and it checks the history's references as it goes
    (`load_scenario` only parses). The store is closed afterwards, so C carries no history
    loader (as in the paper's single return, every item of D_a counts as screened through
    the departure) and no store to ask what restores a verdict (each observation says).

    Raises:
        InvalidEvent: naming the first event of the history a store refuses.
    """
    scenario = scenario or load_scenario(episode.scenario)
    store = SQLiteStore(":memory:")
    try:
        apply_steps(scenario, store, on_return=None)
        last = parse_time(episode.scenario["events"][-1]["at"])
        request = ReturnRequest(
            id="return",
            at=last + timedelta(minutes=30),
            agent=episode.returner,
            task=episode.task,
            purpose=episode.purpose,
        )
        return store.return_context(scenario.workspace, request).detached()
    finally:
        store.close()


def offline_reader(episode: Episode, ctx: ReturnContext, view: MethodView) -> list[str | None]:
    """The deterministic reader of `readmit.bench.reader`."""
    epochs = {i.id: i.epoch for i in ctx.items}
    epochs.update({e.id: e.epoch for e in ctx.experiences})
    return read(episode, (*view.items, *view.memories), epochs)


def score(
    episode: Episode,
    method: ReturnMethod,
    ctx: ReturnContext,
    reader: Reader | None,
    judge: Judge | None = None,
    policy: Policy | None = None,
) -> Row:
    """Run one method on one episode and score it (a method that raises scores 0)."""
    policy = policy or load_scenario(episode.scenario).policy
    if episode.retrieve is not None:  # every method selects what the agent will read
        policy = replace(policy, max_items=episode.retrieve)
    query = " ".join(p.question for p in episode.probes) or episode.task
    start = time.perf_counter()
    error: Exception | None = None
    try:
        view = method.view(ctx, query, policy)
    except Exception as exc:
        view, error = MethodView(items=(), memories=(), outcome="failed"), exc
    view = replace(view, seconds=time.perf_counter() - start)
    if episode.retrieve is not None:
        view = replace(view, items=rank([ctx.by_id[i] for i in view.items], query, policy))
    admitted = (*view.items, *view.memories)
    extra: dict[str, Any] = {}
    if "presence" in episode.judge and error is None:
        present = set(admitted)
        extra = metrics.memora_question(
            [i in present for i in episode.judge["presence"]],
            [i not in present for i in episode.judge["forgetting"]],
        )
    accuracy = None
    start, spent = _spent(reader), 0
    if error is not None:
        accuracy = 0.0 if reader else None
    elif reader is not None and episode.probes and all(p.answer for p in episode.probes):
        answers = reader(episode, ctx, view)
        spent = _spent(reader) - start
        accuracy = metrics.mean(
            [float(a == p.answer) for a, p in zip(answers, episode.probes, strict=True)]
        )
    elif reader is not None and judge is not None and episode.probes:
        answers = reader(episode, ctx, view)
        spent = _spent(reader) - start
        judged = judge(episode, answers)
        extra.update(judged)
        probes = [judged[k] for k in ("SR", "PR", "IPA") if k in judged]
        accuracy = metrics.mean(probes) if probes else judged.get("answer_Overall")
    return Row(
        suite=episode.suite,
        condition=episode.condition,
        method=method.name,
        episode=episode.id,
        team_size=episode.team_size,
        extra=extra,
        via=0.0 if error is not None else metrics.via(episode.valid, admitted),
        iir=0.0 if error is not None else metrics.iir(episode.invalid, admitted),
        accuracy=accuracy,
        outcome=view.outcome,
        verifier_calls=view.verifier_calls,
        tokens=view.tokens,
        answer_tokens=spent,
        seconds=view.seconds,
        error=None if error is None else f"{type(error).__name__}: {error}",
    )


def _spent(reader: Reader | None) -> int:
    """Tokens the reader's model has spent so far (0 for a reader without a model)."""
    return int(getattr(getattr(reader, "__self__", None), "tokens_used", 0))


def run(
    episodes: Sequence[Episode],
    methods: Sequence[ReturnMethod],
    reader: Reader | None = offline_reader,
    on_episode: Callable[[Episode], None] | None = None,
    judge: Judge | None = None,
    threshold: float | None = None,
    on_unbuilt: Unbuilt | None = None,
) -> list[Row]:
    """Every method on every episode (with ``threshold``, every episode's τ is that).

    An episode whose history cannot be recorded is skipped and told to ``on_unbuilt``;
    without one, the refusal is raised.

    Raises:
        InvalidInput: the first episode's refusal, when there is no ``on_unbuilt``.
    """
    rows: list[Row] = []
    for episode in episodes:
        try:
            scenario = load_scenario(episode.scenario)  # parsed; context() replays it, once
            ctx = context(episode, scenario)
        except InvalidInput as exc:
            if on_unbuilt is None:
                raise
            on_unbuilt(episode, str(exc))
        else:
            policy = scenario.policy
            if threshold is not None:
                policy = replace(policy, threshold=threshold)
            rows.extend(score(episode, method, ctx, reader, judge, policy) for method in methods)
        if on_episode is not None:
            on_episode(episode)
    return rows


class Grouped(Protocol):
    """What `sample_each` and `of_conditions` read of an episode, built (`Episode`) or not."""

    @property
    def suite(self) -> str: ...
    @property
    def condition(self) -> str: ...
    @property
    def team_size(self) -> int: ...


E = TypeVar("E", bound=Grouped)


def of_conditions(episodes: Sequence[E], conditions: Sequence[str]) -> list[E]:
    """The episodes of these conditions.

    Raises:
        ConfigError: naming the conditions no episode has, and those they have.
    """
    known = {e.condition for e in episodes}
    unknown = sorted(set(conditions) - known)
    if unknown:
        listed = ", ".join(sorted(known))
        raise ConfigError(f"unknown condition(s) {unknown} (known: {listed})")
    return [e for e in episodes if e.condition in conditions]


def sample_each(episodes: Sequence[E], n: int, seed: int) -> list[E]:
    """At most ``n`` episodes of each (suite, condition, team size), in their original order.

    The draw reads only each episode's group and place, so the same episodes are drawn
    whether they are built or only planned (`readmit.bench.episode.Planned`).
    """
    groups: dict[tuple[str, str, int], list[int]] = {}
    for k, e in enumerate(episodes):
        groups.setdefault((e.suite, e.condition, e.team_size), []).append(k)
    keep: set[int] = set()
    for key, members in sorted(groups.items()):
        rng = random.Random(f"sample/{seed}/{key}")  # a reproducible draw
        keep.update(rng.sample(members, min(n, len(members))))
    return [e for k, e in enumerate(episodes) if k in keep]


def scoring_notes(episodes: Sequence[Episode], with_llm: bool) -> list[str]:
    """What a report of ``episodes`` says of how they were scored: where no answer was.

    Overall needs an LLM where a probe has no answer set; elsewhere it comes from
    `offline_reader` when there is no LLM.
    """
    suites = sorted({e.suite for e in episodes})
    notes = []
    if not with_llm:
        free = sorted({e.suite for e in episodes if any(not p.answer for p in e.probes)})
        if free:
            notes.append(
                f"Overall not computed for {', '.join(free)}: answering and judging "
                "need an LLM (--llm MODEL@URL); VIA/IIR there are admission-level."
            )
        scored = [s for s in suites if s not in free]
        if scored:
            notes.append(
                f"Overall for {', '.join(scored)} comes from the offline reader (the "
                "most recent admitted value for each probe, else a seeded guess)."
            )
    return notes
