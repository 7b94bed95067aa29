"""The small pieces every part of a decision page is built from: escaped text, codes, tables.

Every piece of text from a record goes through `esc` (or a helper that calls it) before
it reaches the page, so nothing a record holds can become markup.
"""

from collections.abc import Iterable, Mapping
from html import escape

from readmit.reasons import REASON_HELP, Reason


def esc(value: object) -> str:
    """``value`` as text, escaped for an element or a quoted attribute."""
    return escape(str(value), quote=True)


def words(text: str) -> str:
    """``text`` escaped, with each `backticked` span shown as code."""
    parts = esc(text).split("`")
    return "".join(f"<code>{p}</code>" if n % 2 else p for n, p in enumerate(parts))


def codes(ids: Iterable[str]) -> str:
    """``ids`` as code, comma-separated."""
    return ", ".join(f"<code>{esc(i)}</code>" for i in ids)


def table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A table; ``rows`` cells are already escaped HTML."""
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def item_cell(item_id: str, texts: Mapping[str, str]) -> str:
    """An item's id as code, followed by its text when the record names it."""
    text = texts.get(item_id)
    return f"<code>{esc(item_id)}</code>" + (f" {esc(text)}" if text else "")


def reason_cell(code: str) -> str:
    """A reason code as code, followed by what it means."""
    try:
        help_ = REASON_HELP[Reason(code)]
    except ValueError:
        help_ = ""
    return f"<code>{esc(code)}</code>" + (f": {esc(help_)}" if help_ else "")


def mark(ok: bool) -> str:
    """A green yes or a red no."""
    return '<span class="yes">yes</span>' if ok else '<span class="no">no</span>'
