"""One decision as a self-contained HTML page, readable without the paper.

``readmit explain ID --html FILE`` and ``readmit replay FILE --html DIR`` write it:
the view's items, each exclusion with its reason, stage, evidence and details (the
verifier's reason for an implicit one), coverage per obligation with what is missing,
the events the page cites, the private memories readmitted and withheld, and a
plain-language key to every code on the page. It is the operator's copy, and says so:
it shows what the returning agent may not read. Inline CSS, no
script, nothing loaded from elsewhere; every piece of text from the record is escaped.
"""

from collections.abc import Iterable, Mapping
from html import escape
from pathlib import Path
from typing import Any

from readmit.cli.words import (
    NEXT_RETURN,
    OUTCOME_HELP,
    RECEIPT,
    STAGE_HELP,
    TERMS,
    hidden_split,
    selected_supports,
    supporter_fixes,
    thresholds,
)
from readmit.errors import InvalidInput
from readmit.reasons import MEMORY_REASON_HELP, REASON_HELP, MemoryReason, Reason, Stage

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;
max-width:70rem;padding:0 1rem;color:#1d2330;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #d5d9e0;padding-bottom:.2rem}
.outcome{display:inline-block;padding:.15rem .6rem;border-radius:.3rem;font-weight:700;
color:#fff}.issued{background:#1f7a3a}.blocked,.reset{background:#b3261e}
.summary{background:#f4f6fa;border-left:4px solid #6b7a99;padding:.6rem 1rem}
.operator{background:#fff6e0;border-left:4px solid #b7791f;padding:.6rem 1rem;margin:.8rem 0}
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
        _operator(record),
        f'<div class="summary"><p>{_e(OUTCOME_HELP.get(outcome, ""))}</p>{_summary(record)}</div>',
        *_missing(record, texts),
        *_obligations(record),
        *_kept(record, texts, outcome),
        *_excluded(record, texts),
        *_events(record),
        *_memories(record, texts),
        *_judgment(record),
        *_key(record),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + '\n<p class="muted">Made by readmit. The terms and a worked example are in '
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


def _words(text: str) -> str:
    """``text`` escaped, with each `backticked` span shown as code."""
    parts = _e(text).split("`")
    return "".join(f"<code>{p}</code>" if n % 2 else p for n, p in enumerate(parts))


def _codes(ids: Iterable[str]) -> str:
    return ", ".join(f"<code>{_e(i)}</code>" for i in ids)


def _operator(record: Mapping[str, Any]) -> str:
    """The banner: this page is the operator's copy, and what on it the agent may not read."""
    items, events = hidden_split(record)
    if not items and not events:
        line = "it shows the whole decision record; the returning agent may read every item on it."
    else:
        line = "it includes items the returning agent may not read: " + (_codes(items) or "-")
        if events:
            line += f" (and the events that recorded them: {_codes(events)})"
        line += (
            ". Their texts are shown here for you; the agent's own copy of this decision (over "
            "HTTP or MCP) leaves them out."
        )
    return f'<div class="operator"><p><strong>Operator\'s copy:</strong> {line}</p></div>'


def _summary(record: Mapping[str, Any]) -> str:
    cov = record["coverage"]
    needs = thresholds(record)
    if needs is None:
        line = (
            f"<p>Coverage: obligations {cov['obligations']:.2f}, critical "
            f"{cov['critical']:.2f} (1.00 means fully covered; a view needs both to reach "
            "the policy's thresholds γ and ρ)."
        )
    else:
        line = (
            f"<p>Coverage: obligations {cov['obligations']:.2f} (needs {needs[0]}), critical "
            f"{cov['critical']:.2f} (needs {needs[1]}); 1.00 means fully covered, and a "
            "view is issued only when both reach what they need."
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
    fixes = supporter_fixes(record)
    rows = []
    for m in missing:
        supporters = m["supported_by_excluded"]
        could = (
            "<br>".join(
                f"{_item(s['item'], texts)} — excluded as <code>{_e(s['reason'])}</code>"
                + (f"; to fix: {_words(fix)}" if (fix := fixes.get(s["item"])) else "")
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
        f"<p>{NEXT_RETURN}: for each label above, one item that passes every check (no "
        "stage excludes it) and whose <code>supports</code> list holds the label — a new "
        "item with a receipt, or an excluded item fixed as the table says; then return "
        f"again. A receipt proves where an item came from: {_words(RECEIPT)}.</p>"
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
            "no: not selected: " + _codes(o["structure_missing"])
            if o["structure_missing"]
            else "yes, both"
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
        "whether the selected set covers them. An obligation is covered when its own record "
        "and its frontier (its progress marker) are both selected and an item of the set "
        "supports every label it requires.</p>",
        _table(
            (
                "obligation",
                "frontier",
                "requirements",
                "obligation and frontier selected",
                "covered",
            ),
            rows,
        ),
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

    Which labels an item supports comes from the workspace's history
    (`readmit.cli.history.for_page`) or the issued view; without either an item gets the
    general reason.
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
    for item, supports in selected_supports(record).items():
        labels = [
            f"{label} (needed by {', '.join(needed_by[label])})" if label in needed_by else label
            for label in supports
        ]
        if item not in why:
            why[item] = f"{_PASSED}; supports {', '.join(labels)}" if labels else _PASSED
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
        _table(("item", "reason", "stage", "evidence", "details"), rows)
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
    note = (
        "<p>Evidence names the events (listed below) and items behind each exclusion; "
        "details say what happened, with the verifier's reason and confidence for an "
        "implicit one.</p>"
    )
    return ["<h2>Excluded items</h2>", note, table, *unused]


def _events(record: Mapping[str, Any]) -> list[str]:
    """The events the exclusions cite, so an id such as e9 says what it was."""
    events = record.get("events") or []
    if not events:
        return []
    rows = [
        (
            f"<code>{_e(ev['id'])}</code>",
            f"<code>{_e(ev['op'])}</code>",
            f"<code>{_e(ev['author'])}</code>",
            _e(ev["at"]),
            _e(ev["text"]),
        )
        for ev in events
    ]
    return [
        "<h2>Events this page cites</h2>",
        "<p>The events the evidence above names: each recorded one change to the shared state.</p>",
        _table(("event", "op", "by", "at", "what it recorded"), rows),
    ]


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
    entries += [(_e(t), _words(h)) for t, h in TERMS.items()]
    items = "".join(f"<dt>{t}</dt><dd>{h}</dd>" for t, h in entries)
    return ["<h2>What the words on this page mean</h2>", f"<dl>{items}</dl>"]
