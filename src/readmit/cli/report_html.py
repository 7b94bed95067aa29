"""One decision as a self-contained HTML page, readable without the paper.

``readmit explain ID --html FILE`` and ``readmit replay FILE --html DIR`` write it:
the view's items, each exclusion with its reason, stage, evidence and the verifier's
reason, coverage per obligation with what is missing, the private memories readmitted
and withheld, and a plain-language key to every code on the page. Inline CSS, no
script, nothing loaded from elsewhere; every piece of text from the record is escaped.
"""

from collections.abc import Iterable, Mapping
from html import escape
from pathlib import Path
from typing import Any

from readmit.errors import InvalidInput
from readmit.reasons import MEMORY_REASON_HELP, REASON_HELP, MemoryReason, Reason, Stage

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

UNBLOCK: dict[Reason, str] = {
    Reason.MISSING_RECEIPT: "record the evidence it cites, or record it again with a receipt "
    "(not as unconfirmed hearsay)",
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
    Reason.UNSCREENED: "return again, or raise the judgment budget (max_judgments)",
    Reason.NOT_SELECTED: "raise the view's budgets (max_items, max_chars)",
}
"""For an excluded item that supports a missing label: what would let it, or a
replacement, cover the label."""

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
    "supports (Crit); a view is issued only when both reach the policy's thresholds",
    "obligation": "work the returning agent's role must continue, with the requirement "
    "labels it needs",
    "frontier": "the obligation's progress marker: what is still unresolved",
    "requirement label": "a name such as d_p for something an obligation needs; an item "
    "covers it when its supports list holds the label",
    "epoch": "the revision number of the shared state; every recorded event advances it",
    "evidence": "the ids of the events and items behind an exclusion",
    "private memory": "something one agent learned privately, bound to the shared item it "
    "came from; it comes back only if that item is in the issued view",
}

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;
max-width:70rem;padding:0 1rem;color:#1d2330;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #d5d9e0;padding-bottom:.2rem}
.outcome{display:inline-block;padding:.15rem .6rem;border-radius:.3rem;font-weight:700;
color:#fff}.issued{background:#1f7a3a}.blocked,.reset{background:#b3261e}
.summary{background:#f4f6fa;border-left:4px solid #6b7a99;padding:.6rem 1rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0;font-size:.93rem}
th,td{border:1px solid #d5d9e0;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f6}code{background:#eef1f6;padding:0 .25rem;border-radius:.2rem}
.yes{color:#1f7a3a;font-weight:600}.no{color:#b3261e;font-weight:600}
.muted{color:#5b6475}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}
dt{font-weight:600}dd{margin:0}
"""

_LISTED = 50
"""``not_selected`` ids a page names; the rest are counted."""


def decision_html(record: Mapping[str, Any], texts: Mapping[str, str] | None = None) -> str:
    """The page for one decision record (as ``replay --json`` prints it or the store keeps it)."""
    texts = {**record.get("texts", {}), **(texts or {})}
    view = record.get("view") or {}
    texts.update({i["id"]: i["text"] for i in view.get("items", [])})
    outcome = str(record["outcome"])
    title = f"Return of {record['agent']} at {record['at']}: {outcome}"
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p><span class="outcome {_e(outcome)}">{_e(outcome.upper())}</span> '
        f'<span class="muted">workspace {_e(record["workspace"])}, epoch {_e(record["epoch"])} '
        f"(the agent left at epoch {_e(record['departure_epoch'])})</span></p>",
        f'<div class="summary"><p>{_e(OUTCOME_HELP.get(outcome, ""))}</p>{_summary(record)}</div>',
        *_missing(record, texts),
        *_obligations(record),
        *_kept(record, texts, outcome),
        *_excluded(record, texts),
        *_memories(record, texts),
        *_judgment(record),
        *_key(record),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + '\n<p class="muted">Made by readmit explain. The terms and a worked example are in '
        "docs/concepts.md of the readmit project.</p>\n</body></html>\n"
    )


def write_html(
    path: Path, record: Mapping[str, Any], texts: Mapping[str, str] | None = None
) -> None:
    """Write ``record``'s page to ``path``.

    Raises:
        InvalidInput: if the file cannot be written.
    """
    try:
        path.write_text(decision_html(record, texts), encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"--html: cannot write {path}: {exc.strerror or exc}") from None


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _summary(record: Mapping[str, Any]) -> str:
    cov = record["coverage"]
    line = (
        f"<p>Coverage: obligations {cov['obligations']:.2f}, critical {cov['critical']:.2f} "
        "(1.00 means fully covered)."
    )
    missing = record.get("missing") or []
    if missing:
        labels = ", ".join(f"<code>{_e(m['requirement'])}</code>" for m in missing)
        line += f" Nothing in the selected set supports {labels}."
    return line + "</p>"


def _table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A table; ``rows`` cells are already escaped HTML."""
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def _item(item_id: str, texts: Mapping[str, str]) -> str:
    text = texts.get(item_id)
    return f"<code>{_e(item_id)}</code>" + (f" {_e(text)}" if text else "")


def _reason(code: str) -> str:
    try:
        help_ = REASON_HELP[Reason(code)]
    except ValueError:
        help_ = ""
    return f"<code>{_e(code)}</code>" + (f": {_e(help_)}" if help_ else "")


def _missing(record: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    missing = record.get("missing") or []
    if not missing:
        return []
    rows = []
    for m in missing:
        supporters = m["supported_by_excluded"]
        could = (
            "<br>".join(
                f"{_item(s['item'], texts)} — excluded as <code>{_e(s['reason'])}</code>"
                + (
                    f"; to fix: {_e(UNBLOCK[Reason(s['reason'])])}"
                    if s["reason"] in UNBLOCK
                    else ""
                )
                for s in supporters
            )
            or "no item in the workspace supports it: record one"
        )
        rows.append(
            (
                f"<code>{_e(m['requirement'])}</code>",
                '<span class="no">critical</span>' if m["critical"] else "required",
                ", ".join(f"<code>{_e(o)}</code>" for o in m["obligations"]),
                could,
            )
        )
    unblock = (
        "<p>What would unblock this return: for each label above, one admissible item "
        "whose <code>supports</code> list holds it — a new item recorded with a receipt "
        "(for example, one that cites recorded evidence), or an excluded item fixed as "
        "the table says.</p>"
    )
    return [
        "<h2>What is missing</h2>",
        _table(("requirement", "kind", "needed by obligation", "items that support it"), rows),
        unblock,
    ]


def _mark(ok: bool) -> str:
    return '<span class="yes">yes</span>' if ok else '<span class="no">no</span>'


def _obligations(record: Mapping[str, Any]) -> list[str]:
    each = record.get("obligation_coverage") or []
    if not each:
        return []
    rows = []
    for o in each:
        labels = ", ".join(
            f'<code>{_e(d)}</code> <span class="{"no" if d in o["missing"] else "yes"}">'
            f"{'missing' if d in o['missing'] else 'covered'}</span>"
            + (" (critical)" if d in o["critical"] else "")
            for d in o["requires"]
        )
        structure = (
            "not in the set: " + ", ".join(f"<code>{_e(i)}</code>" for i in o["structure_missing"])
            if o["structure_missing"]
            else "record and frontier present"
        )
        rows.append(
            (
                f"<code>{_e(o['obligation'])}</code>",
                f"<code>{_e(o['frontier'])}</code>",
                labels or '<span class="muted">none</span>',
                structure,
                _mark(o["met"]),
            )
        )
    return [
        "<h2>Coverage per obligation</h2>",
        "<p>Each obligation the returning role must continue, the labels it requires, and "
        "whether the selected set covers them.</p>",
        _table(("obligation", "frontier", "requirements", "structure", "covered"), rows),
    ]


def _kept(record: Mapping[str, Any], texts: Mapping[str, str], outcome: str) -> list[str]:
    issued = outcome == "issued"
    ids = record["items"] if issued else record.get("selected", [])
    heading = "Items in the view" if issued else "Selected, but not issued"
    note = (
        "The signed view holds these items, in selection order."
        if issued
        else "These items are still valid and were selected, but together they fall short, "
        "so no view holds them."
    )
    why = _why_kept(record)
    rows = [(f"<code>{_e(i)}</code>", _e(texts.get(i, "")), _e(why.get(i, _PASSED))) for i in ids]
    table = _table(("item", "text", "why it was selected"), rows) if rows else "<p>(none)</p>"
    return [f"<h2>{heading}</h2>", f"<p>{note}</p>", table]


_PASSED = "still valid, and passed every check"


def _why_kept(record: Mapping[str, Any]) -> dict[str, str]:
    """Why each selected item is there: an obligation, its frontier, or the labels it supports.

    Which labels an item supports is known from the issued view; a blocked decision's
    items other than obligations and frontiers get the general reason.
    """
    why: dict[str, str] = {}
    needed_by: dict[str, list[str]] = {}
    for o in record.get("obligation_coverage") or []:
        why[o["obligation"]] = "an open obligation of the agent's role: always selected first"
        why[o["frontier"]] = (
            f"the progress marker (frontier) of {o['obligation']}: selected with it"
        )
        for label in o["requires"]:
            needed_by.setdefault(label, []).append(o["obligation"])
    for item in (record.get("view") or {}).get("items", []):
        labels = [
            f"{label} (needed by {', '.join(needed_by[label])})" if label in needed_by else label
            for label in item.get("supports") or []
        ]
        if item["id"] not in why:
            why[item["id"]] = f"{_PASSED}; supports {', '.join(labels)}" if labels else _PASSED
    return why


def _excluded(record: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    rows = []
    for e in record["excluded"]:
        why = _e(e.get("detail", ""))
        if "confidence" in e:
            why += f" <span class='muted'>(confidence {float(e['confidence']):.2f})</span>"
        rows.append(
            (
                _item(e["item"], texts),
                _reason(e["reason"]),
                f"<code>{_e(e['stage'])}</code>",
                ", ".join(f"<code>{_e(x)}</code>" for x in e["evidence"]) or "-",
                why or "-",
            )
        )
    table = (
        _table(("item", "reason", "stage", "evidence", "details (the verifier's reason)"), rows)
        if rows
        else "<p>(none)</p>"
    )
    left = record.get("not_selected") or []
    unused = (
        [
            f"<p>Not selected ({len(left)}): valid, but the view's budget did not need or fit "
            "them: "
            + ", ".join(f"<code>{_e(i)}</code>" for i in left[:_LISTED])
            + (f", … and {len(left) - _LISTED} more" if len(left) > _LISTED else "")
            + ".</p>"
        ]
        if left
        else []
    )
    return ["<h2>Excluded items</h2>", table, *unused]


def _memories(record: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    rows = [
        (_item(m, texts), "readmitted", "its source item is in the view")
        for m in record["readmitted"]
    ]
    why = {m["id"]: m for m in record.get("withheld_memories") or []}
    for m in record["withheld"]:
        w = why.get(m)
        if w is None:
            rows.append((_item(m, texts), "withheld", "-"))
            continue
        text = (
            f"<code>{_e(w['reason'])}</code>: {_e(MEMORY_REASON_HELP[MemoryReason(w['reason'])])}"
        )
        if "source_reason" in w:
            source, code = _e(w["source"]), _e(w["source_reason"])
            text += f"; its source <code>{source}</code> is <code>{code}</code>"
        rows.append((_item(m, texts), "withheld", text))
    table = _table(("memory", "outcome", "why"), rows) if rows else "<p>(none)</p>"
    return ["<h2>Private memories</h2>", table]


def _judgment(record: Mapping[str, Any]) -> list[str]:
    j = record.get("judgment")
    if not j:
        return []
    if not j["verifier"]:
        line = f"Implicit invalidation was off; {j['standing']} standing verdict(s) applied."
    else:
        line = (
            f"The verifier {j['verifier']} made {j['calls']} of {j['budget']['calls']} allowed "
            f"calls: {j['confirmed']} new and {j['standing']} standing invalidation(s) "
            "(a standing verdict is one confirmed at an earlier return and kept); "
            f"{j['unscreened']} item(s) left unscreened for lack of budget."
        )
    return ["<h2>Judgment</h2>", f"<p>{_e(line)}</p>"]


def _key(record: Mapping[str, Any]) -> list[str]:
    """A definition for every code and stage on the page, then the general terms."""
    reasons = {e["reason"] for e in record["excluded"]} | {
        s["reason"] for m in record.get("missing") or [] for s in m["supported_by_excluded"]
    }
    stages = {e["stage"] for e in record["excluded"]}
    memory = {m["reason"] for m in record.get("withheld_memories") or []}
    entries = [(f"<code>{_e(r)}</code>", _e(REASON_HELP[r])) for r in Reason if r in reasons]
    entries += [(f"<code>{_e(s)}</code> stage", _e(STAGE_HELP[s])) for s in Stage if s in stages]
    entries += [
        (f"<code>{_e(m)}</code>", _e(MEMORY_REASON_HELP[m])) for m in MemoryReason if m in memory
    ]
    entries += [(_e(t), _e(h)) for t, h in TERMS.items()]
    items = "".join(f"<dt>{t}</dt><dd>{h}</dd>" for t, h in entries)
    return ["<h2>What the words on this page mean</h2>", f"<dl>{items}</dl>"]
