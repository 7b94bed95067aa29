"""What a returned agent is told of its decision, its LangGraph values named by path."""

import re
from datetime import datetime
from typing import Any

from readmit.decide import Decided
from readmit.integrations.langgraph.keys import parse
from readmit.integrations.team import left_at_departure, readable
from readmit.integrations.withheld import ViewExpired, ViewWithheld, agent_notice
from readmit.model import Item

_ITEM = re.compile(r"\blg-[0-9a-f]{16}\b")
"""A LangGraph value's item id, as a detail names it."""


def notice(decided: Decided) -> dict[str, Any]:
    """What the agent is shown of a decision: what HTTP and MCP show it (`agent_copy`).

    Outcome, coverage, what is missing, the signed view, the reasons for what went stale
    (only those it may see), and under ``left_out`` what its departure left out as no
    longer valid, which no decision names; each exclusion that is a LangGraph item also names its
    ``namespace`` and ``key`` when the key is short, and the LangGraph items among its
    evidence (a premise that fell, the item that replaced it) and those its detail names (a
    verifier's "refers to lg-…") are named by path too, in ``evidence_paths``, so that a
    detail's ``lg-…`` id can be read as the value it is.
    """
    shown = agent_notice(decided)
    shown["left_out"] = [_left_out(decided, item) for item in decided.context.left_out]
    for entry in shown["excluded"]:
        path = _path(decided, entry["item"])
        if path is not None:
            entry["namespace"], entry["key"] = path
        cited = dict.fromkeys([*entry["evidence"], *_ITEM.findall(entry.get("detail") or "")])
        named = [(i, p) for i in cited if (p := _path(decided, i)) is not None]
        if named:
            entry["evidence_paths"] = [
                {"item": i, "namespace": namespace, "key": key} for i, (namespace, key) in named
            ]
    return shown


def refusal(decided: Decided, expired: datetime | None) -> ViewWithheld:
    """What a read raises in ``raise`` mode while no view is served.

    None was issued, or the issued one ``expired`` then.
    """
    shown = notice(decided)
    if expired is not None:
        return ViewExpired(decided, expired, notice=shown)
    return ViewWithheld(decided, notice=shown)


def _left_out(decided: Decided, item: Item) -> dict[str, Any]:
    """An item its departure left out as no longer valid, named as ``excluded`` names one.

    The decision names it nowhere (it is not in C), yet reads hide its path (a probe).
    """
    removal = left_at_departure(decided, item)
    entry: dict[str, Any] = {"item": item.id, "reason": removal.reason, "detail": removal.detail}
    ident = parse(item.key)
    if ident is not None and not ident[2]:
        entry["namespace"], entry["key"] = list(ident[0]), ident[1]
    return entry


def _path(decided: Decided, item_id: str) -> tuple[list[str], str] | None:
    """The namespace and short key of the LangGraph value ``item_id``, if the agent may read it."""
    item = decided.context.by_id.get(item_id)
    if item is None or not readable(decided, item_id):
        return None
    ident = parse(item.key)
    return None if ident is None or ident[2] else (list(ident[0]), ident[1])
