"""What a returned agent may read from a LangGraph store, and what it is told about the rest.

A `Lens` is built from the agent's latest decision: the identities of the LangGraph
items its issued view admits, plus what the agent itself writes after that return
(fresh state, not remembered state). A withheld decision admits nothing inherited, and
neither does an issued one once its view has expired.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import Item as LangGraphItem

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.integrations.langgraph.keys import LONG_KEY, Identity, identity, parse
from readmit.integrations.team import (
    FOREVER,
    ViewExpired,
    ViewWithheld,
    agent_notice,
    expiry,
    lapsed,
    readable,
)

__all__ = ["FOREVER", "Lens", "ViewExpired", "ViewWithheld", "notice"]


def notice(decided: Decided) -> dict[str, Any]:
    """What the agent is shown of a decision: what HTTP and MCP show it (`agent_copy`).

    Outcome, coverage, what is missing, the signed view, the reasons for what went stale
    (only those it may see); each exclusion that is a LangGraph item also names its
    ``namespace`` and ``key`` when the key is short, and the LangGraph items among its
    evidence (a premise that fell, the item that replaced it) are named by path too, in
    ``evidence_paths``, so that a detail's ``lg-…`` id can be read as the value it is.
    """
    shown = agent_notice(decided)
    for entry in shown["excluded"]:
        path = _path(decided, entry["item"])
        if path is not None:
            entry["namespace"], entry["key"] = path
        named = [(i, p) for i in entry["evidence"] if (p := _path(decided, i)) is not None]
        if named:
            entry["evidence_paths"] = [
                {"item": i, "namespace": namespace, "key": key} for i, (namespace, key) in named
            ]
    return shown


def _path(decided: Decided, item_id: str) -> tuple[list[str], str] | None:
    """The namespace and short key of the LangGraph value ``item_id``, if the agent may read it."""
    item = decided.context.by_id.get(item_id)
    if item is None or not readable(decided, item_id):
        return None
    ident = parse(item.key)
    return None if ident is None or ident[2] else (list(ident[0]), ident[1])


@dataclass(slots=True)
class Lens:
    """The identities an agent's reads may show since one decision."""

    decided: Decided
    visible: set[Identity] = field(default_factory=set)
    prefixes: set[tuple[str, ...]] = field(default_factory=set)
    """Every prefix of a visible identity's namespace: what ``list_namespaces`` may show."""

    own: set[Identity] = field(default_factory=set)
    """What the agent wrote since the return (shown whatever the view says)."""

    withheld: bool = False
    """Whether no view is served: none was issued, or the issued one expired."""

    expires: datetime = FOREVER
    """When the issued view stops being served."""

    deadline: float = FOREVER.timestamp()
    """``expires`` as a POSIX timestamp (what the hot read path compares)."""

    expired: bool = False
    """Whether this lens replaced an issued view that expired."""

    @classmethod
    def of(cls, decided: Decided) -> "Lens":
        """The lens of ``decided``: its view's LangGraph items (none if it was withheld)."""
        decision = decided.decision
        if not isinstance(decision, Issued):
            return cls(decided, withheld=True)
        expires = expiry(decided)
        lens = cls(decided, expires=expires, deadline=expires.timestamp())
        lens.show(i for item in decision.items if (i := parse(item.key)) is not None)
        return lens

    def lapsed(self) -> "Lens":
        """This lens once its view has expired: only the agent's own writes since."""
        lens = Lens(
            self.decided, withheld=True, expires=self.expires, deadline=self.deadline, expired=True
        )
        lens.add(self.own)
        return lens

    def lapsed_at(self, clock: Callable[[], datetime]) -> bool:
        """Whether the view has expired by ``clock`` (the wall clock read cheaply if it is it)."""
        return lapsed(self.deadline, clock)

    def refusal(self) -> ViewWithheld:
        """What a read raises through this (withheld) lens in ``raise`` mode."""
        shown = notice(self.decided)
        if self.expired:
            return ViewExpired(self.decided, self.expires, notice=shown)
        return ViewWithheld(self.decided, notice=shown)

    def shows(self, item: LangGraphItem) -> bool:
        """Whether ``item`` (read from the inner store) may be shown."""
        key = item.key
        ident = (
            (item.namespace, key, False) if len(key) <= LONG_KEY else identity(item.namespace, key)
        )
        return ident in self.visible

    def add(self, idents: Iterable[Identity]) -> None:
        """Show ``idents`` too: what the agent wrote after the return."""
        idents = list(idents)
        self.own.update(idents)
        self.show(idents)

    def show(self, idents: Iterable[Identity]) -> None:
        """Show ``idents``."""
        for ident in idents:
            self.visible.add(ident)
            namespace = ident[0]
            self.prefixes.update(namespace[:n] for n in range(len(namespace) + 1))
