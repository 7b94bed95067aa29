"""When what a walk of the log follows stops being valid (`readmit.integrations.following`).

An item's validity ends at its ``valid_to``: a return excludes it from then on
(``expired``), and what rests on it (``premise_invalidated``). Nothing in the log says
so, so a memory layer that serves between returns asks the clock: each item it serves
that was stated since the return, and each premise that something it serves rests on (in
C, outside it, on a chain the store traced), is due at its end, the earliest first.

An item whose validity starts later is excluded until then (``not_yet_valid``): what is
stated since with a start still ahead at the read that meets it is not served either,
until its start.
"""

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from math import inf

from readmit.admission.context import ReturnContext
from readmit.events import ItemDraft


@dataclass(slots=True)
class Ends:
    """The validity ends a walk follows, the earliest first."""

    known: dict[str, datetime] = field(default_factory=dict)
    """The ends of the items outside C the walk met (stated since, or on a chain), by id."""
    due: list[tuple[float, str]] = field(default_factory=list)
    """A heap of (end as a POSIX timestamp, item) of the ends followed."""
    followed: set[str] = field(default_factory=set)
    """The items of ``due``, and those taken from it."""
    walked: set[str] = field(default_factory=set)
    """The premises `rests_on` met (their own premises met too, in C or outside it)."""
    on: bool = True
    """Whether ends are followed (a walk of the log before a return follows none)."""
    starting: list[tuple[str, datetime]] = field(default_factory=list)
    """The items stated since with a start, met but not yet held against the clock (`early`)."""
    withheld: set[str] = field(default_factory=set)
    """The items withheld at the read that met them, not named again at their end: those
    `early` found not valid yet, until they start (`started`), and those a gate excludes
    for good (`readmit.integrations.readers.Readers.gated`)."""
    starts: list[tuple[float, str]] = field(default_factory=list)
    """A heap of (start as a POSIX timestamp, item) of the items ``withheld``."""

    @property
    def next(self) -> float:
        """The earliest end followed, as a POSIX timestamp (infinity: none).

        Minus infinity while an item stated since has a start to hold against the clock
        (`early`); the earliest start of one withheld, if sooner.
        """
        if self.starting:
            return -inf
        end = self.due[0][0] if self.due else inf
        return min(end, self.starts[0][0]) if self.starts else end

    def stated(self, context: ReturnContext, item: ItemDraft) -> None:
        """Follow an item stated since the return (served until its end), and its premises."""
        if (end := item.validity.valid_to) is not None and self.on:
            self.known[item.id] = end
            self.follow(item.id, end)
        if (start := item.validity.valid_from) is not None and self.on:
            self.starting.append((item.id, start))
        self.rests_on(context, item.depends_on)

    def early(self, at: float) -> list[tuple[str, datetime]]:
        """The items stated since, met since the last call, that start after ``at``; with it.

        ``at``: a POSIX timestamp. Each is held against the clock once, at the first read after
        it is met.

        What it rests on does not wait with it: a return admits that (``not_yet_valid`` is
        not an invalidation). Each is withheld until its start (`started`).
        """
        met, self.starting = self.starting, []
        early = [
            (i, start) for i, start in met if start.timestamp() > at and i not in self.withheld
        ]
        for item, start in early:
            self.withheld.add(item)
            heapq.heappush(self.starts, (start.timestamp(), item))
        return early

    def started(self, at: float) -> list[str]:
        """The items withheld whose start is at or before ``at`` (a POSIX timestamp), taken."""
        starts, begun = self.starts, []
        while starts and starts[0][0] <= at:
            begun.append(heapq.heappop(starts)[1])
        self.withheld.difference_update(begun)
        return begun

    def rests_on(self, context: ReturnContext, premises: Iterable[str]) -> None:
        """Follow ``premises`` of what the walk serves, and theirs in C or outside it.

        Only what rests on something served: C's own items and their premises end the view
        (a view expires at their first end), and following each return's whole C cost the
        walk's making 65-90 ms at 100k items, half of them premises with an end.
        """
        todo = list(premises) if self.on else []
        while todo:
            premise = todo.pop()
            if premise in self.walked:
                continue
            self.walked.add(premise)
            item = context.item_or_premise(premise)
            if item is None:  # stated since, or on a chain: its own premises are followed
                self.follow(premise, self.known.get(premise))
            else:
                self.follow(premise, item.validity.valid_to)
                todo += item.depends_on

    def follow(self, item_id: str, end: datetime | None) -> None:
        """Take ``item_id`` down at ``end`` (None: it never ends)."""
        if end is not None and self.on and item_id not in self.followed:
            self.followed.add(item_id)
            heapq.heappush(self.due, (end.timestamp(), item_id))

    def passed(self, at: float) -> list[str]:
        """The items followed whose end is at or before ``at`` (a POSIX timestamp), taken."""
        due, taken = self.due, []
        while due and due[0][0] <= at:
            taken.append(heapq.heappop(due)[1])
        return taken

    def __copy__(self) -> "Ends":
        """Ends followed on apart from these (what each holds copied)."""
        held = (dict(self.known), list(self.due), set(self.followed), set(self.walked))
        return Ends(*held, self.on, list(self.starting), set(self.withheld), list(self.starts))
