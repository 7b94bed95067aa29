"""One return, end to end: build C, run the pipeline, keep the decision in the audit log.

Every path that decides a return (a replayed scenario, the service's agents over HTTP
and MCP, an in-process team member of an integration) goes through `decide`, so each
records the same thing the same way.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from readmit.admission import admit
from readmit.admission.context import ReturnContext
from readmit.admission.decision import Decision, Issued
from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Progress, Verifier
from readmit.clock import elapsed
from readmit.collector import paused
from readmit.errors import DepartedMeanwhile
from readmit.events import ReturnRequest
from readmit.policy import Policy
from readmit.report import decision_json
from readmit.signing import Signer
from readmit.store.base import WorkStateStore


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision, the context it was made on, and its audit record (with its ``id``)."""

    decision: Decision
    context: ReturnContext
    record: dict[str, Any]
    own: int | None = None
    """The agent's own number for it (its decisions counted from 1, as HTTP, MCP and
    ``readmit explain --agent`` number them), when the caller looked it up
    (`readmit.integrations.team.Member` does)."""

    @property
    def id(self) -> int:
        """The decision's number in its workspace's audit log."""
        return int(self.record["id"])

    @property
    def number(self) -> int:
        """The number the agent knows it by: `own` when looked up, else `id`."""
        return self.id if self.own is None else self.own

    @property
    def view(self) -> dict[str, Any] | None:
        """The signed Return View as JSON-ready data, or ``None`` when none was issued."""
        return self.decision.signed if isinstance(self.decision, Issued) else None


def decide(
    store: WorkStateStore,
    workspace: str,
    request: ReturnRequest | Callable[[], ReturnRequest],
    *,
    policy: Policy,
    verifier: Verifier | None,
    signer: Signer,
    on_progress: Progress | None = None,
    embedder: Embedder | None = None,
    query: str | None = None,
    dependency_scan: DependencyScan | None = None,
    before_record: Callable[[], None] | None = None,
    waited: float = 0.0,
    between: Callable[[], None] | None = None,
) -> Decided:
    """Decide ``request`` on ``store`` and append the decision to its audit log.

    ``before_record`` runs between the decision and the audit record: raising there
    (a client that went away) leaves nothing recorded; so does raising in ``between``,
    called once the context is read and between the pipeline's stages (`admit`).
    ``waited``: seconds the return waited for its turn, counted against the policy's time
    budget (`admit`).
    ``request.policy`` (overrides, as a scenario's return gives them) applies to this
    return. The record names the policy's thresholds (`readmit.report.thresholds_json`), so
    ``explain`` shows what coverage a view needed under the policy this return ran under.

    A departure of the agent recorded while its return was decided (by another process or
    thread) is found as the decision is recorded: the return is decided again, on that
    departure, as if it had come first. ``request`` may be a function that makes it: it is
    called for each try, so a return to what the departure said is to the latest one's.
    The time of the tries before counts against the policy's time budget.

    Raises:
        ConfigError: if ``request.policy`` names an unknown setting or a bad value.
        DepartedMeanwhile: if the agent departed again during each of `ATTEMPTS` tries.
    """
    started = elapsed()
    for attempt in range(1, ATTEMPTS + 1):
        made = request() if callable(request) else request
        chosen = policy.with_overrides(dict(made.policy)) if made.policy else policy
        spent = waited + elapsed() - started
        steps = (on_progress, embedder, query, dependency_scan, before_record, spent, between)
        try:
            return _decided(store, workspace, made, chosen, verifier, signer, *steps)
        except DepartedMeanwhile:
            if attempt == ATTEMPTS:
                raise
    raise AssertionError("unreachable: the last try returns or raises")


ATTEMPTS = 3
"""Tries `decide` makes when the agent departs again while its return is decided."""


def _decided(
    store: WorkStateStore,
    workspace: str,
    request: ReturnRequest,
    policy: Policy,
    verifier: Verifier | None,
    signer: Signer,
    on_progress: Progress | None,
    embedder: Embedder | None,
    query: str | None,
    dependency_scan: DependencyScan | None,
    before_record: Callable[[], None] | None,
    waited: float,
    between: Callable[[], None] | None,
) -> Decided:
    with paused():  # none of the return's many objects forms a cycle (`readmit.collector`)
        ctx = store.return_context(workspace, request)
        if between is not None:
            between()
        decision = admit(
            ctx,
            policy=policy,
            verifier=verifier,
            signer=signer,
            on_progress=on_progress,
            embedder=embedder,
            query=query,
            dependency_scan=dependency_scan,
            waited=waited,
            between=between,
        )
        if before_record is not None:
            before_record()
        record = decision_json(decision, ctx, policy)
        record["id"] = store.record_decision(
            workspace,
            request.agent,
            request.at,
            ctx.epoch,
            decision.outcome,
            record,
            judgment=decision.judgment,
            departure=ctx.departure,
        )
    return Decided(decision, ctx, record)
