"""The sections of a decision page, one function each, in the order the page shows them.

Each takes the record (and the texts it names) and returns the section's HTML pieces,
or none when the record has nothing for it; `readmit.cli.report_html` puts them on
the page.
"""

from collections.abc import Mapping
from typing import Any

from readmit.cli.html_blocks import (
    codes,
    esc,
    item_cell,
    mark,
    reason_cell,
    table,
    words,
)
from readmit.cli.words import (
    NEXT_RETURN,
    RECEIPT,
    STAGE_HELP,
    TERMS,
    budget,
    exclusion_notes,
    selected_supports,
    supporter_fixes,
)
from readmit.reasons import MEMORY_REASON_HELP, REASON_HELP, MemoryReason, Reason, Stage

_LISTED = 50
"""``not_selected`` ids a page names; the rest are counted."""


def missing(record: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    """What is missing: each label no selected item supports, and what would supply it."""
    missing = record.get("missing") or []
    if not missing:
        return []
    fixes = supporter_fixes(record)
    rows = []
    for m in missing:
        supporters = m["supported_by_excluded"]
        could = (
            "<br>".join(
                f"{item_cell(s['item'], texts)} — excluded as <code>{esc(s['reason'])}</code>"
                + (f"; to fix: {words(fix)}" if (fix := fixes.get(s["item"])) else "")
                for s in supporters
            )
            or "no item in the workspace supports it: record one"
        )
        rows.append(
            (
                f"<code>{esc(m['requirement'])}</code>",
                '<span class="no">critical</span>' if m["critical"] else "required",
                ", ".join(f"<code>{esc(o)}</code>" for o in m["obligations"]),
                could,
            )
        )
    unblock = (
        f"<p>{NEXT_RETURN}: for each label above, one item that passes every check (no "
        "stage excludes it) and whose <code>supports</code> list holds the label — a new "
        "item with a receipt, or an excluded item fixed as the table says; then return "
        f"again. A receipt proves where an item came from: {words(RECEIPT)}.</p>"
    )
    return [
        "<h2>What is missing</h2>",
        table(("requirement", "kind", "needed by obligation", "items that support it"), rows),
        unblock,
    ]


def obligations(record: Mapping[str, Any]) -> list[str]:
    """Coverage per obligation: its labels, whether each is covered, whether it is met."""
    each = record.get("obligation_coverage") or []
    if not each:
        return []
    rows = []
    for o in each:
        labels = ", ".join(
            f'<code>{esc(d)}</code> <span class="{"no" if d in o["missing"] else "yes"}">'
            f"{'missing' if d in o['missing'] else 'covered'}</span>"
            + (" (critical)" if d in o["critical"] else "")
            for d in o["requires"]
        )
        structure = (
            "no: not selected: " + codes(o["structure_missing"])
            if o["structure_missing"]
            else "yes, both"
        )
        rows.append(
            (
                f"<code>{esc(o['obligation'])}</code>",
                f"<code>{esc(o['frontier'])}</code>",
                labels or '<span class="muted">none</span>',
                structure,
                mark(o["met"]),
            )
        )
    return [
        "<h2>Coverage per obligation</h2>",
        "<p>Each obligation the returning role must continue, the labels it requires, and "
        "whether the selected set covers them. An obligation is covered when its own record "
        "and its frontier (its progress marker) are both selected and an item of the set "
        "supports every label it requires.</p>",
        table(
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


def kept(record: Mapping[str, Any], texts: Mapping[str, str], outcome: str) -> list[str]:
    """The view's items (issued) or the set that fell short (withheld), and why each is there."""
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
    rows = [
        (f"<code>{esc(i)}</code>", esc(texts.get(i, "")), esc(why.get(i, _PASSED))) for i in ids
    ]
    shown = table(("item", "text", "why it was selected"), rows) if rows else "<p>(none)</p>"
    return [f"<h2>{heading}</h2>", f"<p>{note}</p>", shown]


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


def excluded(record: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    """Every exclusion with its reason, stage, evidence and details; the ids not selected."""
    rows = []
    for e in record["excluded"]:
        why = esc(e.get("detail", ""))
        notes = exclusion_notes(e, record)
        if notes:
            why = f"{why} <span class='muted'>({esc(', '.join(notes))})</span>".strip()
        rows.append(
            (
                item_cell(e["item"], texts),
                reason_cell(e["reason"]),
                f"<code>{esc(e['stage'])}</code>",
                ", ".join(f"<code>{esc(x)}</code>" for x in e["evidence"]) or "-",
                why or "-",
            )
        )
    shown = (
        table(("item", "reason", "stage", "evidence", "details"), rows) if rows else "<p>(none)</p>"
    )
    left = record.get("not_selected") or []
    size = f" of {budget(record)}" if budget(record) else ""
    unused = (
        [
            f"<p>Not selected ({len(left)}): valid, but the view's budget{size} did not need "
            "or fit them: "
            + ", ".join(f"<code>{esc(i)}</code>" for i in left[:_LISTED])
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
    return ["<h2>Excluded items</h2>", note, shown, *unused]


def events(record: Mapping[str, Any]) -> list[str]:
    """The events the exclusions cite, so an id such as e9 says what it was."""
    events = record.get("events") or []
    if not events:
        return []
    rows = [
        (
            f"<code>{esc(ev['id'])}</code>",
            f"<code>{esc(ev['op'])}</code>",
            f"<code>{esc(ev['author'])}</code>",
            esc(ev["at"]),
            esc(ev["text"]),
        )
        for ev in events
    ]
    return [
        "<h2>Events this page cites</h2>",
        "<p>The events the evidence above names: each recorded one change to the shared state.</p>",
        table(("event", "op", "by", "at", "what it recorded"), rows),
    ]


def memories(record: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    """The private memories readmitted and withheld, and why."""
    rows = [
        (item_cell(m, texts), "readmitted", "its source item is in the view")
        for m in record["readmitted"]
    ]
    why = {m["id"]: m for m in record.get("withheld_memories") or []}
    for m in record["withheld"]:
        w = why.get(m)
        if w is None:
            rows.append((item_cell(m, texts), "withheld", "-"))
            continue
        text = (
            f"<code>{esc(w['reason'])}</code>: {esc(MEMORY_REASON_HELP[MemoryReason(w['reason'])])}"
        )
        if "source_reason" in w:
            source, code = esc(w["source"]), esc(w["source_reason"])
            text += f"; its source <code>{source}</code> is <code>{code}</code>"
        rows.append((item_cell(m, texts), "withheld", text))
    shown = table(("memory", "outcome", "why"), rows) if rows else "<p>(none)</p>"
    return ["<h2>Private memories</h2>", shown]


def judgment(record: Mapping[str, Any]) -> list[str]:
    """What the implicit stage spent and found."""
    j = record.get("judgment")
    if not j:
        return []
    if not j["verifier"]:
        line = f"Implicit invalidation was off; {j['standing']} standing verdict(s) applied."
    else:  # an agent's copy does not say what was spent (`AgentJudgmentOut`)
        allowed = j["budget"]["calls"]
        made = (
            f"made {j['calls']} of {allowed} allowed" if "calls" in j else f"was allowed {allowed}"
        )
        line = (
            f"The verifier {j['verifier']} {made} "
            f"calls: {j['confirmed']} new and {j['standing']} standing invalidation(s) "
            "(a standing verdict is one confirmed at an earlier return and kept); "
            f"{j['unscreened']} item(s) left unscreened for lack of budget."
        )
        seconds = j["budget"]["seconds"]  # null without a time budget
        if seconds is not None and "seconds" in j:
            line += f" It waited {j['seconds']:.1f} of {seconds:g} allowed seconds on calls."
        if j.get("steps"):  # an agent's copy has none; a record from before them, null
            allowed = j["budget"]["steps"]
            line += (
                f" It took {j['steps']:,} of {allowed:,} allowed steps along chains of "
                "replacements and restatements."
            )
    return ["<h2>Judgment</h2>", f"<p>{esc(line)}</p>"]


def key(record: Mapping[str, Any]) -> list[str]:
    """A definition for every code and stage on the page, then the general terms."""
    reasons = {e["reason"] for e in record["excluded"]} | {
        s["reason"] for m in record.get("missing") or [] for s in m["supported_by_excluded"]
    }
    stages = {e["stage"] for e in record["excluded"]}
    memory = {m["reason"] for m in record.get("withheld_memories") or []}
    entries = [(f"<code>{esc(r)}</code>", esc(REASON_HELP[r])) for r in Reason if r in reasons]
    entries += [(f"<code>{esc(s)}</code> stage", esc(STAGE_HELP[s])) for s in Stage if s in stages]
    entries += [
        (f"<code>{esc(m)}</code>", esc(MEMORY_REASON_HELP[m])) for m in MemoryReason if m in memory
    ]
    entries += [(esc(t), words(h)) for t, h in TERMS.items()]
    items = "".join(f"<dt>{t}</dt><dd>{h}</dd>" for t, h in entries)
    return ["<h2>What the words on this page mean</h2>", f"<dl>{items}</dl>"]
