"""One decision as a self-contained HTML page, readable without the paper.

``readmit explain ID --html FILE`` and ``readmit replay FILE --html DIR`` write it:
the view's items, each exclusion with its reason, stage, evidence and details (the
verifier's reason for an implicit one), coverage per obligation with what is missing,
the events the page cites, the private memories readmitted and withheld, and a
plain-language key to every code on the page. It is the operator's copy, and says so:
it shows what the returning agent may not read. Inline CSS, no
script, nothing loaded from elsewhere; every piece of text from the record is escaped.

This module is the page itself: its style, head, banner and summary, and the order of
its sections. Each section is built in `readmit.cli.page_sections`, from the escaped
pieces of `readmit.cli.html_blocks`.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from readmit.cli import page_sections as sections
from readmit.cli.html_blocks import codes, esc
from readmit.cli.words import OUTCOME_HELP, UNRECORDED, hidden_split, thresholds
from readmit.errors import InvalidInput

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


def decision_html(record: Mapping[str, Any], texts: Mapping[str, str] | None = None) -> str:
    """The page for one decision record (as ``replay --json`` prints it or the store keeps it)."""
    texts = {**record.get("texts", {}), **(texts or {})}
    view = record.get("view") or {}
    texts.update({i["id"]: i["text"] for i in view.get("items", [])})
    outcome = str(record["outcome"])
    title = f"Return of {record['agent']} at {record['at']}: {outcome}"
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p><span class="outcome {esc(outcome)}">{esc(outcome.upper())}</span> '
        f'<span class="muted">workspace {esc(record["workspace"])}, epoch {esc(record["epoch"])} '
        f"(the agent left at epoch {esc(record['departure_epoch'])})</span></p>",
        _operator(record),
        f'<div class="summary"><p>{esc(OUTCOME_HELP.get(outcome, ""))}</p>{_summary(record)}</div>',
        *sections.missing(record, texts),
        *sections.obligations(record),
        *sections.kept(record, texts, outcome),
        *sections.excluded(record, texts),
        *sections.events(record),
        *sections.memories(record, texts),
        *sections.judgment(record),
        *sections.key(record),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>\n"
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


def _operator(record: Mapping[str, Any]) -> str:
    """The banner: this page is the operator's copy, and what on it the agent is not shown."""
    items, events = hidden_split(record)
    if not items and not events:
        line = "it shows the whole decision record; the returning agent may read every item on it."
    else:
        shown = [f"items it may not read: {codes(items)}"] if items else []
        shown += [f"events: {codes(events)}"] if events else []
        line = "it names what the returning agent is not shown: " + "; ".join(shown)
        line += (
            ". They are shown here for you; the agent's own copy of this decision (over "
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
            f"the policy's thresholds γ and ρ: {esc(UNRECORDED)})."
        )
    else:
        line = (
            f"<p>Coverage: obligations {cov['obligations']:.2f} (needs {needs[0]}), critical "
            f"{cov['critical']:.2f} (needs {needs[1]}); 1.00 means fully covered, and a "
            "view is issued only when both reach what they need."
        )
    missing = record.get("missing") or []
    if missing:
        labels = ", ".join(f"<code>{esc(m['requirement'])}</code>" for m in missing)
        line += f" Nothing in the selected set supports {labels}."
    return line + "</p>"
