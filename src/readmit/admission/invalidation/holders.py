"""Which items hold each key as Δ goes on: what a keyed item replaces, as the writer does.

A keyed item replaces every item of its key that still holds it and that its author may
read (`readmit.store.writer`); hearsay (``unconfirmed``) replaces nothing, and a
revocation, closing or supersession ends its target's hold. `Holders` follows that in
epoch order, one pass over Δ and over each key's items, so a key restated thousands of
times costs as much as thousands of keys.
"""

import bisect
from collections.abc import Mapping

from readmit.admission.invalidation.links import may_replace
from readmit.events import Assert, Supersede
from readmit.model import Agent, Item

SameKey = tuple[list[int], list[Item]]
"""Items sharing a key, oldest first, and their epochs."""


class Holders:
    """The items holding each key of ``by_key``, from the epoch ``first`` on."""

    def __init__(
        self, by_key: Mapping[str, SameKey], agents: Mapping[str, Agent], first: int
    ) -> None:
        self.agents = agents
        self.held: dict[str, list[Item]] = {}
        for key, (epochs, group) in by_key.items():
            held: list[Item] = []
            for item in group[: bisect.bisect_left(epochs, first)]:  # from before ``first``
                self._arrive(held, item, item.receipt is None)
            self.held[key] = held

    def replace(self, event: Assert | Supersede, new: Item | None) -> list[Item]:
        """What ``event``'s keyed item replaces, newest first; ``new`` then holds the key."""
        held = self.held.get(event.item.key or "")
        if held is None:
            return []
        replaced = [] if event.item.unconfirmed else self._take(held, event.author)
        if new is not None:
            held.append(new)
        return replaced[::-1]

    def withdraw(self, item: Item | None) -> None:
        """``item`` was revoked, closed or superseded: it holds its key no more."""
        if item is not None and item.key is not None and item.key in self.held:
            held = self.held[item.key]
            held[:] = [h for h in held if h is not item]

    def _arrive(self, held: list[Item], item: Item, hearsay: bool) -> None:
        if not hearsay:
            self._take(held, item.author)
        held.append(item)

    def _take(self, held: list[Item], author: str) -> list[Item]:
        """Take out of ``held`` what ``author`` may read (replaces), and return it."""
        taken = [h for h in held if may_replace(self.agents, author, h)]
        if taken:
            held[:] = [h for h in held if not may_replace(self.agents, author, h)]
        return taken
