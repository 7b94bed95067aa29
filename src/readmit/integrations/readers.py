"""Who may read the items a walk of the log meets (`readmit.integrations.following`)."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from readmit.admission.gate_details import inapplicable
from readmit.decide import Decided
from readmit.events import ItemDraft
from readmit.integrations.team import Removal, readable
from readmit.model import Agent, Item, Scope
from readmit.reasons import Reason

NOT_APPLICABLE, MISSING_RECEIPT = Reason.NOT_APPLICABLE.value, Reason.MISSING_RECEIPT.value


@dataclass(slots=True)
class Readers:
    """The readers of the items of ``decided``'s return and of those stated after it."""

    decided: Decided
    scopes: dict[str, Scope | None] = field(default_factory=dict)
    """The readers of the items stated after the return (C's are the context's)."""
    _scoped: dict[tuple[object, ...], Scope | None] = field(default_factory=dict)
    """The scopes made so far, by what makes them: most items share one of a few."""
    _reading: dict[int, tuple[Scope, bool]] = field(default_factory=dict)
    """Whether the agent may read each scope of `_scoped`, by identity (kept alive here)."""

    @property
    def _context(self) -> Mapping[str, Item]:
        return self.decided.context.by_id

    @property
    def _agents(self) -> Mapping[str, Agent]:
        return self.decided.context.agents

    def _replaces(self, author: str, item_id: str) -> bool:
        """Whether a keyed statement by ``author`` replaces ``item_id``: the store's rule.

        Keys are scoped to what the author may read (`readmit.store.writer`); an
        author or item not known here counts as replacing (fail closed).
        """
        who = self._agents.get(author)
        item = self._context.get(item_id)
        scope = item.scope if item is not None else self.scopes.get(item_id)
        return who is None or scope is None or scope.readable_by(who.principal, who.role)

    def may_read(self, scope: Scope | None) -> bool:
        """Whether the agent that returned may read an item of ``scope`` (one `_scope` made)."""
        if scope is None:
            return False
        known = self._reading.get(id(scope))
        if known is None:
            who = self.decided.context.returner
            passes = scope.readable_by(who.principal, who.role)
            known = self._reading[id(scope)] = (scope, passes)
        return known[1]

    def _scope(self, draft: ItemDraft, author: str) -> Scope | None:
        """The readers of an item ``author`` stated (None: its principal is not known here)."""
        principals = draft.principals
        made: tuple[object, ...] = (principals, author if principals is None else None)
        made += (draft.roles, draft.task, draft.purposes)
        if made in self._scoped:
            return self._scoped[made]
        scope = None
        if principals is None and (who := self._agents.get(author)) is not None:
            principals = frozenset({who.principal})
        if principals is not None:
            scope = Scope(
                principals=principals, roles=draft.roles, task=draft.task, purposes=draft.purposes
            )
        self._scoped[made] = scope
        return scope

    def gated(self, item: ItemDraft, scope: Scope) -> Removal | None:
        """Why a return's gate U or P excludes ``item``, stated after it (None: both pass).

        Another task or purpose than the return's (``not_applicable``), or hearsay with no
        receipt (``missing_receipt``): the layers served such statements (a review). Its
        citations need no check, as the store refuses one of evidence it does not hold.
        """
        who = self.decided.context.returner
        if not scope.applies_to(who.task, who.purpose):
            return Removal(item.id, NOT_APPLICABLE, inapplicable(scope, None, who))
        if item.unconfirmed:
            return Removal(item.id, MISSING_RECEIPT, "no receipt: recorded as unconfirmed")
        return None

    def _told(self, item: str) -> bool:
        """Whether the agent may read a withdrawal's reason: it may read the item."""
        if item in self._context:
            return readable(self.decided, item)
        return self.may_read(self.scopes.get(item))
