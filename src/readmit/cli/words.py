"""The plain words both renderings of a decision use (the text tables and the HTML page).

One place for what each stage checks, what would let an excluded item (or a new one)
cover a missing label, and what the record's own terms mean, so ``explain`` in a
terminal and the page say the same thing. Backticks mark a field or value to type; the
page shows them as code.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from readmit.policy import Policy
from readmit.reasons import Reason, Stage

STAGE_HELP: dict[Stage, str] = {
    Stage.EXPLICIT: "the team said so: a revoke, close or supersede event, or a newer item "
    "with the same key",
    Stage.IMPLICIT: "a verifier read what changed while the agent was away and judged that a "
    "later event breaks the item's premise",
    Stage.PROPAGATION: "something the item depends on was excluded, so it falls too",
    Stage.GATES: "per-item checks: who may read it (A), whether it is valid now (T), "
    "whether it fits this task and role (U), whether a receipt proves where it came from (P), "
    "and its size",
    Stage.SELECTION: "the item was fine, but the view has a budget and did not need it",
}
"""What each pipeline stage checks, in words."""

RECEIPT = (
    "any item asserted without `unconfirmed: true` whose `cites` were all recorded "
    "gets one automatically"
)
"""How an item gets a receipt, said where the word first appears."""

UNCONFIRMED_FIX = (
    "it was asserted with `unconfirmed: true` (hearsay, so no receipt): once it is "
    "confirmed, assert it again without `unconfirmed: true`"
)
CITES_FIX = (
    "it cites evidence that was never recorded: record the evidence it cites "
    "(an `evidence` event for each id in its `cites`)"
)

UNBLOCK: dict[Reason, str] = {
    Reason.IMPLICITLY_INVALIDATED: "it stays out while its premise is broken: record a new "
    "item that states the current fact",
    Reason.PREMISE_INVALIDATED: "fix or replace the item it depends on",
    Reason.REVOKED: "record a new item that states the current fact",
    Reason.STALE_OR_SUPERSEDED: "its replacement must support the label instead",
    Reason.EXPIRED: "record a new item that is valid now",
    Reason.NOT_YET_VALID: "wait until it becomes valid, or record one valid now",
    Reason.UNAUTHORIZED: "an item this agent may read must support the label",
    Reason.NOT_APPLICABLE: "an item for this task, purpose and role must support the label",
    Reason.OVER_ITEM_BUDGET: "shorten it, or raise the policy's max_item_chars",
    Reason.VERIFIER_UNAVAILABLE: "return again when the verifier answers",
    Reason.UNSCREENED: "return again (it screens what this return did not reach), or raise "
    "the judgment budget (max_judgments, max_judgment_tokens, max_judgment_seconds)",
    Reason.NOT_SELECTED: "raise the view's budgets (max_items, max_chars)",
}
"""For an excluded item that supports a missing label: what would let it, or a
replacement, cover the label (``missing_receipt`` depends on the item: `fix_for`)."""


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural but for one ("1 item", "3 items")."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def fix_for(reason: str, evidence: Sequence[str]) -> str:
    """What would let an item excluded for ``reason`` cover a missing label ('' if unknown).

    A ``missing_receipt`` exclusion names the event that recorded the item when the item
    has a receipt, so then its cited evidence is what is missing; with no evidence the
    item has no receipt: it was asserted as ``unconfirmed`` hearsay.
    """
    if reason == Reason.MISSING_RECEIPT:
        return CITES_FIX if evidence else UNCONFIRMED_FIX
    try:
        return UNBLOCK.get(Reason(reason), "")
    except ValueError:
        return ""


def supporter_fixes(record: Mapping[str, Any]) -> dict[str, str]:
    """Item id → `fix_for` its exclusion, for every excluded item of ``record``."""
    return {e["item"]: fix_for(e["reason"], e["evidence"]) for e in record["excluded"]}


NEXT_RETURN = "What would let the next return issue a view"

OUTCOME_HELP = {
    "issued": "A signed view was issued: the agent may act on exactly the items below.",
    "blocked": "No view was issued: the items that are still valid do not cover what the "
    "agent's open obligations require, so it must not act on its old memory until they do.",
    "reset": "No view was issued and the agent starts over from the current shared state: "
    "the items that are still valid do not cover what its open obligations require.",
}

TERMS = {
    "coverage (obligations)": "the share of the agent's open obligations whose record, "
    "progress frontier and every required label are in the selected set (Cov)",
    "coverage (critical)": "the share of critical requirement labels the selected set "
    "supports (Crit); a view is issued only when both reach the policy's thresholds "
    "(γ for Cov, ρ for Crit)",
    "selected set": "the items the selector picked for the view: every obligation of the "
    "agent's role and its frontier first, then the items that pass every check and cover "
    "the most still-missing labels, within the view's budgets",
    "obligation": "work the returning agent's role must continue, with the requirement "
    "labels it needs",
    "frontier": "the obligation's progress marker: what is still unresolved",
    "requirement label": "a name such as d_p for something an obligation needs; an item "
    "covers it when its supports list holds the label",
    "receipt": "proof of where an item came from (the event that recorded it, its author, "
    f"a digest of its text); {RECEIPT}",
    "epoch": "the revision number of the shared state; every recorded event advances it",
    "threshold τ": "the verifier confidence from which its judgment that a later event "
    "breaks an item's premise counts (an implicit invalidation)",
    "evidence": "the ids of the events and items behind an exclusion",
    "private memory": "something one agent learned privately, bound to the shared item it "
    "came from; it comes back only if that item is in the issued view",
    "operator's copy": "the whole decision record, as the audit log keeps it; the agent's "
    "own copy (over HTTP or MCP) leaves out every item and event it may not read",
}


def hidden_split(record: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The record's ``hidden`` ids, as (items, events): what the agent is not shown.

    Items it may not read; events that stated or withdrew one, or that the agent is not
    told of (another principal's evidence, one from before its departure that no item of
    its context came from: `readmit.admission.hidden`).
    """
    hidden = record.get("hidden") or []
    items = {e["item"] for e in record["excluded"]}
    # A propagation names the premise that fell: one the agent may not read is hidden too.
    items.update(
        p for e in record["excluded"] if e["stage"] == "propagation" for p in e["evidence"]
    )
    return [h for h in hidden if h in items], [h for h in hidden if h not in items]


def selected_supports(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each selected item's requirement labels (from `readmit.cli.history`, else the view)."""
    supports: dict[str, list[str]] = dict(record.get("supports") or {})
    for item in (record.get("view") or {}).get("items", []):
        supports.setdefault(item["id"], list(item.get("supports") or []))
    return supports


def thresholds(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """The coverage a view needed, (obligations, critical) as text, if the record says.

    Every record `readmit.decide` logs says (``thresholds``, the policy the return ran
    under); one logged by an older readmit does not, and then it is `UNRECORDED`.
    """
    t = record.get("thresholds")
    if not t:
        return None
    return f"{t['obligations']:.2f}", f"{t['critical']:.2f}"


_DEFAULT = Policy()
UNRECORDED = (
    "this record, logged by an older readmit, does not say what coverage its policy "
    f"needed; the policy's default is {_DEFAULT.gamma:.2f} for obligations and "
    f"{_DEFAULT.rho:.2f} for critical"
)
"""Said instead of the thresholds for a record that does not name them."""


def exclusion_notes(exclusion: Mapping[str, Any], record: Mapping[str, Any]) -> list[str]:
    """The numbers behind ``exclusion``: the verifier's confidence, and the policy's cut-off.

    τ for a verifier's judgment (an exclusion with a confidence), ``max_item_chars`` for
    an item over the size budget; a cut-off only when ``record`` names its thresholds.
    """
    notes = (
        [f"confidence {float(exclusion['confidence']):.2f}"] if "confidence" in exclusion else []
    )
    t = record.get("thresholds")
    if t and "confidence" in exclusion:
        notes.append(f"threshold τ {t['confidence']:.2f}")
    elif t and exclusion["reason"] == Reason.OVER_ITEM_BUDGET:
        notes.append(f"the limit is {t['max_item_chars']} characters (max_item_chars)")
    return notes


def budget(record: Mapping[str, Any]) -> str:
    """The view's budget as words (``32 items and 8192 characters``), '' if not recorded."""
    t = record.get("thresholds")
    return f"{t['max_items']} items and {t['max_chars']} characters" if t else ""
