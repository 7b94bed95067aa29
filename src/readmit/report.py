"""A decision as JSON: what ``replay --json`` prints and the audit log keeps."""

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

from readmit.admission.context import ReturnContext
from readmit.admission.coverage import Coverage
from readmit.admission.decision import Decision, Issued
from readmit.admission.hidden import hidden_ids, redact
from readmit.admission.invalidation.judgment import Judgment
from readmit.admission.view import exclusion_json
from readmit.clock import format_time
from readmit.errors import StoreError
from readmit.model import Experience
from readmit.policy import Policy
from readmit.reasons import Exclusion, MemoryReason, Reason
from readmit.wire.decisions import record_problem

_REASON, _ITEM = attrgetter("reason"), attrgetter("item")


def decision_json(
    decision: Decision, ctx: ReturnContext, policy: Policy | None = None
) -> dict[str, Any]:
    """The spec §7 decision record, with every exclusion (including ones the agent may not see).

    ``hidden`` lists the ids the agent may not see; `readmit.admission.view.redact`
    turns the record's exclusions into what the agent is shown. ``missing`` names each
    requirement label the selected set lacks (why coverage fell short), and
    ``withheld_memories`` why each private memory was not readmitted. Items left out
    only because the selector did not need or fit them are listed by id in
    ``not_selected`` (one shared reason, no evidence): in a large workspace nearly every
    candidate is one, and a full entry each made the record grow with the store.
    ``thresholds`` are the ``policy``'s cut-offs (`thresholds_json`); `readmit.decide`
    always passes the policy, so every logged record says what it was decided under.
    """
    if isinstance(decision, Issued):
        items, selected, readmitted = decision.items, decision.items, decision.readmitted
        view: dict[str, Any] | None = decision.signed
    else:
        items, selected, readmitted, view = (), decision.selected, (), None
    thresholds = {} if policy is None else {"thresholds": thresholds_json(policy)}
    decided = decision.decided
    hidden = hidden_ids(ctx, decided)
    return {
        "workspace": ctx.workspace,
        "cycle": ctx.cycle,
        "agent": ctx.returner.agent,
        "at": format_time(ctx.returner.at),
        "epoch": ctx.epoch,
        "departure_epoch": ctx.departure.epoch,
        "task": ctx.returner.task,
        "purpose": ctx.returner.purpose,
        "outcome": decision.outcome,
        "coverage": {
            "obligations": decision.coverage.obligations,
            "critical": decision.coverage.critical,
        },
        **thresholds,
        "items": [i.id for i in items],
        "selected": [i.id for i in selected],
        "excluded": [exclusion_json(e, hidden) for e in decided],
        "not_selected": list(decision.not_selected),
        "hidden": sorted(hidden),  # unreadable items are never not_selected
        "judgment": {**judgment_json(decision.judgment), "shown": _shown(decision, hidden)},
        "missing": missing_json(decision, ctx),
        "obligation_coverage": obligation_coverage_json(decision.coverage, ctx),
        "readmitted": [e.id for e in readmitted],
        "withheld": [e.id for e in decision.withheld],
        "withheld_memories": withheld_json(decision, ctx),
        "texts": texts_json(decision, ctx, decided),
        "view": view,
    }


def thresholds_json(policy: Policy) -> dict[str, Any]:
    """The numeric cut-offs of ``policy`` a reader needs to see why a decision came out so.

    ``obligations`` and ``critical``: the coverage Cov and Crit an issued view needed (γ
    and ρ; 0 with the complete-view gate off, when any coverage issued one).
    ``confidence``: the verifier confidence an implicit invalidation needed (τ).
    ``max_items``, ``max_chars`` (B_n, B_c): the view's budgets, which left the
    ``not_selected`` items out; ``max_item_chars``: the size over which an item is
    ``over_item_budget``. The judgment budget is in ``judgment.budget``.
    """
    gate = policy.complete_view_gate
    return {
        "obligations": policy.gamma if gate else 0.0,
        "critical": policy.rho if gate else 0.0,
        "confidence": policy.threshold,
        "max_items": policy.max_items,
        "max_chars": policy.max_chars,
        "max_item_chars": policy.max_item_chars,
    }


def texts_json(
    decision: Decision, ctx: ReturnContext, decided: Sequence[Exclusion]
) -> dict[str, str]:
    """The text of each item and private memory the record names, by id.

    Items selected or excluded for a reason other than ``not_selected`` (``decided``), and
    every private memory of the agent, so ``explain`` can show what a blocked decision was
    about. The operator's record only: agents are shown texts through their view.
    """
    selected = decision.items if isinstance(decision, Issued) else decision.selected
    named = [i.id for i in selected] + [e.item for e in decided]
    texts = {i: item.text for i in named if (item := ctx.by_id.get(i)) is not None}
    texts.update({e.id: e.text for e in ctx.experiences})
    return texts


def missing_json(decision: Decision, ctx: ReturnContext) -> list[dict[str, Any]]:
    """Each requirement label S lacks: who needs it, and the excluded items that support it.

    ``supported_by_excluded`` says what would unblock the return: one of those items
    becoming admissible again (or a new item supporting the label).
    """
    coverage = decision.coverage
    out = []
    exclusions = decision.exclusions if coverage.missing else ()
    for m in coverage.missing:
        supporters = [
            {"item": e.item, "reason": str(e.reason)}
            for e in exclusions
            if (item := ctx.by_id.get(e.item)) is not None and m.requirement in item.supports
        ]
        out.append(
            {
                "requirement": m.requirement,
                "obligations": list(m.obligations),
                "critical": m.critical,
                "supported_by_excluded": supporters,
            }
        )
    return out


def obligation_coverage_json(coverage: Coverage, ctx: ReturnContext) -> list[dict[str, Any]]:
    """Each obligation of the returning role: its requirements, what S lacks, whether it is met."""
    frontiers = {o.id: o.frontier.id for o in ctx.role_obligations}
    out = []
    for o in coverage.per_obligation:
        structure = [o.obligation] if not o.record else []
        if not o.frontier:
            structure.append(frontiers[o.obligation])
        out.append(
            {
                "obligation": o.obligation,
                "frontier": frontiers[o.obligation],
                "requires": list(o.requires),
                "critical": list(o.critical),
                "missing": list(o.missing),
                "structure_missing": structure,
                "met": o.met,
            }
        )
    return out


def withheld_json(decision: Decision, ctx: ReturnContext) -> list[dict[str, Any]]:
    """Why each private memory of the returning agent was not readmitted.

    ``view_withheld`` when no view was issued; else ``source_not_admitted``. Either way
    ``source_reason`` is the source item's own exclusion reason when it was excluded.
    """
    if not decision.withheld:
        return []
    issued = isinstance(decision, Issued)
    sources = {e.source_item_id for e in decision.withheld}
    why = {e.item: str(e.reason) for e in decision.decided if e.item in sources}
    why.update((i, str(Reason.NOT_SELECTED)) for i in sources.intersection(decision.not_selected))
    return [_withheld(e, issued, why) for e in decision.withheld]


def _withheld(e: Experience, issued: bool, why: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": e.id,
        "source": e.source_item_id,
        "reason": str(MemoryReason.SOURCE_NOT_ADMITTED if issued else MemoryReason.VIEW_WITHHELD),
    }
    if e.source_item_id in why:
        out["source_reason"] = why[e.source_item_id]
    return out


def judgment_json(judgment: Judgment) -> dict[str, Any]:
    """What the implicit stage spent and found at one return (no item ids: agents see it)."""
    return {
        "verifier": judgment.verifier or None,
        "calls": judgment.calls,
        "scans": judgment.scans,
        "pairs": judgment.pairs,
        "tokens": judgment.tokens,
        # Time spent only under a time budget: without one, a record stays the same on a replay.
        "seconds": None if judgment.max_seconds is None else round(judgment.seconds, 3),
        "steps": judgment.steps,
        "unscreened": judgment.unscreened,
        "standing": judgment.standing,
        "confirmed": len(judgment.confirmed),
        "budget": {
            "calls": judgment.max_calls,
            "tokens": judgment.max_tokens,
            "seconds": judgment.max_seconds,
            "steps": judgment.max_steps,
        },
    }


def _shown(decision: Decision, hidden: frozenset[str]) -> dict[str, int]:
    """The invalidations the agent's copy lists: standing and new ones of items it may read.

    A new one of an item it may not read, or of a premise outside its context (stored,
    never listed), would tell it what it is not shown.
    """
    listed = {
        e.item
        for e in decision.decided
        if e.reason is Reason.IMPLICITLY_INVALIDATED and e.item not in hidden
    }
    confirmed = listed.intersection(e.item for e in decision.judgment.confirmed)
    return {"standing": len(listed - confirmed), "confirmed": len(confirmed)}


def upgrade_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record logged by an older readmit, in today's shape wherever that is exact.

    The audit log is never rewritten, so each record keeps the shape of the readmit
    that logged it; readers upgrade it on the way out. ``not_selected`` entries inside
    ``excluded`` (logged before they were split out) become the ``not_selected`` id
    list, a ``judgment`` without ``scans`` (logged before the dependency scan
    existed, so it made none) gets ``scans: 0``, and one without ``seconds`` (logged
    before time budgets, so under none) gets ``seconds: null`` and a budget of
    ``seconds: null``; one without ``steps`` (logged before walk steps were counted)
    gets ``steps: null`` and a budget of ``steps: null``. What an older readmit never recorded
    (``judgment``, ``missing``, ``obligation_coverage``, ``withheld_memories``,
    ``texts``, ``thresholds``) stays absent rather than invented: the policy a record
    was decided under may not have been the default, so no threshold is guessed. A view
    stays exactly as signed.

    Raises:
        StoreError: if ``record`` is in no shape readmit has logged (made up by a library
            caller before `readmit.store.base.WorkStateStore.record_decision` checked it).
    """
    problem = record_problem(record) or next(
        (f"an exclusion is {e!r}"[:200] for e in record["excluded"] if not _exclusion(e)), None
    )
    if problem is not None:
        raise StoreError(f"a logged decision record is not in the shape readmit logs: {problem}")
    out = dict(record)
    if "not_selected" not in out:
        excluded = out["excluded"]
        left = [e["item"] for e in excluded if e["reason"] == Reason.NOT_SELECTED]
        out["excluded"] = [e for e in excluded if e["reason"] != Reason.NOT_SELECTED]
        out["not_selected"] = left
    judgment = out.get("judgment")
    if judgment is not None and "scans" not in judgment:
        judgment = out["judgment"] = {**judgment, "scans": 0}
    if judgment is not None and "seconds" not in judgment:
        budget = {**judgment["budget"], "seconds": None}
        judgment = out["judgment"] = {**judgment, "seconds": None, "budget": budget}
    if judgment is not None and "steps" not in judgment:
        budget = {**judgment["budget"], "steps": None}
        out["judgment"] = {**judgment, "steps": None, "budget": budget}
    return out


def _exclusion(entry: object) -> bool:
    """Whether ``entry`` can be read as a logged exclusion (its item and reason)."""
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("item"), str)
        and isinstance(entry.get("reason"), str)
    )


def agent_copy(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the returning agent may see of its decision record.

    Its obligations are only those it may read (the store leaves the others out of
    the context), so requirement labels and obligation ids are its to see; items and
    events it may not read are removed everywhere, even as the reason a source of its
    own memory was excluded. The policy's ``thresholds`` name no item, so the agent sees
    what its coverage had to reach. A record from an older readmit is upgraded first
    (`upgrade_record`); what it never recorded is left out (``judgment`` is ``None``).
    """
    record = upgrade_record(record)
    if not isinstance(record.get("hidden"), list):  # the first readmit's: what is hidden?
        raise StoreError(
            "this decision was logged before readmit recorded what its agent may not see: "
            "only the operator's copy (readmit explain) shows it"
        )
    hidden = frozenset(record["hidden"])
    excluded = redact(record["excluded"], hidden)
    named = {k: [see(e, hidden) for e in record[k]] for k, see in _SEEN.items() if k in record}
    thresholds = {"thresholds": record["thresholds"]} if "thresholds" in record else {}
    returned_to: dict[str, Any] = {k: record[k] for k in ("task", "purpose") if k in record}
    return {
        "outcome": record["outcome"],
        "at": record["at"],
        "epoch": record["epoch"],
        **returned_to,
        "coverage": record["coverage"],
        **thresholds,
        **named,
        "items": record["items"],
        "selected": [i for i in record["selected"] if i not in hidden],
        "excluded": excluded,
        "readmitted": record["readmitted"],
        "judgment": _judgment_seen(record.get("judgment"), excluded),
        "view": record["view"],
    }


def _judgment_seen(
    judgment: Mapping[str, Any] | None, excluded: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The record's judgment as its agent is told it (`AgentJudgmentOut`).

    It counts only what the agent's copy lists (``shown``, `_shown`; the items of its
    ``excluded`` left ``unscreened``), and not what the stage spent: calls, pairs, tokens
    and seconds count the pairs made with events the agent may not read too.
    """
    if judgment is None:
        return None
    shown = judgment.get("shown") or {k: judgment[k] for k in ("standing", "confirmed")}
    unscreened = sum(e["reason"] == Reason.UNSCREENED for e in excluded)
    return {
        "verifier": judgment["verifier"],
        "unscreened": unscreened,
        **shown,
        "budget": judgment["budget"],
    }


def _missing_seen(m: Mapping[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    supporters = [s for s in m["supported_by_excluded"] if s["item"] not in hidden]
    return {**m, "supported_by_excluded": supporters}


def _obligation_seen(o: Mapping[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    return {**o, "structure_missing": [i for i in o["structure_missing"] if i not in hidden]}


def _memory_seen(m: Mapping[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in m.items() if k != "source_reason" or m["source"] not in hidden}


_SEEN = {
    "missing": _missing_seen,
    "obligation_coverage": _obligation_seen,
    "withheld_memories": _memory_seen,
}
"""What an agent may see of each entry of the record's lists that name other items."""
