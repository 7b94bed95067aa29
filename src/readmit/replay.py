"""Replay a scenario on a store: record its history and run the pipeline at every return."""

from collections.abc import Callable

from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Progress, Verifier
from readmit.admission.view import view_expiry
from readmit.decide import Decided, decide
from readmit.errors import InvalidEvent, InvalidInput
from readmit.events import Assert, Depart, Event, RecordExperience, ReturnRequest, Step, Supersede
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
    """``exc``, told that the item it names as unknown is the scenario's own, where it is.

    The store says "no known item" of an item its reader may not read, so as not to tell
    that it exists; in the operator's own scenario the cause is the item's readers (often
    a misspelled one, which `unknown_readers` warned of), or an item made only later.
    """
    steps = scenario.steps
    made = {s.item.id: i for i, s in enumerate(steps) if isinstance(s, Assert | Supersede)}
    at = next((i for i, s in enumerate(steps) if s.id == exc.event_id), None)
    if exc.unknown not in made or at is None:
        return exc
    maker = steps[made[exc.unknown]].id
    if made[exc.unknown] > at:
        why = f"the scenario makes it later, in event {maker!r}: refer only to earlier items"
    else:
        why = f"the scenario has it, from event {maker!r}, but its readers leave this "
        why += "event's agent out: check them"
    return InvalidEvent(
        exc.event_id, f"{exc.problem} ({why})", unknown=exc.unknown, fields=exc.fields
    )


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
