"""Outbound shapes: what readmit sends out, one JSON shape per thing, each a TypedDict.

The HTTP API, the MCP server and ``replay --json`` render these; FastAPI publishes
them as response schemas in ``/openapi.json``. Each is closed (``extra="forbid"``):
a field a producer adds without adding it here fails validation instead of
leaking out unannounced. Optional keys are ``NotRequired`` (absent, never
``null``), because a signed view must come out exactly as it was signed. Times
are RFC 3339 in UTC with a ``Z`` (`readmit.clock.format_time`).

Producers: `item_out` and `memory_out` here; the decision record and the agent's
copy in `readmit.report`; a view's entries in `readmit.admission.view`.
"""

from typing import Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from readmit.model import Experience, Item, Kind
from readmit.reasons import MemoryReason, Reason, Stage

_CLOSED = ConfigDict(extra="forbid", use_attribute_docstrings=True)

Outcome = Literal["issued", "blocked", "reset"]
"""A decision's outcome: a view was issued, or withheld (blocked, or reset per policy)."""


@with_config(_CLOSED)
class ItemOut(TypedDict):
    """An active work-state item, as ``GET /v1/state`` shows it."""

    id: str
    text: str
    kind: Kind
    epoch: int
    """The epoch that recorded it."""
    author: str
    key: str | None
    """Identity of the thing described: a later item with the same key replaces this one."""
    supports: list[str]
    """The requirement labels it supports (matched against obligations' ``requires``)."""


def item_out(item: Item) -> ItemOut:
    """``item`` as `ItemOut`."""
    return {
        "id": item.id,
        "text": item.text,
        "kind": item.kind,
        "epoch": item.epoch,
        "author": item.author,
        "key": item.key,
        "supports": sorted(item.supports),
    }


@with_config(_CLOSED)
class MemoryOut(TypedDict):
    """A private memory of the agent's own bank."""

    id: str
    text: str
    source: str
    """The work-state item it is bound to: readmitted only when that item is in the view."""
    epoch: int


def memory_out(e: Experience) -> MemoryOut:
    """``e`` as `MemoryOut`."""
    return {"id": e.id, "text": e.text, "source": e.source_item_id, "epoch": e.epoch}


@with_config(_CLOSED)
class ExclusionOut(TypedDict):
    """Why one candidate item is not in the view."""

    item: str
    reason: Reason
    stage: Stage
    evidence: list[str]
    """The event and item ids behind the reason."""
    detail: NotRequired[str]
    confidence: NotRequired[int | float]
    """The verifier's confidence, for an implicit invalidation."""


@with_config(_CLOSED)
class RecordExclusionOut(ExclusionOut):
    """The operator's `ExclusionOut`: with the evidence its agent is shown though hidden."""

    sighted: NotRequired[list[str]]
    """Of ``evidence``, the events among ``hidden`` whose observation the agent may read
    whole (`readmit.reasons.Exclusion.sighted`): named to it (absent where none is, and in
    records logged before stop 59)."""


@with_config(_CLOSED)
class CoverageOut(TypedDict):
    """Cov and Crit: the share of obligations met and of critical requirements covered."""

    obligations: float
    critical: float


@with_config(_CLOSED)
class ThresholdsOut(TypedDict):
    """The policy's cut-offs a decision was made under: what its numbers had to reach."""

    obligations: float
    """γ: the obligation coverage (Cov) an issued view needed; 0 with the complete-view
    gate off, when a view was issued whatever the coverage."""
    critical: float
    """ρ: the critical coverage (Crit) an issued view needed; 0 with the gate off."""
    confidence: float
    """τ: the verifier confidence at or above which an implicit invalidation counted."""
    max_items: int
    """B_n: the most items the view could hold."""
    max_chars: int
    """B_c: the most characters the view could hold."""
    max_item_chars: int
    """An item longer than this was ``over_item_budget``."""


@with_config(_CLOSED)
class SupporterOut(TypedDict):
    """An excluded item that supports a missing requirement, and why it was excluded."""

    item: str
    reason: Reason


@with_config(_CLOSED)
class MissingOut(TypedDict):
    """A requirement label the selected set lacks: who needs it, what could supply it."""

    requirement: str
    obligations: list[str]
    critical: bool
    supported_by_excluded: list[SupporterOut]


@with_config(_CLOSED)
class ObligationCoverageOut(TypedDict):
    """One obligation of the returning role: its requirements, what is lacking, whether met."""

    obligation: str
    frontier: str
    requires: list[str]
    critical: list[str]
    missing: list[str]
    structure_missing: list[str]
    """The obligation's own item or frontier, when the selected set lacks it."""
    met: bool


@with_config(_CLOSED)
class WithheldMemoryOut(TypedDict):
    """Why one private memory was not readmitted."""

    id: str
    source: str
    reason: MemoryReason
    source_reason: NotRequired[Reason]
    """The source item's own exclusion reason, when it was excluded."""


@with_config(_CLOSED)
class BudgetOut(TypedDict):
    """The implicit stage's budget at this return (``null``: unlimited)."""

    calls: int | None
    tokens: int | None
    seconds: float | None
    steps: int | None
    """Walk steps (`readmit.policy.Policy.walk_steps`); ``null`` in a record logged before
    they were counted."""


@with_config(_CLOSED)
class AgentJudgmentOut(TypedDict):
    """What an agent is told of the implicit stage: what it found that the agent may see.

    With the budget it ran under, and not what it spent: its calls, pairs, tokens and
    seconds count the pairs made with events the agent may not read too, and planted words
    told which of them such an event's text held (a review's finding, stop 59). The
    operator's record keeps them.
    """

    verifier: str | None
    unscreened: int
    """The items the agent's copy lists ``unscreened``."""
    standing: int
    confirmed: int
    budget: BudgetOut


@with_config(_CLOSED)
class JudgmentOut(AgentJudgmentOut):
    """What the implicit-invalidation stage spent and found (no item ids)."""

    calls: int
    scans: int
    pairs: int
    tokens: int
    seconds: float | None
    """Seconds spent waiting on verifier calls; ``null`` without a time budget."""
    steps: int | None
    """Steps taken along chains of replacements and restatements (`BudgetOut.steps`)."""


@with_config(_CLOSED)
class ShownOut(TypedDict):
    """Of a record's invalidations, how many its agent's copy counts: those it lists."""

    standing: int
    confirmed: int


@with_config(_CLOSED)
class RecordJudgmentOut(JudgmentOut):
    """The operator's `JudgmentOut`: every invalidation counted, and what the agent is told."""

    shown: NotRequired[ShownOut]
    """The counts the agent's copy gives (absent in records logged before stop 48, whose
    agent copies give the operator's): a stored or confirmed verdict on an item it may
    not read, or on a premise outside its context, is not counted there."""


@with_config(_CLOSED)
class ReceiptOut(TypedDict):
    """The event that recorded a view item, its author, epoch and text digest."""

    event: str
    author: str
    epoch: int
    digest: str


@with_config(_CLOSED)
class ViewItemOut(TypedDict):
    """One item of a Return View, with the digest of its entry."""

    id: str
    kind: Kind
    text: str
    epoch: int
    supports: list[str]
    receipt: ReceiptOut | None
    digest: str


@with_config(_CLOSED)
class SignatureOut(TypedDict):
    """A view's signature over everything else in it (canonical JSON)."""

    alg: str
    value: str


@with_config(_CLOSED)
class SignedViewOut(TypedDict):
    """A signed Return View (format ``readmit.view/1``): check it with ``POST /v1/verify``."""

    format: Literal["readmit.view/1"]
    cycle: str
    workspace: str
    agent: str
    principal: str
    role: str
    task: str
    purpose: str
    epoch: int
    departure_epoch: int
    policy: NotRequired[str]
    """The digest of the policy the view was made under (absent in views signed before
    views named it; a view is shown exactly as signed)."""
    issued_at: str
    expires_at: str
    items: list[ViewItemOut]
    coverage: CoverageOut
    excluded: list[ExclusionOut]
    signature: SignatureOut


@with_config(_CLOSED)
class AgentDecisionOut(TypedDict):
    """What the returning agent may see of one of its decisions.

    ``POST /v1/return`` answers with it and ``GET /v1/decisions/{id}`` shows it again,
    in the same shape. Items and events the agent may not read appear nowhere in it.
    """

    outcome: Outcome
    at: str
    epoch: int
    task: NotRequired[str]
    """What the return was to: the task given, or the one the departure named (absent for
    a decision logged before readmit recorded it, as is ``purpose``)."""
    purpose: NotRequired[str]
    coverage: CoverageOut
    thresholds: NotRequired[ThresholdsOut]
    """What coverage had to reach, under the policy the return ran under (absent for a
    decision logged before readmit recorded it)."""
    missing: NotRequired[list[MissingOut]]
    """Each requirement label the selected set lacks (absent for a decision logged before
    readmit named them, as are ``obligation_coverage`` and ``withheld_memories``)."""
    obligation_coverage: NotRequired[list[ObligationCoverageOut]]
    items: list[str]
    """The ids in the view, in selection order (empty when withheld)."""
    selected: list[str]
    excluded: list[ExclusionOut]
    readmitted: list[MemoryOut]
    """The private memories readmitted with the view."""
    withheld_memories: NotRequired[list[WithheldMemoryOut]]
    judgment: AgentJudgmentOut | None
    """``null`` only for a decision logged before readmit recorded the implicit stage's work."""
    view: SignedViewOut | None
    decision: int
    """Its number among the agent's own decisions (1, 2, 3…)."""


@with_config(_CLOSED)
class DecisionRecordOut(TypedDict):
    """The operator's record of one decision (spec §7): what the audit log keeps.

    ``replay --json`` prints these. Unlike `AgentDecisionOut` it keeps every exclusion,
    the ids the agent may not see (``hidden``) and the texts the record names. This is
    what today's readmit logs; a record logged by an older one lacks some keys
    (`readmit.report.upgrade_record` says which, and restores what it exactly can).
    """

    id: NotRequired[int]
    """Its number in the audit log: in what ``replay`` returns, not in the logged body."""
    workspace: str
    cycle: str
    agent: str
    at: str
    epoch: int
    departure_epoch: int
    task: NotRequired[str]
    """The task and ``purpose`` the return was to (absent in records logged before records
    named them)."""
    purpose: NotRequired[str]
    outcome: Outcome
    coverage: CoverageOut
    thresholds: NotRequired[ThresholdsOut]
    """The policy's cut-offs it was decided under (absent in records logged before
    decisions named them: the pages then say the record does not say)."""
    items: list[str]
    selected: list[str]
    excluded: list[RecordExclusionOut]
    """Every exclusion but ``not_selected`` ones."""
    not_selected: NotRequired[list[str]]
    """The items left out only because the selector did not need or fit them (absent in
    records logged before it was split out of ``excluded``)."""
    hidden: list[str]
    judgment: RecordJudgmentOut
    missing: list[MissingOut]
    obligation_coverage: list[ObligationCoverageOut]
    readmitted: list[str]
    """The ids of the private memories readmitted."""
    withheld: list[str]
    withheld_memories: list[WithheldMemoryOut]
    texts: dict[str, str]
    view: SignedViewOut | None
