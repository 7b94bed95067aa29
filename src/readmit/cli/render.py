"""Human-readable rendering of decision records (shared by demo, replay and explain)."""

import re
from collections.abc import Iterator
from typing import Any

import click

from readmit.cli.words import (
    NEXT_RETURN,
    RECEIPT,
    UNRECORDED,
    budget,
    exclusion_notes,
    hidden_split,
    supporter_fixes,
    thresholds,
)
from readmit.reasons import REASON_HELP, MemoryReason, Reason

_OUTCOME_STYLE = {"issued": "green", "blocked": "yellow", "reset": "yellow"}
_LISTED = 8
"""``not_selected`` ids named in full; the rest are counted."""


def _pct(value: float) -> str:
    return f"{value:.2f}"


def _table(rows: list[tuple[str, ...]]) -> Iterator[str]:
    rows = [tuple(map(shown, row)) for row in rows]  # aligned as they will be printed
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        yield "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()


def render_decision(record: dict[str, Any], texts: dict[str, str] | None = None) -> Iterator[str]:
    """Lines describing one decision: outcome, coverage, kept items, exclusions, memories.

    What agents wrote (texts, a revocation's why, a verifier's wording) is shown with its
    line breaks, control and bidirectional characters escaped: it cannot print lines of
    its own into the report, nor reorder the line it is on.
    """
    lines = _render(record, texts)
    yield next(lines)  # the styled heading: the agent's checked name, a time, numbers
    yield from map(shown, lines)


_UNSHOWN = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
"""Control characters, line and paragraph separators, and the marks, embeddings, overrides
and isolates of bidirectional text: what could start a line or reorder one. Other
invisible characters (a no-break space, the joiner inside an emoji) are text."""


def shown(line: str) -> str:
    r"""``line`` with `_UNSHOWN` characters escaped (``\n``, ``\u202e``)."""
    return _UNSHOWN.sub(lambda c: c.group().encode("unicode_escape").decode(), line)


def _render(record: dict[str, Any], texts: dict[str, str] | None) -> Iterator[str]:
    texts = {**record.get("texts", {}), **(texts or {})}
    outcome = record["outcome"]
    yield click.style(
        f"return of {record['agent']} at {record['at']} (epoch {record['epoch']}): "
        f"{outcome.upper()}",
        bold=True,
        fg=_OUTCOME_STYLE.get(outcome),
    )
    if "task" in record:  # records logged before they named it do not
        yield f"  returned to task {record['task']!r}, purpose {record['purpose']!r}"
    yield from _operator(record)
    yield _coverage(record)
    yield from _missing(record)
    if outcome != "issued":
        yield from _unblock(record, texts)
    if record.get("judgment"):
        yield f"  judgment: {_judgment(record['judgment'])}"
    label = "kept (in selection order)" if outcome == "issued" else "selected, but not issued"
    kept = record["items"] if outcome == "issued" else record.get("selected", [])
    yield f"  {label}:"
    if kept:
        yield from _table([(i, texts.get(i, "")) for i in kept])
    else:
        yield "    (none)"
    yield "  excluded:"
    rows = [
        (e["item"], e["reason"], e["stage"], ",".join(e["evidence"]) or "-", _detail(e, record))
        for e in record["excluded"]
    ]
    yield from (
        _table([("item", "reason", "stage", "evidence", "why"), *rows])
        if rows
        else iter(["    (none)"])
    )
    left = record.get("not_selected") or []
    if left:
        shown = ", ".join(left[:_LISTED]) + (
            f", … and {len(left) - _LISTED} more" if len(left) > _LISTED else ""
        )
        size = f" of {budget(record)}" if budget(record) else ""
        because = f"valid, but the view's budget{size} did not need or fit them"
        yield f"  not selected ({because}): {shown}"
    yield from _events(record)
    yield f"  private memories readmitted: {', '.join(record['readmitted']) or '(none)'}"
    yield f"  private memories withheld:   {', '.join(record['withheld']) or '(none)'}"
    why = record.get("withheld_memories") or []
    if why:
        yield from _table([(m["id"], f"from {m['source']}", _memory_detail(m)) for m in why])


def _operator(record: dict[str, Any]) -> Iterator[str]:
    """One line when the record holds what the agent is not shown (its own copy leaves it out)."""
    items, events = hidden_split(record)
    if items or events:
        shown = [f"items it may not read: {', '.join(items)}"] if items else []
        shown += [f"events: {', '.join(events)}"] if events else []
        yield f"  operator's copy: it names what {record['agent']} is not shown: {'; '.join(shown)}"


def _coverage(record: dict[str, Any]) -> str:
    cov = record["coverage"]
    needs = thresholds(record)
    if needs is None:
        return (
            f"  coverage: obligations {_pct(cov['obligations'])}, critical "
            f"{_pct(cov['critical'])} ({UNRECORDED})"
        )
    return (
        f"  coverage: obligations {_pct(cov['obligations'])} (needs {needs[0]}), "
        f"critical {_pct(cov['critical'])} (needs {needs[1]})"
    )


def _events(record: dict[str, Any]) -> Iterator[str]:
    """The events the exclusions cite as evidence: what e9 was, without the store."""
    events = record.get("events") or []
    if events:
        yield "  events cited as evidence:"
        yield from _table([(e["id"], e["op"], e["author"], e["at"], e["text"]) for e in events])


def _missing(record: dict[str, Any]) -> Iterator[str]:
    """What the selected set lacks: each requirement, who needs it, what could supply it."""
    missing = record.get("missing") or []
    short = [o for o in record.get("obligation_coverage") or [] if o.get("structure_missing")]
    if not missing and not short:
        return
    blocked = record["outcome"] != "issued"
    yield "  missing" + (" (why no view was issued):" if blocked else ":")
    rows = [
        (
            m["requirement"],
            "critical" if m["critical"] else "required",
            ", ".join(m["obligations"]),
            "; ".join(f"{s['item']} is {s['reason']}" for s in m["supported_by_excluded"])
            or "no item in the workspace supports it",
        )
        for m in missing
    ]
    rows += [
        (
            ", ".join(o["structure_missing"]),
            "structure",
            o["obligation"],
            "the obligation's record and frontier must be in the view",
        )
        for o in short
    ]
    yield from _table(
        [("requirement", "kind", "needed by", "excluded items that support it"), *rows]
    )


def _unblock(record: dict[str, Any], texts: dict[str, str]) -> Iterator[str]:
    """For each missing label: what would let an excluded item, or a new one, supply it."""
    missing = record.get("missing") or []
    if not missing:
        return
    fixes = supporter_fixes(record)
    yield (
        f"  {NEXT_RETURN[0].lower()}{NEXT_RETURN[1:]} (then return again): for each missing "
        "label, one item that passes every check must support it:"
    )
    for m in missing:
        label = m["requirement"]
        for s in m["supported_by_excluded"]:
            text = texts.get(s["item"], "")
            quoted = f' "{text}"' if text else ""
            fix = fixes.get(s["item"], "")
            yield f"    {label}: {s['item']}{quoted} is {s['reason']}" + (f"; {fix}" if fix else "")
        either = "or " if m["supported_by_excluded"] else ""
        yield f"    {label}: {either}a new item with a receipt whose supports lists {label}"
    yield f"  (a receipt proves where an item came from: {RECEIPT})"


_MEMORY_SHORT = {
    MemoryReason.VIEW_WITHHELD: "no view was issued",
    MemoryReason.SOURCE_NOT_ADMITTED: "its source is not in the view",
}


def _memory_detail(memory: dict[str, Any]) -> str:
    code = MemoryReason(memory["reason"])
    text = f"{code}: {_MEMORY_SHORT[code]}"
    if "source_reason" in memory:
        text += f" ({memory['source']} is {memory['source_reason']})"
    return text


def _judgment(j: dict[str, Any]) -> str:
    """One line: what the implicit stage spent and found (record["judgment"])."""
    if not j["verifier"]:
        return f"implicit invalidation off; {j['standing']} standing verdict(s) applied"
    budget = j["budget"]
    found = (
        f"{j['confirmed']} new and {j['standing']} standing invalidation(s); "
        f"{j['unscreened']} item(s) left unscreened"
    )
    if "calls" not in j:  # an agent's copy: what was spent is the operator's to see
        return f"verifier {j['verifier']} (budget {budget['calls']} calls); {found}"
    tokens = f", {j['tokens']} tokens" if j["tokens"] else ""
    limit = f" of {budget['tokens']}" if tokens and budget["tokens"] else ""
    seconds = budget["seconds"]  # null without a time budget (`upgrade_record` for older ones)
    waited = f", {j['seconds']:.1f} of {seconds:g} s" if seconds is not None else ""
    walked = f", {j['steps']:,} of {budget['steps']:,} walk steps" if j["steps"] else ""
    return (
        f"{j['calls']} verifier calls (budget {budget['calls']}; {j['verifier']}){tokens}{limit}"
        f"{waited}{walked}; {found}"
    )


def _detail(exclusion: dict[str, Any], record: dict[str, Any]) -> str:
    detail = exclusion.get("detail") or REASON_HELP[Reason(exclusion["reason"])]
    notes = exclusion_notes(exclusion, record)
    return detail + (f" [{', '.join(notes)}]" if notes else "")
