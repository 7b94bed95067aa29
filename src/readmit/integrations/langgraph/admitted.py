"""What a returned agent may read from a LangGraph store, and what it is told about the rest.

A `Lens` is built from the agent's latest decision: the identities of the LangGraph
items its issued view admits, plus what the agent itself writes after that return
(fresh state, not remembered state). A withheld decision admits nothing inherited, and
neither does an issued one once its view has expired.

readmit admits paths, and the inner store holds one value a path: the value the view
judged until a teammate writes the path again. So the lens follows the workspace's
log (`Lens.catch_up`): a path another agent wrote since, or whose admitted version was
withdrawn, is no longer shown, until the agent's next return judges it. What no longer
stands, and what rests on it, is the Mem0 and Agents SDK layers' walk of the log
(`readmit.integrations.following.Following`), which the lens keeps: it hides the path
of each item that walk takes away.
"""

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from langgraph.store.base import Item as LangGraphItem

from readmit.admission.decision import Issued
from readmit.decide import Decided
from readmit.events import Assert, Close, Revoke, Supersede
from readmit.integrations.following import Following
from readmit.integrations.langgraph.keys import Identity, identity, parse, says
from readmit.integrations.langgraph.writes import RESTORED, Written, deleted
from readmit.integrations.news import News
from readmit.integrations.team import FOREVER, Member, Removal, expiry, lapsed
from readmit.integrations.watch import Watch
from readmit.reasons import Reason

Newest = Callable[[list[str], int], dict[str, str]]
"""What the newest item of each of some keys says, up to an epoch (`readmit.store.held`)."""

OWN_TEXTS = 8
"""The agent's texts a lens keeps for a path it wrote (`Lens.own`)."""
_EARLY = Reason.NOT_YET_VALID.value


@dataclass(slots=True, weakref_slot=True, eq=False)  # compared and kept by identity
class Lens:
    """The identities an agent's reads may show since one decision."""

    decided: Decided
    following: Following
    """The walk of the log after the return: what no longer stands, and what rests on it."""
    visible: set[Identity] = field(default_factory=set)
    prefixes: set[tuple[str, ...]] = field(default_factory=set)
    """Every prefix of a visible identity's namespace: what ``list_namespaces`` may show."""

    own: dict[Identity, list[str]] = field(default_factory=dict)
    """What the agent wrote since the return, shown whatever the view says while the path
    holds a value it wrote: the texts of its writes there landed since the lens last hid
    the path, the newest last, at most `OWN_TEXTS` (two of its writes may land in the other
    order, and either value is its own)."""

    withheld: bool = False
    """Whether no view is served: none was issued, or the issued one expired."""

    expires: datetime = FOREVER
    """When the issued view stops being served."""

    deadline: float = FOREVER.timestamp()
    """``expires`` as a POSIX timestamp."""

    wake: float = FOREVER.timestamp()
    """When a read must look again before it reads (what the hot read path compares):
    ``deadline``, or sooner, the first validity end the walk follows (`Following.lapse`)."""

    expired: bool = False
    """Whether this lens replaced an issued view that expired."""

    epoch: int = 0
    """The last epoch of the workspace's log the lens has followed (``following``'s)."""

    current: dict[str, Identity] = field(default_factory=dict)
    """The path of each item whose value the lens shows (admitted, or the agent's own)."""

    watch: Watch | None = None
    """When `catch_up` reads the log again (made at the first read through the lens)."""

    paths: dict[Identity, set[str]] = field(default_factory=dict)
    """`current` the other way: each path's items whose value the lens shows."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while the lens changes: reads of several threads share it."""

    pending: set[str] = field(default_factory=set)
    """The agent's events recorded through this lens's store whose inner write has not
    landed, or failed: the path still holds what was there (`add` shows a write once it
    lands). The store's own set, shared by its lenses, so an expired view keeps it."""

    before: dict[Identity, bool] = field(default_factory=dict)
    """Whether each path was shown before the agent's latest write of it: what a value
    readmit writes back after the inner store failed that write is shown as."""

    texts: dict[Identity, str] = field(default_factory=dict)
    """The text of the version the lens shows at each path not the agent's own: a value
    found there that says otherwise is not shown (`fits`)."""

    met: dict[str, Identity | None] = field(default_factory=dict)
    """The `pending` events the lens met in the log before their write landed, each with its
    path, or None once the lens hid that path (`landed`)."""

    checked: dict[Identity, Any] = field(default_factory=dict)
    """The value last found to say ``texts``' text at each path (kept, so compared by
    identity: a store that hands out the same object is not rendered again)."""

    successor: "Lens | None" = None
    """The lens that replaced this one when its view expired (`lapsed`)."""

    waiting: dict[str, Identity] = field(default_factory=dict)
    """The path of each of the agent's own items hidden as not valid yet, until it starts."""
    started: int = 0
    """How many items of `Following.back` (started since) the lens has taken in."""

    @classmethod
    def of(cls, decided: Decided, newest: Newest | None = None) -> "Lens":
        """The lens of ``decided``: its view's LangGraph items (none if it was withheld).

        With ``newest`` (`readmit.store.held`), only those whose path's newest item up to
        the decision's epoch says the same: the path of one a later write overwrote in the
        inner store, by an agent whose item this one may not read or by hearsay, holds a
        value no view of the agent judged, and is not shown (what came after the epoch,
        the lens follows).
        """
        decision, epoch, following = decided.decision, decided.context.epoch, Following(decided)
        if not isinstance(decision, Issued):
            return cls(decided, following, withheld=True, epoch=epoch)
        expires = expiry(decided)
        lens = cls(decided, following, expires=expires, deadline=expires.timestamp(), epoch=epoch)
        paths = [(item, ident) for item in decision.items if (ident := parse(item.key))]
        keys = [i.key or "" for i, _ in paths]
        last = {} if newest is None or not paths else newest(keys, epoch)
        for item, ident in paths:
            if last.get(item.key or "", item.text) == item.text:
                lens._current(item.id, ident)
                lens.texts[ident] = item.text
        lens.show(lens.current.values())
        lens._woken()
        return lens

    def lapsed(self) -> "Lens":
        """This lens once its view has expired: only the agent's own writes since.

        One: two readers that find the view expired at once get the same (a review: the
        landing of a write was told to one, and the store kept the other).
        """
        with self.lock:
            if self.successor is not None:
                return self.successor
            lens = Lens(self.decided, self.following.copy(), withheld=True, epoch=self.epoch)
            lens.expires, lens.deadline, lens.expired = self.expires, self.deadline, True
            lens.add((ident, text) for ident, said in self.own.items() for text in said)
            met = {path for path in self.met.values() if path is not None}
            for item_id, ident in self.current.items():  # one in flight too: a removal hides it
                if ident in self.own or ident in met:
                    lens._current(item_id, ident)
            lens.pending, lens.before, lens.met = self.pending, dict(self.before), dict(self.met)
            lens.waiting, lens.started, self.successor = dict(self.waiting), self.started, lens
            lens._woken()
        return lens

    def apply(self, news: News, agent: str) -> None:
        """Take in ``news`` (hold `lock`): what ``agent``'s teammates wrote is hidden.

        A path another agent wrote holds a value no view of this agent judged (maybe one
        it may not read). The agent's own writes (from another process too) are shown, in
        the order of the log; not what readmit wrote back in its name after the inner
        store failed a write (`readmit.integrations.langgraph.reconcile.restore`: the value
        found at the path, maybe a teammate's), which keeps the path as it was. Then the
        path of each item the walk of the log takes away (`Following`) is hidden: withdrawn,
        replaced, found stale by a verdict stored since (any agent's return, or judging
        ahead), resting on one of those (the agent's own writes too), or for others' eyes.
        """
        following, hidden = self.following, False
        following.replacing(news.fallen)
        following.ends.known.update(news.ends)  # what the events rest on may end
        for recorded in news.later:
            if recorded.epoch <= following.epoch:
                continue  # another thread applied it
            event = recorded.event
            if isinstance(event, Revoke | Close | Supersede):
                path = self.current.get(event.target)
                if path is not None and deleted(event, agent):  # a failed delete writes back
                    self.before[path] = path in self.visible
            if isinstance(event, Assert | Supersede) and (ident := parse(event.item.key)):
                if event.author == agent:
                    self._own(event, ident)
                else:  # what readmit writes back there, after the agent's write failed, too
                    self.before.pop(ident, None)  # (a review: it showed the teammate's value)
                    hidden |= self._hide([ident])
            hidden |= self._gone(following.meet(recorded, agent))
        following.replacing(())
        hidden |= self._gone(following.apply(replace(news, later=(), ends={}), agent))  # known
        self.epoch = following.epoch
        self._hidden(hidden)
        self._woken()

    def _woken(self) -> None:
        """Set `wake` (an expired view's lens wakes for the ends alone)."""
        ends = self.following.ends.next
        self.wake = ends if self.expired else min(self.deadline, ends)

    def _hidden(self, hidden: bool) -> None:
        """Show only the namespaces of what is still shown, if a path was ``hidden``."""
        if hidden:
            self.prefixes = {ns[:n] for ns, _, _ in self.visible for n in range(len(ns) + 1)}

    def catch_up(self, member: Member) -> None:
        """Bring the lens up to ``member``'s workspace log: hide what teammates wrote since.

        When due (`readmit.integrations.watch.Watch`): the log and what the store says of
        it are read outside the lock and applied under it, one thread at a time, past what
        is applied. And what ended since, by the member's clock (`Following.lapse`).
        """
        watch = self.watch = self.watch or Watch(member.store)
        due, following = watch.due(), self.following
        if due is not None:
            news = following.read(member)  # outside the lock
            with self.lock:
                self.apply(news, member.agent)
                self._lapse(member.clock)  # before the watch moves: a reader meanwhile waits
                watch.read(due)
        if lapsed(self.wake, member.clock):  # what it serves may have ended (or the view):
            with self.lock:  # `wake` moves after the hiding, so a reader meanwhile waits here
                self._lapse(member.clock)

    def _lapse(self, clock: Callable[[], datetime]) -> None:
        """Hide what ended by ``clock`` or has not started; show what started (hold `lock`)."""
        if lapsed(self.wake, clock):
            following = self.following
            gone = following.lapse(clock)
            for item in following.back[self.started :]:
                ident = self.waiting.pop(item, None)
                if ident is not None and ident not in self.paths:  # nothing took the path since
                    self.add([(ident, following.texts[item])])
                    self._current(item, ident)
            self.started = len(following.back)
            self._hidden(self._gone(gone))
            self._woken()

    def since(self, member: Member) -> bool:
        """Catch up if a write was recorded while a read was at the inner store.

        readmit records a write before the inner store gets it, so a teammate's write
        recorded meanwhile may be what the read found: then the caller reads it again
        (`readmit.integrations.langgraph.paging.read_again`).
        """
        if self.watch is None or not self.watch.moved():
            return False
        self.catch_up(member)
        return True

    def _own(self, event: Assert | Supersede, ident: Identity) -> None:
        """Take in the agent's own statement at ``ident`` (a write, or readmit's restore).

        It replaces the versions the lens held there: a premise of theirs that falls later
        takes nothing of the agent's own value (a review: it hid the agent's newer write).
        """
        if not event.id.startswith(f"{RESTORED}-"):
            self.before[ident] = ident in self.visible
            if event.id in self.pending:
                self.met[event.id] = ident  # shown as it lands, unless hidden meanwhile
            else:
                self.add([(ident, event.item.text)])
            self._current(event.item.id, ident)
        elif self.before.get(ident, ident in self.visible):
            self.show([ident])
            self._current(event.item.id, ident)
            self.texts[ident] = event.item.text

    def _current(self, item_id: str, ident: Identity) -> None:
        for older in self.paths.pop(ident, ()):
            del self.current[older]
        self.current[item_id] = ident
        self.paths[ident] = {item_id}

    def _gone(self, removals: Sequence[Removal]) -> bool:
        """Hide the path of each item of ``removals`` the lens shows; whether any was shown."""
        current, waiting = self.current, self.waiting
        for r in removals:
            if r.reason == _EARLY and r.item in current:
                waiting[r.item] = current[r.item]
        return self._hide([current[r.item] for r in removals if r.item in current])

    def _hide(self, paths: list[Identity]) -> bool:
        """Stop showing ``paths``; whether any was shown."""
        shown = False
        if self.met:  # a pending write met there is not shown as it lands (`landed`)
            hidden = set(paths)
            for event in [e for e, path in self.met.items() if path in hidden]:
                self.met[event] = None
        for ident in paths:
            self.own.pop(ident, None)
            self.texts.pop(ident, None)
            self.checked.pop(ident, None)
            for item_id in self.paths.pop(ident, ()):
                del self.current[item_id]
            if ident in self.visible:
                self.visible.discard(ident)
                shown = True
        return shown

    def lapsed_at(self, clock: Callable[[], datetime]) -> bool:
        """Whether the view has expired by ``clock`` (the wall clock read cheaply if it is it)."""
        return lapsed(self.deadline, clock)

    def shows(self, item: LangGraphItem) -> bool:
        """Whether ``item`` (read from the inner store) may be shown."""
        ident = identity(item.namespace, item.key)
        return ident in self.visible and (
            self.checked.get(ident) is item.value or self.fits(ident, item)
        )

    def fits(self, ident: Identity, item: LangGraphItem) -> bool:
        """Whether ``item``, at shown path ``ident``, holds the version the lens shows.

        readmit records a write before the inner store lands it, and two writers' writes
        may land in the other order: the path then holds a value the view did not admit,
        maybe one it excluded as superseded, or one replaced before the departure (a
        probe, reviews). A value rendered as an older readmit rendered it says the admitted
        text too (`readmit.integrations.langgraph.keys.says`). So does the agent's own: a
        teammate's write recorded before it may land after it, and another store of the
        agent's shows its write before it lands (a review: both showed another's value).
        """
        value = item.value
        if self.checked.get(ident) is value:
            return True
        admitted = self.texts.get(ident)
        said = self.own.get(ident) or ([] if admitted is None else [admitted])
        if not says(item.namespace, item.key, value, said):
            return False
        self.checked[ident] = value
        return True

    def answered(
        self, writes: list[Written], ids: set[str], landed: bool, met_only: bool = False
    ) -> None:
        """The inner store answered the agent's write of events ``ids``: it ``landed``, or not.

        The lens that replaced this one is told too (`successor`): a view that expired while
        the write was in flight hid it until the next return. With ``met_only``, only what
        the lens met in the log is shown (`landed`).
        """
        lens: Lens | None = self
        while lens is not None:
            with lens.lock:
                if landed:
                    lens.pending -= ids
                    lens.landed(writes, met_only)
                else:
                    lens.met = {e: path for e, path in lens.met.items() if e not in ids}
                then = lens.successor  # read under the lock `lapsed` sets it under (a review)
            lens = then

    def landed(self, writes: Iterable[Written], met_only: bool = False) -> None:
        """Show the paths ``writes`` wrote, now landed (hold `lock`).

        Not one whose event the lens met in the log and whose path it hid since: the item
        was withheld (not valid yet), fell with its premise, or a teammate wrote the path
        (a review: the landing showed it again). The agent's own newer write of the path
        hides nothing (a review: the older one's landing was hidden). What the lens met of
        writes no longer pending (failed, and settled) is let go.
        """
        met, mine = self.met, [(e, p, t) for e, p, t in writes if e in self.met or not met_only]
        self.add([(p, t) for e, p, t in mine if met.pop(e, p) is not None])
        for event in [e for e in met if e not in self.pending]:
            del met[event]

    def add(self, written: Iterable[tuple[Identity, str]]) -> None:
        """Show the paths the agent wrote after the return too, each with its text (hold `lock`)."""
        idents = []
        for ident, text in written:
            idents.append(ident)
            said = self.own.setdefault(ident, [])
            if text in said:  # taken in at its landing, then met in the log: as it was
                said.remove(text)
            else:  # the value found there before is not this write's
                self.checked.pop(ident, None)
            said.append(text)
            del said[:-OWN_TEXTS]
        self.show(idents)

    def show(self, idents: Iterable[Identity]) -> None:
        """Show ``idents``."""
        for ident in idents:
            self.visible.add(ident)
            namespace = ident[0]
            self.prefixes.update(namespace[:n] for n in range(len(namespace) + 1))
