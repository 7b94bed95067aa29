"""Where a replacement holds for fewer uses than what it replaced, and what undoes that.

A booking "confirmed until Friday" in the place of one with no end is a withdrawal of the
first for every use after Friday (`readmit.admission.invalidation.observations`). A later
item of the key, or a supersession, that holds wherever the first booking held (a booking
"confirmed for the whole stay") undoes it: the first booking's statement is held again, in
other words, as if that item had replaced it directly, and a verdict resting on the
narrowing lapses (`readmit.admission.invalidation.restored`, `readmit.store.verdicts`).
What replaced the stand-in is judged in its turn, as any replacement is.
"""

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from heapq import merge
from operator import attrgetter
from typing import Any

from readmit.admission.context import StandIn
from readmit.clock import format_time
from readmit.events import Assert, Close, Recorded, Revoke, Supersede
from readmit.model import ANY, Item, Scope


def narrowed(event: Assert | Supersede, old: Item) -> str | None:
    """Where ``event``'s item holds for fewer uses than ``old`` held its statement, in words.

    Another task or fewer purposes, a shorter time (an end sooner, or a start later than
    ``old``'s that has not come when it is made), only as hearsay, or resting on items
    ``old`` did not: ``None`` when it holds wherever ``old`` did. Readers are not compared
    here: fewer readers may still be every reader of what rested on ``old``.
    """
    return ", ".join(where() for where in _narrowings(event, old)) or None


def holds_in_place(event: Assert | Supersede, withdrawn: Item) -> bool:
    """Whether ``event``'s item, replacing a stand-in, holds wherever ``withdrawn`` held.

    Hearsay replaces nothing. Asked at every step of a walk along a chain of stand-ins:
    nothing is put in words.
    """
    return not event.item.unconfirmed and next(_narrowings(event, withdrawn), None) is None


def _narrowings(event: Assert | Supersede, old: Item) -> Iterator[Callable[[], str]]:
    """Each way ``event``'s item holds for fewer uses than ``old`` (`narrowed`), to be worded."""
    draft = event.item
    if draft.task not in (ANY, old.scope.task):
        yield lambda: f"only for the task {draft.task!r}"
    if ANY not in draft.purposes and not old.scope.purposes <= draft.purposes:
        yield lambda: f"only for {', '.join(sorted(draft.purposes))}"
    start, end, was = draft.validity.valid_from, draft.validity.valid_to, old.validity
    starts_later = (
        start is not None
        and not draft.validity.started(event.at)
        and (was.valid_from is None or was.valid_from < start)
    )
    if starts_later or (end is not None and (was.valid_to is None or was.valid_to > end)):
        yield lambda: f"only {_interval(start, end)}"
    if draft.unconfirmed and old.receipt is not None:
        yield lambda: "unconfirmed"
    if not draft.depends_on <= old.depends_on:
        yield lambda: "resting on other items"


def _interval(start: datetime | None, end: datetime | None) -> str:
    since = "" if start is None else f"from {format_time(start)}"
    return " ".join(filter(None, (since, "" if end is None else f"until {format_time(end)}")))


Touching = Callable[[StandIn, int], Iterable[Recorded]]
"""The events after an epoch that may withdraw a stand-in (name its id as their target, or
hold its key), in epoch order; any others among them are passed over."""


_EPOCH = attrgetter("epoch")


class Handles:
    """The events of a log that may withdraw an item, by target and by key, read once.

    Each list in epoch order; news with no key replaces nothing, and is in none. A walk
    then reads only the events that touch what it follows, not the log after its start.
    """

    def __init__(self, sources: Iterable[Sequence[Recorded]]) -> None:
        found = {r.epoch: r for source in sources for r in source}
        self._by: dict[tuple[str, str | None], list[Recorded]] = {}
        for n in sorted(found):
            event = found[n].event
            if isinstance(event, Revoke | Close | Supersede):
                self._by.setdefault(("target", event.target), []).append(found[n])
            if isinstance(event, Assert | Supersede) and event.item.key is not None:
                self._by.setdefault(("key", event.item.key), []).append(found[n])

    def touching(self, stand_in: StandIn, epoch: int) -> Iterator[Recorded]:
        """`Touching`: the events after ``epoch`` that name ``stand_in`` or hold its key."""
        held, key, _ = stand_in
        return merge(self.targeting(held, epoch), self._after(("key", key), epoch), key=_EPOCH)

    def targeting(self, item: str, epoch: int) -> Iterator[Recorded]:
        """The events after ``epoch`` that revoke, close or supersede ``item``."""
        return self._after(("target", item), epoch)

    def _after(self, handle: tuple[str, str | None], epoch: int) -> Iterator[Recorded]:
        return after(self._by.get(handle, []), epoch)


def after(found: Sequence[Recorded], epoch: int) -> Iterator[Recorded]:
    """The events of ``found`` (in epoch order) after ``epoch``, read in place, not copied.

    A walk along a chain of replacements of one key reads each from where it stands.
    """
    return (found[n] for n in range(bisect_right(found, epoch, key=_EPOCH), len(found)))


def follow(
    touching: Touching,
    start: int,
    stand_in: StandIn,
    restores: Callable[[Recorded], bool],
    replaces: Callable[[str, Scope], bool],
    readers: Callable[[Assert | Supersede], Scope | None],
) -> tuple[int | None, StandIn | None]:
    """Where the events after epoch ``start`` (the evidence's) take ``stand_in``.

    The stand-in is followed from one replacement to the next: a supersession of it, or a
    confirmed item of its key whose author may read it (``replaces(author, its readers)``,
    as the store's writer replaces; ``readers``: who may read an event's item). The first
    that ``restores`` (holds wherever the withdrawn statement held, for every reader of the
    invalidated item) restores the premise: its epoch is returned. One that does not stands
    in its turn: the last is returned, or ``None`` where it was revoked or closed (nothing
    holds the statement, and nothing will restore it so). ``touching``: the events that
    may withdraw a stand-in after an epoch.
    """
    return Paths(touching, replaces, readers).follow(start, stand_in, restores)


class Unfollowed(Exception):
    """A walk its return's `Steps` ran out on: whether a later event restores is not known.

    ``shown``: the observations being judged when it did, where known.
    """

    def __init__(self, shown: Sequence[Any] = ()) -> None:
        super().__init__()
        self.shown = shown


class Steps:
    """How many more steps a return's walks may ask whether they restore (`Paths.follow`).

    The steps are shared by all the walks: each judged observation that put a stand-in in
    a withdrawn statement's place is followed along the stand-ins after it. Walks share
    where each step leads, but each asks every step after its start, so a return judging
    128 items against a chain of 20,000 replacements asked 2.6 million (3.0 s); what a
    return does is bounded by its policy, not by the length of a chain (`Policy.walk_steps`).
    Each statement of a withdrawn text read to see if it restates it is a step too
    (`readmit.admission.invalidation.restored`).

    The walks of an item whose judging began with steps left (`begin`) are followed to their
    ends, as a verifier call under way is not cut short: a return passes its steps by one
    item's walks at most, and judges each item it begins, so an item whose walks alone
    need more than the policy allows is still judged (a review's finding: cut short, it
    was withheld at every return). An item begun with none left is `Unfollowed` at its
    first step.
    """

    __slots__ = ("finishing", "left")

    def __init__(self, left: int) -> None:
        self.left = left
        self.finishing = False
        """Whether the item being judged began with steps left (`begin`)."""

    def begin(self) -> None:
        """An item is judged: its walks finish if it begins with steps left."""
        self.finishing = self.left > 0

    def end(self) -> None:
        """The item is judged: the steps bound the walks of the next one."""
        self.finishing = False

    @property
    def spent(self) -> bool:
        """Whether none is left, to the item being judged."""
        return self.left <= 0 and not self.finishing

    def take(self) -> None:
        """One step more, or `Unfollowed` where they are `spent`."""
        if self.spent:
            raise Unfollowed
        self.left -= 1


_At = tuple[StandIn, int]
"""A stand-in, from an epoch on."""


class _Step:
    """A stand-in's next replacement, and what then stands in (a step of `Paths`).

    ``None`` where nothing replaced it; ``revoked`` where it was revoked or closed.
    ``next``: the step of what then stands in, once a walk has looked for it.
    """

    __slots__ = ("next", "recorded", "revoked", "then")

    def __init__(self, recorded: Recorded | None, then: _At | None, revoked: bool) -> None:
        self.recorded, self.then, self.revoked = recorded, then, revoked
        self.next: _Step | None = None


class Paths:
    """The replacements each stand-in goes through, each found once (`follow`).

    Walks share their chains: an observation that replaced a stand-in is itself a step of
    the walk from an earlier one. A return judging many observations on a chain of L
    replacements read the log for each step of each walk (32 pickups on a chain of 5,000:
    1.1 s a return); each step is now looked for once, and a walk only asks each step
    whether it restores.
    """

    def __init__(
        self,
        touching: Touching,
        replaces: Callable[[str, Scope], bool],
        readers: Callable[[Assert | Supersede], Scope | None],
    ) -> None:
        self._touching, self._replaces, self._readers = touching, replaces, readers
        self._steps: dict[_At, _Step] = {}

    def follow(
        self,
        start: int,
        stand_in: StandIn,
        restores: Callable[[Recorded], bool],
        steps: "Steps | None" = None,
    ) -> tuple[int | None, StandIn | None]:
        """`follow`, each step found once for every walk.

        ``steps``: what the walks may still ask (none: no bound); `Unfollowed` once it is
        spent before the walk ends.
        """
        current, step = stand_in, self._step((stand_in, start))
        while step.recorded is not None and step.then is not None:
            if steps is not None:
                steps.take()
            if restores(step.recorded):
                return step.recorded.epoch, current
            current = step.then[0]
            if step.next is None:
                step.next = self._step(step.then)
            step = step.next
        return None, None if step.revoked else current

    def _step(self, at: _At) -> _Step:
        """The next replacement of the stand-in ``at`` after its epoch, found once."""
        if (found := self._steps.get(at)) is not None:
            return found
        current, start = at
        made = _Step(None, None, False)
        for recorded in self._touching(current, start):
            event = recorded.event
            if isinstance(event, Revoke | Close) and event.target == current[0]:
                made = _Step(None, None, True)
                break
            if isinstance(event, Assert | Supersede) and _replaces(event, current, self._replaces):
                then = ((event.item.id, event.item.key, self._readers(event)), recorded.epoch)
                made = _Step(recorded, then, False)
                break
        self._steps[at] = made
        return made


def _replaces(
    event: Assert | Supersede, current: StandIn, may: Callable[[str, Scope], bool]
) -> bool:
    """Whether ``event`` withdrew the stand-in ``current`` (superseded it, or its key)."""
    held, key, scope = current
    if event.item.id == held:
        return False
    if isinstance(event, Supersede) and event.target == held:
        return True
    return (
        key is not None
        and scope is not None
        and event.item.key == key
        and not event.item.unconfirmed
        and may(event.author, scope)
    )
