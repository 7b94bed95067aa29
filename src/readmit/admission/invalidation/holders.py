"""Which items hold each key as Δ goes on: what a keyed item replaces, as the writer does.

A keyed item replaces every item of its key that still holds it and that its author may
read (`readmit.store.writer`); hearsay (``unconfirmed``) replaces nothing, and a
revocation, closing or supersession ends its target's hold. `Holders` follows that in
epoch order, one pass over Δ and over each key's items. Holders are grouped by who may
read them (their scope), so an author is tested once per group, not once per holder:
items no later author may replace (hearsay, another principal's) cost nothing as they
pile up.
"""

from collections.abc import Collection, Mapping

from readmit.events import Assert, Supersede
from readmit.model import ANY, Agent, Item, Scope

SameKey = tuple[list[int], list[Item]]
"""Items sharing a key, oldest first, and their epochs."""

_Held = dict[Scope, dict[str, Item]]
"""A key's holders by scope, each group by id in arrival order."""


class Holders:
    """The items holding each key of ``by_key`` as the events before an epoch left them.

    Each key's items arrive in epoch order, as far as the event being read: whether or
    not their own events are read (a verifier shown no news reads only withdrawals).
    ``gone``: ids withdrawn (revoked, closed, superseded) by events not read, which hold
    nothing though ``by_key`` lists them.
    """

    def __init__(
        self, by_key: Mapping[str, SameKey], agents: Mapping[str, Agent], gone: Collection[str] = ()
    ) -> None:
        self.agents = agents
        self.by_key = by_key
        self.gone = set(gone)
        self.held: dict[str, _Held] = {key: {} for key in by_key}
        self.readers: dict[str, dict[str, set[Scope]]] = {key: {} for key in by_key}
        """For each key, the scopes of its holders by each principal they name."""
        self.arrived = dict.fromkeys(by_key, 0)
        """How many of each key's items have arrived (or been passed over)."""

    def replace(self, event: Assert | Supersede, epoch: int, new: Item | None) -> list[Item]:
        """What ``event``'s keyed item (at ``epoch``) replaces, newest first.

        ``new`` (the item itself) then holds the key.
        """
        key = event.item.key or ""
        if key not in self.held:
            return []
        self._until(key, epoch)
        epochs = self.by_key[key][0]
        while self.arrived[key] < len(epochs) and epochs[self.arrived[key]] == epoch:
            self.arrived[key] += 1  # ``new`` itself: it arrives below, as this event says
        replaced = self._arrive(key, new, event.item.unconfirmed, event.author)
        return sorted(replaced, key=lambda i: i.epoch, reverse=True)

    def withdraw(self, item: Item | None) -> None:
        """``item`` was revoked, closed or superseded: it holds its key no more."""
        if item is None:
            return
        self.gone.add(item.id)
        if item.key is not None and item.key in self.held:
            members = self.held[item.key].get(item.scope)
            if members is not None:
                members.pop(item.id, None)

    def _until(self, key: str, epoch: int) -> None:
        """Let ``key``'s items from before ``epoch`` arrive, each replacing what it may.

        One withdrawn since holds nothing itself.
        """
        epochs, group = self.by_key[key]
        n = self.arrived[key]
        while n < len(group) and epochs[n] < epoch:
            item = group[n]
            held = None if item.id in self.gone else item
            self._arrive(key, held, item.receipt is None, item.author)
            n += 1
        self.arrived[key] = n

    def _arrive(self, key: str, item: Item | None, hearsay: bool, author: str) -> list[Item]:
        """``item`` (``author``'s) takes ``key``: out go the groups its author may read."""
        held, readers = self.held[key], self.readers[key]
        replaced: list[Item] = []
        for scope in [] if hearsay else self._readable(key, author):
            replaced += held.pop(scope).values()
            for principal in scope.principals:
                readers[principal].discard(scope)
        if item is not None:
            if item.scope not in held:
                for principal in item.scope.principals:
                    readers.setdefault(principal, set()).add(item.scope)
            held.setdefault(item.scope, {})[item.id] = item
        return replaced

    def _readable(self, key: str, author: str) -> list[Scope]:
        """The scopes of ``key``'s holders ``author`` may read (so replaces).

        Only the groups naming the author's principal (or any) are looked at: groups no
        author may replace (hearsay, other principals' items) may pile up at no cost.
        """
        held = self.held[key]
        if not self.agents:
            return [scope for scope, members in held.items() if members]
        who = self.agents.get(author)
        if who is None:
            return []
        readers = self.readers[key]
        named = readers.get(who.principal, set()) | readers.get(ANY, set())
        return [s for s in named if held.get(s) and s.readable_by(who.principal, who.role)]
