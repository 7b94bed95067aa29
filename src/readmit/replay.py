"""Replay a scenario on a store: record its history and run the pipeline at every return."""

from collections.abc import Callable

from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Progress, Verifier
from readmit.admission.view import view_expiry
from readmit.decide import Decided, decide
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import (
    Assert,
    Depart,
    Event,
    RecordExperience,
    Resolve,
    ReturnRequest,
    Step,
    Supersede,
)
from readmit.scenario import Scenario
from readmit.signing import Signer
from readmit.store.base import WorkStateStore
from readmit.store.sqlite import SQLiteStore

OnReturn = Callable[[ReturnRequest], None]


def check_references(scenario: Scenario) -> None:
    """Check every reference of ``scenario`` by recording it on a throwaway in-memory store.

    Authors, agents, targets, premises, cited evidence, experience sources and returns
    without a departure are judged by the store itself, so a scenario is refused for
    exactly what a store would refuse, with the same message, naming the event.

    Raises:
        InvalidEvent: naming the first event a store refuses.
    """
    store = SQLiteStore(":memory:")
    try:
        apply_steps(scenario, store, on_return=None)
    finally:
        store.close()


def apply_steps(scenario: Scenario, store: WorkStateStore, on_return: OnReturn | None) -> None:
    """Record every step; consecutive shared-state events are appended as one batch."""
    store.create_workspace(scenario.workspace, scenario.agents)
    batch: list[Event] = []
    try:
        for step in (*scenario.steps, None):
            if step is not None and not isinstance(step, RecordExperience | Depart | ReturnRequest):
                batch.append(step)
                continue
            if batch:
                store.append(scenario.workspace, batch)
                batch = []
            if step is not None:
                _act(scenario, store, step, on_return)
    except InvalidEvent as exc:
        raise _unreadable(scenario, exc) from None


def _unreadable(scenario: Scenario, exc: InvalidEvent) -> InvalidEvent:
    """``exc``, told why the item it names as unknown is unknown, where the scenario has it.

    The store says "no known item" of an item its reader may not read, so as not to tell
    that it exists; in the operator's own scenario the cause may be the item's readers
    (often a misspelled one, which `unknown_readers` warned of), an item made only later
    or by this very event, or an item where an obligation or evidence belongs.
    """
    steps = scenario.steps
    made: dict[str, tuple[int, Assert | Supersede]] = {}
    for i, s in enumerate(steps):
        if isinstance(s, Assert | Supersede):
            made.setdefault(s.item.id, (i, s))  # a second one is refused as a taken id
    at = next((i for i, s in enumerate(steps) if s.id == exc.event_id), None)
    if exc.unknown not in made or at is None:
        return exc
    why = _why_unknown(scenario, exc, made[exc.unknown], at)
    if why is None:
        return exc
    return InvalidEvent(
        exc.event_id, f"{exc.problem} ({why})", unknown=exc.unknown, fields=exc.fields
    )


def _why_unknown(
    scenario: Scenario, exc: InvalidEvent, made: tuple[int, Assert | Supersede], at: int
) -> str | None:
    """Why step ``at`` may not name the item ``made`` (its step, and the step's index).

    None if the scenario does not tell: the store's own words are then all there is.
    """
    (index, maker), step = made, scenario.steps[at]
    if "item.cites" in exc.fields:
        return f"it is an item, from event {maker.id!r}: cites names 'evidence' events"
    if isinstance(step, Resolve):
        return (
            f"it is an item, from event {maker.id!r}, not an obligation: resolve closes one "
            "opened by an 'obligation' event; 'revoke' or 'close' withdraws an item"
        )
    if index > at:
        return f"the scenario makes it later, in event {maker.id!r}: refer only to earlier items"
    if index == at and "item.depends_on" in exc.fields:
        return "it is the item this event makes: an item cannot depend on itself"
    if index == at:
        return "it is the item this event makes: refer only to earlier items"
    if not _may_read(scenario, maker, step):
        return (
            f"the scenario has it, from event {maker.id!r}, but its readers leave this "
            "event's agent out: check them"
        )
    return None


def _may_read(scenario: Scenario, maker: Assert | Supersede, step: Step) -> bool:
    """Whether the agent of ``step`` is among the readers of the item ``maker`` makes."""
    agents = {a.id: a for a in scenario.agents}
    author = agents.get(maker.author)
    agent = agents.get(
        step.agent if isinstance(step, RecordExperience | Depart | ReturnRequest) else step.author
    )
    if author is None or agent is None:
        return True  # the store refuses an unknown agent in its own words
    item = maker.item.materialize(
        event_id=maker.id, author=author.id, principal=author.principal, epoch=1
    )
    return item.scope.readable_by(agent.principal, agent.role)


def _act(scenario: Scenario, store: WorkStateStore, step: Step, on_return: OnReturn | None) -> None:
    try:
        match step:
            case RecordExperience():
                store.record_experience(scenario.workspace, step)
            case Depart():
                store.depart(scenario.workspace, step.agent, step.at)
            case ReturnRequest() if on_return is not None:
                on_return(step)
            case ReturnRequest():
                store.return_context(scenario.workspace, step)  # checks the return is valid
                view_expiry(step.at, scenario.policy_for(step))  # and that a view could be
    except InvalidEvent as exc:
        raise InvalidEvent(step.id, exc.problem, unknown=exc.unknown, fields=exc.fields) from None
    except InvalidInput as exc:
        raise InvalidEvent(step.id, str(exc)) from None


def replay(
    scenario: Scenario,
    store: WorkStateStore,
    *,
    verifier: Verifier | None,
    signer: Signer,
    on_progress: Progress | None = None,
    embedder: Embedder | None = None,
    dependency_scan: DependencyScan | None = None,
) -> list[Decided]:
    """Run ``scenario`` on ``store``; return one `Decided` per ``return`` event, in order.

    Each holds the typed decision (`Issued` or `Withheld`, with its exclusions), its
    ``id`` in the audit log, its signed ``view`` (``None`` when withheld), the context it
    was made on and its JSON ``record`` (what ``readmit replay --json`` prints).

    Every reference is checked first (`check_references`), so a scenario the store would
    refuse halfway writes nothing. Every decision is also appended to the store's audit log.
    """
    check_references(scenario)
    decisions: list[Decided] = []

    def on_return(request: ReturnRequest) -> None:
        decided = decide(
            store,
            scenario.workspace,
            request,
            policy=scenario.policy_for(request),
            verifier=verifier,
            signer=signer,
            on_progress=on_progress,
            embedder=embedder,
            dependency_scan=dependency_scan,
        )
        decisions.append(decided)

    apply_steps(scenario, store, on_return)
    return decisions
