"""A decision as JSON: what ``replay --json`` prints and the audit log keeps."""

from typing import Any

from readmit.admission.context import ReturnContext
from readmit.admission.decision import Decision, Issued
from readmit.admission.invalidation.screening import Judgment
from readmit.admission.view import exclusion_json, hidden_ids
from readmit.clock import format_time


def decision_json(decision: Decision, ctx: ReturnContext) -> dict[str, Any]:
    """The spec §7 decision record, with every exclusion (including ones the agent may not see).

    ``hidden`` lists the ids the agent may not see; `readmit.admission.view.redact`
    turns the record's exclusions into what the agent is shown.
    """
    if isinstance(decision, Issued):
        items, selected, readmitted = decision.items, decision.items, decision.readmitted
        view: dict[str, Any] | None = decision.signed
    else:
        items, selected, readmitted, view = (), decision.selected, (), None
    return {
        "workspace": ctx.workspace,
        "cycle": ctx.cycle,
        "agent": ctx.returner.agent,
        "at": format_time(ctx.returner.at),
        "epoch": ctx.epoch,
        "departure_epoch": ctx.departure.epoch,
        "outcome": decision.outcome,
        "coverage": {
            "obligations": decision.coverage.obligations,
            "critical": decision.coverage.critical,
        },
        "items": [i.id for i in items],
        "selected": [i.id for i in selected],
        "excluded": [exclusion_json(e) for e in decision.exclusions],
        "hidden": sorted(hidden_ids(ctx, decision.exclusions)),
        "judgment": judgment_json(decision.judgment),
        "readmitted": [e.id for e in readmitted],
        "withheld": [e.id for e in decision.withheld],
        "view": view,
    }


def judgment_json(judgment: Judgment) -> dict[str, Any]:
    """What the implicit stage spent and found at one return (no item ids: agents see it)."""
    return {
        "verifier": judgment.verifier or None,
        "calls": judgment.calls,
        "scans": judgment.scans,
        "pairs": judgment.pairs,
        "tokens": judgment.tokens,
        "unscreened": judgment.unscreened,
        "standing": judgment.standing,
        "confirmed": len(judgment.confirmed),
        "budget": {"calls": judgment.max_calls, "tokens": judgment.max_tokens},
    }
