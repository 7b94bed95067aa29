"""Reason codes: why an item was kept out of a Return View, and why a memory stayed withheld.

The string values are a public contract (scenario output, audit log, HTTP API):
never rename or drop one; new codes may be added.
"""

from dataclasses import dataclass
from enum import StrEnum


class Reason(StrEnum):
    """Why a candidate item is not in the Return View."""

    UNAUTHORIZED = "unauthorized"
    STALE_OR_SUPERSEDED = "stale_or_superseded"
    REVOKED = "revoked"
    EXPIRED = "expired"
    NOT_YET_VALID = "not_yet_valid"
    NOT_APPLICABLE = "not_applicable"
    MISSING_RECEIPT = "missing_receipt"
    IMPLICITLY_INVALIDATED = "implicitly_invalidated"
    PREMISE_INVALIDATED = "premise_invalidated"
    OVER_ITEM_BUDGET = "over_item_budget"
    VERIFIER_UNAVAILABLE = "verifier_unavailable"
    UNSCREENED = "unscreened"
    NOT_SELECTED = "not_selected"


class Stage(StrEnum):
    """The pipeline stage that made an exclusion."""

    EXPLICIT = "explicit"
    IMPLICIT = "implicit"
    PROPAGATION = "propagation"
    GATES = "gates"
    SELECTION = "selection"


REASON_HELP: dict[Reason, str] = {
    Reason.UNAUTHORIZED: "the returning principal or role may not read the item",
    Reason.STALE_OR_SUPERSEDED: "a same-key or explicitly superseding item replaced it",
    Reason.REVOKED: "a revoke event withdrew it",
    Reason.EXPIRED: "its validity interval was closed or has ended",
    Reason.NOT_YET_VALID: "its validity interval starts after the return time",
    Reason.NOT_APPLICABLE: "its task, purpose, kind or role does not fit this return",
    Reason.MISSING_RECEIPT: "no bound receipt for it or for evidence it cites (hearsay)",
    Reason.IMPLICITLY_INVALIDATED: "a verifier confirmed that a later event changes its premise",
    Reason.PREMISE_INVALIDATED: "an item it depends on was invalidated",
    Reason.OVER_ITEM_BUDGET: "its text is longer than the per-item size budget",
    Reason.VERIFIER_UNAVAILABLE: "it was challenged and the verifier gave no answer (fail closed)",
    Reason.UNSCREENED: "the selector wanted it, but the return's judgment budget was spent "
    "before it could be screened against later events (fail closed)",
    Reason.NOT_SELECTED: "eligible, but the selector did not need it or could not fit it",
}


class MemoryReason(StrEnum):
    """Why a private memory was not readmitted at a return."""

    VIEW_WITHHELD = "view_withheld"
    SOURCE_NOT_ADMITTED = "source_not_admitted"


MEMORY_REASON_HELP: dict[MemoryReason, str] = {
    MemoryReason.VIEW_WITHHELD: "no view was issued at this return, so no private memory "
    "is readmitted, whatever its source",
    MemoryReason.SOURCE_NOT_ADMITTED: "the shared item it was learned from is not in the "
    "issued view (excluded, or not selected), so it cannot serve as a premise",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Exclusion:
    """A decided "no": one candidate kept out of the view, with its reason and evidence."""

    item: str
    reason: Reason
    stage: Stage
    evidence: tuple[str, ...] = ()
    """Ids of the events and items behind the decision."""
    detail: str = ""
    """Human-readable explanation (e.g. the verifier's stated reason and linking terms)."""
    confidence: float | None = None
    """The verifier's confidence, for implicit invalidations."""
    sighted: tuple[str, ...] = ()
    """Of ``evidence``, the events whose observation the returning agent may read whole
    (what the verifier read with the item): named to it even where the event is hidden as
    about an item it may not read, as another of its observations is
    (`readmit.admission.hidden.without`)."""
