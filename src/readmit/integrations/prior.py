"""What came before a return that it did not judge, for the memory layers that serve after it.

A return judges only its checkpoint's items, those the agent may read that stood at its
departure. A memory layer holds more: another principal's memories in a bank they
share, and what was withdrawn before the departure (a probe found a memory revoked while
its agent was away served again after the agent's next return). `Prior` names both, by
the store's own rules (`Following`, from the log's first event).

It keeps its walk from one return to the next and reads only the events in between:
reading and walking the whole log again at each return cost a Mem0 return 0.8-0.9 s
more at 110k events, 8 ms now (`bench/prior.py`, stop 67).
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from readmit.decide import Decided
from readmit.events import Assert, Close, Revoke, Supersede
from readmit.integrations.following import Following
from readmit.integrations.team import Member, Removal
from readmit.reasons import Reason

UNAUTHORIZED = Reason.UNAUTHORIZED.value

VersionOf = Callable[[str], tuple[str, int] | None]
"""A memory layer's name for an item: its memory and version (None: not a memory's)."""


@dataclass(slots=True)
class Prior:
    """The log up to ``member``'s latest return, walked once and kept."""

    member: Member
    version_of: VersionOf | None = None
    """With it, `removals` names only each memory's newest version stated: a later
    version (another author's, say) may be the agent's to read."""
    walk: Following | None = None
    """The walk up to the last return read (None: none yet)."""
    unread: dict[str, Removal] = field(default_factory=dict)
    """The current items the agent may not read, by id."""
    itself: set[str] = field(default_factory=set)
    """The items the agent revoked, closed or superseded itself."""
    newest: dict[str, int] = field(default_factory=dict)
    """Memory -> its newest version stated (with ``version_of``)."""

    def upto(self, decided: Decided) -> Following:
        """The walk of the log up to ``decided``'s return, reading what it lacks of it.

        A return older than the walk (not ``member``'s next) starts it over.
        """
        ctx = decided.context
        walk = self.walk
        if walk is None or walk.epoch > ctx.epoch:
            walk = self.walk = Following(decided, from_start=True)
            self.unread, self.itself, self.newest = {}, set(), {}
        walk.decided = decided  # the same agent's: an older one's context is not kept alive
        if walk.epoch == ctx.epoch:
            return walk
        later = self.member.store.events(self.member.workspace, walk.epoch, ctx.epoch)
        agent = ctx.returner.agent
        walk.take(later, agent)
        for recorded in later:
            event = recorded.event
            if isinstance(event, Revoke | Close | Supersede):
                self.unread.pop(event.target, None)  # no longer current: a later version decides
                if event.author == agent:
                    self.itself.add(event.target)
            if isinstance(event, Assert | Supersede):
                item = event.item.id
                if not walk.may_read(walk.scopes[item]):
                    self.unread[item] = Removal(item, UNAUTHORIZED, "")
                if self.version_of is not None and (found := self.version_of(item)):
                    self.newest[found[0]] = max(self.newest.get(found[0], 0), found[1])
        walk.epoch = ctx.epoch
        return walk

    def following(self, current: Following | None, decided: Decided) -> Following:
        """`Following.of` ``decided``'s return, what the log withdrew before it known to it.

        An item stated after the return on one withdrawn before it falls at once; it was
        served until the next return (a review).
        """
        if current is not None and current.decided is decided:
            return current
        return Following.of(None, decided, self.upto(decided))

    def withdrawn(self, decided: Decided) -> list[Removal]:
        """The items stated and withdrawn up to ``decided``'s return that it did not judge.

        Each named as `Following` names a withdrawal; one the agent may not read as
        ``unauthorized``, with no detail. Call `upto` first.
        """
        ctx, walk = decided.context, self._walked(decided)
        left = {i.id for i in ctx.left_out}
        return [
            r if walk.may_read(walk.scopes.get(r.item)) else Removal(r.item, UNAUTHORIZED, "")
            for r in walk.gone
            if r.item not in ctx.by_id and r.item not in left and r.reason != UNAUTHORIZED
        ]

    def removals(self, decided: Decided) -> list[Removal]:
        """What a read removes though ``decided`` judged none of it (walking up to it).

        The items stated up to its return that the agent may not read, and those withdrawn
        before it (`withdrawn`), each of its memory's newest version (with ``version_of``).
        """
        self.upto(decided)
        return self._current([*self.unread.values(), *self.withdrawn(decided)])

    def _current(self, removals: list[Removal]) -> list[Removal]:
        version_of = self.version_of
        if version_of is None:
            return removals
        return [
            r
            for r in removals
            if (found := version_of(r.item)) is None or self.newest[found[0]] == found[1]
        ]

    def _walked(self, decided: Decided) -> Following:
        walk = self.walk
        if walk is None or walk.epoch != decided.context.epoch:
            raise ValueError("walk the log up to the return first (Prior.upto)")
        return walk
