"""Observations whose premise came back before the return: evidence against nothing.

A standing verdict lapses once its premise is restored (`readmit.store.verdicts`): what
its evidence withdrew is stated again by an item every reader of the invalidated item
may read, or the new item its evidence asserted is withdrawn (revoked, closed,
superseded, or replaced by a later item of its key whose author may read it). Hearsay
(an ``unconfirmed`` item) states nothing again, as it replaces nothing, nor does a
statement bounded in time, task or purpose, or resting on other items
(`readmit.events.restates`). A return
judges by the same rule: an observation so restored by an event before the return is
not judged against an item. Otherwise a return would exclude an item, its verdict would
be stored already lapsed, and the next return, with nothing new, would admit it.

The event that withdrew a statement may state it again itself: a replacement in the same
words read by fewer than the withdrawn item was is news filed again to an item whose
readers of the withdrawn item may all read it, and a withdrawal to the others
(`readmit.admission.invalidation.readers`, applied before this rule, so a verdict rests
on what its verifier was shown). Before, it was a withdrawal to every item: news an item
predated was lost for it (the family's swim came back though the pool was still closed
for the family).

"The same rule" is the store's own, asked per event and what it is shown withdrawing
(`ReturnContext.restoration`): what an event withdrew is known to the store even where
the returning agent may not read it (a revocation of, or a keyed replacement of, another
principal's item); of an event that replaced several items, each observation rests on
the one it withdrew. The text is compared, never shown. A
context no store made rebuilds the rule from each observation.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from readmit.admission.context import Restoring, StandIn
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.narrowed import (
    Handles,
    Paths,
    Steps,
    Unfollowed,
    holds_in_place,
)
from readmit.admission.invalidation.readers import as_read_by
from readmit.admission.memo import Grown
from readmit.events import Assert, Close, Recorded, Revoke, Supersede, restates
from readmit.model import Agent, Item, Scope

_Readers = tuple[frozenset[str], frozenset[str]]
_Stated = dict[tuple[_Readers, str], int]
"""A text's statements: the latest epoch of each, by its readers and its author."""


class Restorations:
    """What the events of a return's window restore, by text stated and by id withdrawn."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        rule: Callable[[str, str | None], Restoring] | None = None,
        items: Mapping[str, Item] = MappingProxyType({}),
    ) -> None:
        self.agents = agents
        self.items = items
        """The items news may have asserted, by id (the context's): their keys and readers."""
        self.rule = rule
        """What restores a verdict resting on an event (`ReturnContext.restoration`)."""
        self.stated: dict[str, _Stated] = {}
        """Each text stated by an item: the latest epoch it was stated at, by its readers and
        its author."""
        self.withdrawn: dict[str, int] = {}
        """Each item a revocation, closing or supersession withdrew, with its epoch."""
        self.keyed: dict[str, dict[str, int]] = {}
        """For each key, the latest epoch each author gave it a confirmed item (which replaces
        the key's holders that author may read)."""
        self.holders: dict[str, tuple[str, Scope | None]] = {}
        """The keyed items the events brought, by id, with their key and readers: news the
        context may lack (replaced before the departure, or not the returner's to read)."""
        self.read: set[int] = set()
        self.since: int | None = None
        """How far back the log before the departure was read (`add_from`)."""
        self.sources: list[Sequence[Recorded]] = []
        """The events taken in, as given (a later event may restore through a stand-in)."""
        self.steps: Steps | None = None
        """What it may still read to see what restored a statement: steps along stand-ins
        and statements of the same words (`Steps`; none: no bound)."""
        self._known: dict[tuple[str, str | None, str, Any], bool] = {}
        self._latest_stated: dict[tuple[str, Scope, Scope | None], tuple[_Stated, int]] = {}
        self._handles: Handles | None = None  # what may withdraw, by target and by key
        self._paths: Paths | None = None  # where each stand-in went, read from the handles
        self._rules: dict[tuple[str, str | None], Restoring] = {}
        self._principals: dict[str, str | None] = {}  # each author's, as `_readers` read it

    def add_from(self, start: int, history: Callable[[int, bool], Any]) -> None:
        """Take in every event of the log after ``start`` (``history``: the context's)."""
        if self.since is None or start < self.since:
            events = history(start, True).events
            self.add(events)
            self.sources.append(events)
            self._handles, self._paths = None, None
            self.since = start

    @classmethod
    def of(
        cls,
        delta: tuple[Recorded, ...],
        agents: Mapping[str, Agent],
        rule: Callable[[str, str | None], Restoring] | None = None,
        items: Mapping[str, Item] = MappingProxyType({}),
    ) -> "Restorations":
        """Restorations with ``delta`` taken in.

        Grown from a shorter Δ's (a later epoch's extends it): 10k events took 11 ms at
        every next return.
        """
        made = cls(agents, rule, items)
        base = _DELTAS.base(delta)
        start = 0
        if base is not None:
            ((n,), (stated, withdrawn, keyed, holders, read, principals)) = base
            if all(made._principal(a) == p for a, p in principals.items()):
                start, made.read, made._principals = n, set(read), dict(principals)
                made.stated, made.withdrawn = dict(stated), dict(withdrawn)
                made.keyed, made.holders = dict(keyed), dict(holders)
        made.add(delta[start:])
        made.sources.append(delta)
        if start < len(delta):
            taken = (made.stated, made.withdrawn, made.keyed, made.holders)
            _DELTAS.put((delta,), (*taken, frozenset(made.read), made._principals))
            made.stated, made.withdrawn = dict(made.stated), dict(made.withdrawn)
            made.keyed, made.holders = dict(made.keyed), dict(made.holders)
            made._principals = dict(made._principals)
        return made

    def add(self, events: Iterable[Recorded]) -> None:
        """Take in ``events`` (those already taken in are passed over)."""
        for recorded in events:
            if recorded.epoch in self.read:
                continue
            self.read.add(recorded.epoch)
            event = recorded.event
            if isinstance(event, Revoke | Close | Supersede):
                self.withdrawn.setdefault(event.target, recorded.epoch)
            if not isinstance(event, Assert | Supersede):
                continue
            restating, key = restates(event), event.item.key
            if not restating and key is None:
                continue  # most of Δ: nothing stated again, no key
            readers = self._readers(event)
            if restating:
                # A new dict each time: another return's may share the one it replaces, and
                # `_latest` knows a text's statements by the identity of their dict.
                stated = dict(self.stated.get(event.item.text) or {})
                by = (readers, event.author)
                stated[by] = max(stated.get(by, recorded.epoch), recorded.epoch)
                self.stated[event.item.text] = stated
            if key is not None:
                principals, roles = readers  # none: no principal known, nobody reads it
                scope = Scope(principals=principals, roles=roles) if principals else None
                self.holders[event.item.id] = (key, scope)
                if event.item.unconfirmed:
                    continue  # hearsay replaces nothing
                latest = dict(self.keyed.get(key) or {})  # a new dict: as ``stated``
                latest[event.author] = max(latest.get(event.author, 0), recorded.epoch)
                self.keyed[key] = latest

    def kept(self, item: Item, laters: Sequence[Later], news: bool = True) -> list[Later]:
        """``laters`` but those a later event restored, as ``item``'s readers see them.

        A replacement some of them may not read is a withdrawal to them, and news with
        ``news`` (`as_read_by`). What states the item's own words in its place, or as news,
        cannot invalidate it, and is left out, as the scanner leaves out news restating it
        (a review's finding: a refiling for fewer readers, made news here after the
        scanner's filter, excluded everyone's "The pool is closed." for saying it again).
        `Unfollowed` where `steps` ran out before a walk along stand-ins ended.
        """
        shown = as_read_by(item, laters, news)
        try:
            return [
                later
                for later in shown
                if later.replacement_text != item.text and not self._restored(later, item)
            ]
        except Unfollowed:
            raise Unfollowed(laters) from None  # the evidence of what is withheld unjudged

    def _restored(self, later: Later, item: Item) -> bool:
        restoring = self._restoring(later)
        text, news, said = restoring.text, restoring.news, restoring.said
        # An event shown withdrawing what it restates itself (readers unknown) restores it
        # for an item its readers cover; one shown in its words replacing it is judged.
        shown_gone = later.replacement_text is None
        if text is not None:  # what it withdrew is stated again, by one who may read it
            # What it withdrew decides too (who may state it again, what stood in for it):
            # one event may withdraw two items in the same words (a keyed replacement).
            key = (later.event_id, rests_on(later), text, item.scope)
            found = self._known.get(key)
            if found is None:
                latest = self._latest(text, item.scope, said)
                found = self._known[key] = (
                    latest > later.epoch or (latest == later.epoch and shown_gone)
                ) or self._stood_in(later, item, restoring)
            return found
        if news is not None:  # news, undone
            return self.withdrawn.get(news, later.epoch) > later.epoch or self._replaced(
                news, later.epoch
            )
        return False

    def _latest(self, text: str, scope: Scope, said: Scope | None) -> int:
        """The latest epoch ``text`` was stated at for every reader of ``scope`` (-1: never).

        By one who may read ``said``: the statement's author. Found once a return for
        every observation withdrawing ``text`` that an item of ``scope`` is judged against
        (a probe's shape: 5,000 restatements, each for other readers, were read again for
        each, 1.9 s a return); each statement is a step of the return's `steps`, as a
        walk's are.
        """
        statements = self.stated.get(text, {})
        known = self._latest_stated.get((text, scope, said))
        if known is not None and known[0] is statements:  # ``stated`` makes a new dict
            return known[1]
        latest = -1
        for (readers, author), epoch in statements.items():
            if self.steps is not None:
                self.steps.take()
            if epoch > latest and scope.read_within(*readers) and self._knew(author, said):
                latest = epoch
        self._latest_stated[(text, scope, said)] = statements, latest
        return latest

    def _stood_in(self, later: Later, item: Item, restoring: Restoring) -> bool:
        """Whether what ``later`` put in the place of what it withdrew was replaced so.

        By one that holds wherever the withdrawn statement held, readable by every reader
        of ``item``, whose author may read that statement (`follow`).
        """
        placed, withdrawn, said = restoring.in_place, restoring.withdrawn, restoring.said
        if placed is None or withdrawn is None:
            return False

        def restores(recorded: Recorded) -> bool:
            event = recorded.event
            return (
                isinstance(event, Assert | Supersede)
                and holds_in_place(event, withdrawn)
                and item.scope.read_within(*self._readers(event))
                and self._knew(event.author, said)
            )

        if self._paths is None:
            self._paths = Paths(self._touching, self._may_replace, self._scope)
        restored, _ = self._paths.follow(later.epoch, placed, restores, self.steps)
        return restored is not None

    def _touching(self, stand_in: StandIn, epoch: int) -> Iterable[Recorded]:
        """The events taken in after ``epoch`` that name ``stand_in`` or hold its key."""
        if self._handles is None:
            self._handles = Handles(self.sources)
        return self._handles.touching(stand_in, epoch)

    def _may_replace(self, author: str, scope: Scope) -> bool:
        """Whether an item of ``author``'s replaces a holder of its key read by ``scope``."""
        who = self.agents.get(author)
        return scope.readable_by(who.principal, who.role) if who else not self.agents

    def _scope(self, event: Assert | Supersede) -> Scope | None:
        """Who may read ``event``'s item (``None``: nobody known)."""
        principals, roles = self._readers(event)
        return Scope(principals=principals, roles=roles) if principals else None

    def _replaced(self, news: str, epoch: int) -> bool:
        """Whether a later item of ``news``'s key replaced it (as the store's writer does).

        Its author must be able to read it (any, where no agent is known); an item the
        context lacks is restored by nothing.
        """
        held = self.holders.get(news)
        if held is None and (item := self.items.get(news)) is not None and item.key is not None:
            held = item.key, item.scope
        if held is None:
            return False
        key, scope = held
        for author, at in (self.keyed.get(key) or {}).items():
            who = self.agents.get(author)
            if at > epoch and (
                scope is not None and scope.readable_by(who.principal, who.role)
                if who
                else not self.agents
            ):
                return True
        return False

    def _knew(self, author: str, said: Scope | None) -> bool:
        """Whether ``author`` may read a statement of scope ``said`` (any, no agent known)."""
        who = self.agents.get(author)
        if said is None or who is None:
            return said is not None and not self.agents
        return said.readable_by(who.principal, who.role)

    def _restoring(self, later: Later) -> Restoring:
        """What restores ``later``'s premise (`Restoring`): a text stated again, or an item."""
        if later.op == "evidence":
            return Restoring()  # a raw source is never withdrawn: its verdicts stand
        premise = rests_on(later)
        if self.rule is None:
            if premise is not None and premise == later.replacement_id:
                return Restoring(news=premise)
            withdrawn = self.items.get(later.withdrawn_id or "")
            said = None if withdrawn is None else withdrawn.scope
            return Restoring(later.withdrawn_text, None, said, self._placed(later), withdrawn)
        asked = later.event_id, premise
        if asked not in self._rules:
            self._rules[asked] = self.rule(*asked)
        return self._rules[asked]

    def _placed(self, later: Later) -> StandIn | None:
        """The item ``later`` brought in the place of what it withdrew (``None``: none)."""
        new = later.replacement_id
        if new is None or later.withdrawn_id is None:
            return None
        if (held := self.holders.get(new)) is not None:
            return new, *held
        found = self.items.get(new)
        return None if found is None else (new, found.key, found.scope)

    def _readers(self, event: Assert | Supersede) -> _Readers:
        if event.author not in self._principals:
            self._principals[event.author] = self._principal(event.author)
        return event.item.readers(self._principals[event.author])

    def _principal(self, author: str) -> str | None:
        found = self.agents.get(author)
        return None if found is None else found.principal


def rests_on(later: Later) -> str | None:
    """The item a verdict on ``later`` rests on: what it withdrew, or brought.

    What it brought where it is news, or states what it replaced again in the same words
    and stands in for it (`readmit.admission.invalidation.observations`): then the verifier
    judged those words, news filed again, not the withdrawal, and withdrawing the new item
    restores the premise (`readmit.store.restoring`).
    """
    if later.withdrawn_id is None or later.replacement_text == later.withdrawn_text:
        return later.replacement_id
    return later.withdrawn_id


_DELTAS: Grown[
    tuple[
        dict[str, _Stated],
        dict[str, int],
        dict[str, dict[str, int]],
        dict[str, tuple[str, Scope | None]],
        frozenset[int],
        dict[str, str | None],
    ]
] = Grown()
"""What `Restorations.of` took in of recent Δs, with the principal it read of each author
(an agent's own may be another in another context: then it is taken in again)."""
