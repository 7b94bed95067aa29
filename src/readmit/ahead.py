"""Judging ahead: screen what an away agent's return will need, before it returns.

A return judges lazily, in selection order, what its view could admit
(`readmit.admission.invalidation.screening`), within the policy's budget. With a model
as the verifier that is seconds a pair, and a return after a long absence either waits
for them or withholds what its budget did not reach as ``unscreened``. While the agent
is away nothing waits: `judge_ahead` decides the return the agent would make now (its
checkpoint, what changed since, the task and purpose it returns to) without recording a
decision or issuing anything, and keeps only the judgment, as a return keeps its own
(`WorkStateStore.remember_judgment`): the invalidations it confirmed, which bind every
later return, and how far it screened each item. The return then judges only what
came after, and nothing at all when nothing did.

The work stays bounded by the view, not the store: it is the same screening a return
does, under the policy it is given. It is spent once per change, for an agent that may
never come back; `readmit serve --judge-ahead` runs it in the background once a
workspace has been quiet for a moment (`readmit.service.ahead`).
"""

from collections.abc import Callable
from datetime import datetime

from readmit.admission import admit
from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Progress, Verifier
from readmit.admission.invalidation.judgment import Judgment
from readmit.clock import format_time
from readmit.collector import paused
from readmit.events import ReturnRequest
from readmit.policy import Policy
from readmit.signing import Signer
from readmit.store.base import WorkStateStore

LEASE = "judge-ahead"
"""The lease a process holds on a workspace while it judges it ahead
(`readmit.store.leases`): of several, one at a time."""
LEASE_MARGIN_S = 60.0
"""Seconds a lease outlasts a pass's time budget: its last call may run past it (up to the
verifier's timeout), and a process that dies holding it keeps no one else out longer."""
WANTED = "return-wanted "
"""The start of the lease a return holds while it is decided, when another process judges
its workspace ahead (`readmit.service.ahead.asking`): the judge gives way to it."""
RECORDS_READ = 4
"""Decisions read back, newest first, for what an agent returns to (`returned_to`)."""


def judge_ahead(
    store: WorkStateStore,
    workspace: str,
    agent: str,
    *,
    task: str,
    purpose: str,
    policy: Policy,
    verifier: Verifier,
    signer: Signer,
    at: datetime | None = None,
    on_progress: Progress | None = None,
    embedder: Embedder | None = None,
    query: str | None = None,
    dependency_scan: DependencyScan | None = None,
    between: Callable[[], None] | None = None,
) -> Judgment:
    """Screen ``agent``'s return to ``task`` for ``purpose`` as of ``at`` (now); keep the judgment.

    Nothing is recorded in the audit log and no view leaves this call.

    ``signer`` signs the view the pipeline builds and then drops (any key will do);
    ``on_progress`` is called after each verifier call and may raise to stop early, when
    the verdicts of the calls made are kept only by a caching verifier (`with_cache`);
    ``between`` is called once the context is read and between the pipeline's stages,
    and may raise to stop there (the items decoded stay in the store's memory for the
    return that comes next).

    Raises:
        InvalidEvent: if ``agent`` has not departed.
    """
    when = store.now() if at is None else at
    request = ReturnRequest(
        id=f"ahead@{format_time(when)}", at=when, agent=agent, task=task, purpose=purpose
    )
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
            between=between,
        )
    if decision.judgment.verifier:
        store.remember_judgment(workspace, agent, ctx.epoch, decision.judgment)
    return decision.judgment


def returns_to(store: WorkStateStore, workspace: str, agent: str) -> tuple[str, str] | None:
    """What ``agent`` returns to: what its latest departure said, else `returned_to`."""
    return store.departed_for(workspace, agent, store.now()) or returned_to(store, workspace, agent)


def returned_to(store: WorkStateStore, workspace: str, agent: str) -> tuple[str, str] | None:
    """The task and purpose of ``agent``'s latest return that issued a view, if any.

    Of its last `RECORDS_READ` decisions: what it is judged ahead for when its departure
    did not say.
    """
    latest = max(0, store.decision_count(workspace, agent) - RECORDS_READ)
    for summary in reversed(store.decisions(workspace, agent, latest)):
        view = store.decision(summary.id, workspace).get("view")
        if view is not None:
            return str(view["task"]), str(view["purpose"])
    return None
