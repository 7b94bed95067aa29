"""What a returned agent may read from a LangGraph store, and what it is told about the rest.

A `Lens` is built from the agent's latest decision: the identities of the LangGraph
items its issued view admits, plus what the agent itself writes after that return
(fresh state, not remembered state). A withheld decision admits nothing inherited.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import Item as LangGraphItem

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.errors import ReadmitError
from readmit.integrations.langgraph.keys import LONG_KEY, Identity, identity, parse
from readmit.report import agent_copy


def notice(decided: Decided) -> dict[str, Any]:
    """What the agent is shown of a decision: what HTTP and MCP show it (`agent_copy`).

    Outcome, coverage, what is missing, the signed view, the reasons for what went stale
    (only those it may see); each exclusion that is a LangGraph item also names its
    ``namespace`` and ``key`` when the key is short.
    """
    shown = {"decision": decided.id, **agent_copy(decided.record)}
    for entry in shown["excluded"]:
        item = decided.context.by_id.get(entry["item"])
        ident = parse(item.key if item is not None else None)
        if ident is not None and not ident[2]:
            entry["namespace"], entry["key"] = list(ident[0]), ident[1]
    return shown


class ViewWithheld(ReadmitError):
    """The agent's latest return was withheld (blocked or reset): its reads are refused.

    Raised by `ReadmitStore` reads when it was built with ``on_withheld="raise"``, until
    the agent's next return. ``notice`` carries the coverage and the exclusion reasons.
    """

    code = "view_withheld"

    def __init__(self, decided: Decided) -> None:
        self.notice = notice(decided)
        coverage = self.notice["coverage"]
        super().__init__(
            f"the return view was not issued ({self.notice['outcome']}: obligation coverage "
            f"{coverage['obligations']}, critical {coverage['critical']}); "
            "reads are refused until the next return"
        )
        self.outcome: str = self.notice["outcome"]
        self.excluded: list[dict[str, Any]] = self.notice["excluded"]


@dataclass(slots=True)
class Lens:
    """The identities an agent's reads may show since one decision."""

    decided: Decided
    visible: set[Identity] = field(default_factory=set)
    prefixes: set[tuple[str, ...]] = field(default_factory=set)
    """Every prefix of a visible identity's namespace: what ``list_namespaces`` may show."""

    withheld: bool = False
    """Whether the decision issued no view."""

    @classmethod
    def of(cls, decided: Decided) -> "Lens":
        """The lens of ``decided``: its view's LangGraph items (none if it was withheld)."""
        if not isinstance(decided.decision, Issued):
            return cls(decided, withheld=True)
        lens = cls(decided)
        lens.add(i for item in decided.decision.items if (i := parse(item.key)) is not None)
        return lens

    def shows(self, item: LangGraphItem) -> bool:
        """Whether ``item`` (read from the inner store) may be shown."""
        key = item.key
        ident = (
            (item.namespace, key, False) if len(key) <= LONG_KEY else identity(item.namespace, key)
        )
        return ident in self.visible

    def add(self, idents: Iterable[Identity]) -> None:
        """Show ``idents`` too (what the agent wrote after the return)."""
        for ident in idents:
            self.visible.add(ident)
            namespace = ident[0]
            self.prefixes.update(namespace[:n] for n in range(len(namespace) + 1))
