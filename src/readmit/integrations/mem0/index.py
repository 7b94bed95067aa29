"""A decision as lookups by Mem0 memory: what its view admitted, what it removed, and why.

Mem0 holds one text a memory and readmit an item a version of it
(`readmit.integrations.mem0.ids`); a read keeps a memory unless the decision, or what
came after it (`readmit.integrations.following`), removed it.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.integrations.following import Following
from readmit.integrations.mem0.ids import memory_of
from readmit.integrations.team import FOREVER, Removal, expiry, readable, removals
from readmit.reasons import Reason

UNAUTHORIZED = Reason.UNAUTHORIZED.value
UNRECORDED = "Mem0 holds another text than the version the view admitted, with no record"
"""Why an admitted memory whose text changed around readmit is not shown (`ViewIndex.why`)."""


@dataclass(frozen=True, slots=True)
class ViewIndex:
    """One decision as lookups by memory: what it admitted and what it removed."""

    decided: Decided | None
    admitted: Mapping[str, str] = field(default_factory=dict)
    """Memory id -> the admitted text of its newest admitted version."""
    admitted_keyed: frozenset[tuple[str, str]] = frozenset()
    """(key, text) of every admitted keyed item."""
    removed: Mapping[str, Removal] = field(default_factory=dict)
    """Memory id -> why its newest judged, unadmitted version was kept out."""
    expires: datetime = FOREVER
    """When the decision's issued view stops being served (`FOREVER`: none was issued)."""
    deadline: float = FOREVER.timestamp()
    """``expires`` as a POSIX timestamp (what each read compares)."""
    expired: bool = False
    """Whether the issued view has expired: it then admits nothing, like a withheld one."""

    @property
    def withheld(self) -> bool:
        """Whether no view is served: none was issued, or the issued one expired."""
        decided = self.decided
        return decided is not None and (self.expired or not isinstance(decided.decision, Issued))

    followed: int = 0
    """How many removals not in the decision are taken out already: those of the log before
    the return (`readmit.integrations.prior`), then `Following.gone`."""
    unreadable: frozenset[str] = frozenset()
    """The removed memories whose item the agent may not read: listed without their text."""
    own: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    """Memory id -> the version and text the agent itself stated since the return: shown
    over a removal of an older version (its own fresh state)."""
    owned: int = 0
    """How many of the agent's own statements `own` was made from."""
    back: int = 0
    """How many items withheld until their start had started when it was made (`Following.back`)."""

    def after(self, following: Following, foreign: Sequence[Removal]) -> "ViewIndex":
        """This index less what was withdrawn since, with the agent's own statements since.

        ``foreign``: what came before the return that it did not judge (`Prior`). Made anew
        from the decision once an item withheld until its start has started.
        """
        view = self
        if view.back != len(following.back):
            view = replace(index(view.decided, expired=view.expired), back=len(following.back))
        if view.followed != len(foreign) + len(following.gone):
            view = view.without([*foreign, *following.gone])
        if view.owned != len(following.own):
            view = view.with_own({i: following.texts[i] for i in following.own})
        return view

    def with_own(self, stated: Mapping[str, str]) -> "ViewIndex":
        """This index with the agent's own statements since the return (item id -> text)."""
        own: dict[str, tuple[int, str]] = {}
        for item_id, text in stated.items():
            found = memory_of(item_id)
            if found is not None and found[1] > own.get(found[0], (0, ""))[0]:
                own[found[0]] = (found[1], text)
        return replace(self, own=own, owned=len(stated))

    def without(self, gone: Sequence[Removal]) -> "ViewIndex":
        """This index with the memories of ``gone`` (removals the decision does not hold)."""
        removed, admitted = dict(self.removed), dict(self.admitted)
        keyed = set(self.admitted_keyed)
        by_id = self.decided.context.by_id if self.decided is not None else {}
        unreadable = set(self.unreadable)
        for removal in gone:
            found = memory_of(removal.item)
            if found is not None:
                removed[found[0]] = removal
                admitted.pop(found[0], None)
                if removal.reason == UNAUTHORIZED:
                    unreadable.add(found[0])
            if (item := by_id.get(removal.item)) is not None and item.key is not None:
                keyed.discard((item.key, item.text))
        return replace(
            self, admitted=admitted, admitted_keyed=frozenset(keyed), removed=removed,
            followed=len(gone), unreadable=frozenset(unreadable),
        )  # fmt: skip

    def keeps(self, memory: Mapping[str, Any], key: str | None) -> bool:
        """Whether a memory Mem0 returned may be shown to the agent."""
        memory_id, text = str(memory.get("id")), memory.get("memory")
        admitted = self.admitted.get(memory_id)
        if admitted is not None and admitted != text:  # not what the view judged
            own = self.own.get(memory_id)
            return own is not None and own[1] == text
        if memory_id not in self.removed or admitted is not None:
            return True
        if self._own_since(memory_id, text):
            return True
        if memory_id in self.unreadable:  # another principal's, in a bank they share
            return False  # a copy of an admitted text showed it, metadata and all (a probe)
        return key is not None and (key, text) in self.admitted_keyed

    def why(self, memory_id: str) -> Removal:
        """Why a memory `keeps` refused is not shown.

        Its removal, or, for one the view admitted that now holds another text (a write
        that failed inside Mem0 part-way: its vector store written, its history not),
        ``missing_receipt``: no record of readmit vouches for that text.
        """
        if (removal := self.removed.get(memory_id)) is not None:
            return removal
        decision = None if self.decided is None else self.decided.decision
        items = decision.items if isinstance(decision, Issued) else ()
        judged = [i.id for i in items if (m := memory_of(i.id)) is not None and m[0] == memory_id]
        return Removal(judged[-1] if judged else "", Reason.MISSING_RECEIPT.value, UNRECORDED)

    def keeps_history(
        self, memory_id: str, memory: Mapping[str, Any] | None, key: str | None
    ) -> bool:
        """Whether a memory's Mem0 history may be shown.

        When the view did not remove the memory, or shows what it holds now (`keeps`): a
        history holds every text the memory ever had, so a removed one's (another
        principal's, a stale one) is not shown. What the view never judged is not filtered
        (a memory deleted before the departure), nor the earlier texts of one it shows (a
        private memory made public): a bank shared between principals shows those.
        """
        return memory_id not in self.removed or (memory is not None and self.keeps(memory, key))

    def _own_since(self, memory_id: str, text: object) -> bool:
        """Whether the memory holds the agent's own version, newer than the one removed."""
        own = self.own.get(memory_id)
        gone = memory_of(self.removed[memory_id].item)
        return own is not None and own[1] == text and (gone is None or own[0] > gone[1])


def index(decided: Decided | None, *, expired: bool = False) -> ViewIndex:
    """Index ``decided`` by memory (a decision of None filters nothing).

    With ``expired`` (its issued view has expired) it admits nothing: every memory the
    decision judged is removed, those the view admitted as ``view_expired``.
    """
    if decided is None:
        return ViewIndex(None)
    decision = decided.decision
    expires = expiry(decided)
    items = decision.items if isinstance(decision, Issued) and not expired else ()
    admitted = {found[0]: item.text for item in items if (found := memory_of(item.id)) is not None}
    keyed = frozenset((i.key, i.text) for i in items if i.key is not None)
    removed: dict[str, tuple[int, Removal]] = {}
    for item, removal in removals(decided, expires if expired else None).items():
        found = memory_of(item)
        if found is None:
            continue
        memory_id, version = found
        if memory_id not in removed or removed[memory_id][0] < version:
            removed[memory_id] = (version, removal)
    shown = {m: r for m, (_, r) in removed.items()}
    left = {i.id for i in decided.context.left_out}  # the agent's, left out at its departure
    hidden = frozenset(
        m for m, r in shown.items() if r.item not in left and not readable(decided, r.item)
    )
    return ViewIndex(
        decided, admitted, keyed, shown, expires, expires.timestamp(), expired, unreadable=hidden
    )
