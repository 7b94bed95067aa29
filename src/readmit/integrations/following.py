"""What was withdrawn after a return, for the memory layers that serve between returns.

A return judges the workspace as it was; the memory layers then serve the agent's memory
until its next return. A teammate that revokes, closes or supersedes a fact, or states a
newer one under its key, withdraws it in readmit while the layer still holds its text; so
does the agent itself through readmit (over HTTP, say). `Following` reads the log after
the return (`readmit.integrations.news.News`, when `readmit.integrations.watch.Watch`
says it is due) and names what was withdrawn, by the store's own rules, so that a read
stops serving it at once; what the agent may not read, or a return's gates exclude
(`readmit.integrations.prior` names the same of what came before the return); and what a
verdict stored after the return (another agent's return, or judging ahead) found stale.
"""

from collections.abc import Callable, Collection, Sequence
from copy import copy
from dataclasses import InitVar, dataclass, field, fields
from datetime import datetime

from readmit.admission.context import Standing
from readmit.clock import format_time
from readmit.decide import Decided
from readmit.events import Assert, Close, Event, Recorded, Revoke, Supersede
from readmit.integrations.ends import Ends
from readmit.integrations.fallen import admitted_ids, fallen_at, spread
from readmit.integrations.news import News
from readmit.integrations.readers import Readers
from readmit.integrations.team import Member, Removal, lapsed
from readmit.integrations.watch import Watch
from readmit.reasons import Reason

REPLACED_BY_TEAMMATE = "replaced under its key by a teammate's later statement"
REPLACED_BY_ITSELF = "replaced under its key by its own later statement"
"""Why a keyed statement withdrew an item: a teammate's, or the agent's own."""
SUPERSEDED = "superseded by your later statement"
"""Why the agent's own supersession withdrew an item (a Mem0 update, or one over HTTP)."""
_EARLY = Reason.NOT_YET_VALID.value
_ALONE = {Reason.UNAUTHORIZED.value, Reason.NOT_APPLICABLE.value, Reason.MISSING_RECEIPT.value}


@dataclass(slots=True)
class Following(Readers):
    """The log after ``decided``'s return, as read so far."""

    epoch: int = 0
    """The last epoch read."""
    keys: dict[str, list[str]] = field(default_factory=dict)
    """Key -> the items under it that a newer statement under the key replaces: stated
    since the return, or before it outside C (the store names C's: `replacing`)."""
    gone: list[Removal] = field(default_factory=list)
    """Every item withdrawn so far, in the log's order (less those `back`)."""
    back: list[str] = field(default_factory=list)
    """The items withheld as not valid yet that started since (`lapse`): served again."""
    texts: dict[str, str] = field(default_factory=dict)
    """The texts of the items stated after the return (C's are the context's)."""
    own: set[str] = field(default_factory=set)
    """The items the agent itself stated after the return."""
    watch: Watch | None = None
    """When `withdrawn` reads the log again (made at its first call)."""
    noted: int = 0
    """The number of the last store of verdicts read (`judged`; the one the return's context
    read, at first): those stored later are news."""
    ends: Ends = field(default_factory=Ends)
    """When what the walk follows stops being valid (`lapse`)."""

    _keyed: dict[str, str] = field(default_factory=dict)
    """`keys` the other way: each keyed item's key."""
    _replacing: dict[str, list[str]] = field(default_factory=dict)
    """While events are met (`replacing`): key -> the items of C under it that the store
    says were withdrawn since; the first keyed statement under it that replaces them (the
    writer's rule) names them."""

    _rests: dict[str, list[str]] = field(default_factory=dict)
    """Premise -> the items of C and after the return that depend on it."""
    _out: set[str] = field(default_factory=set)
    """The items withdrawn so far (but as ``unauthorized``): the first withdrawal of each
    stands, and an item stated later on one of them falls at once (`_fallen`)."""
    _unseen: set[str] = field(default_factory=set)
    """Premises of C's items outside C (to the end of each chain) that the agent may not
    read: what rests on them falls with them, but they are never named to it."""
    _chained: set[str] = field(default_factory=set)
    """The items on the chains of premises the walk knew nothing of, stated before the
    return outside C (`readmit.integrations.news.News`: the store says whether they stand)."""
    from_start: InitVar[bool] = False
    """Whether to follow the log from its first event, knowing no item of C yet."""

    @classmethod
    def of(
        cls, current: "Following | None", decided: Decided, before: "Following | None" = None
    ) -> "Following":
        """``current`` if it follows ``decided``'s return, else a new one that does.

        ``before``, the walk of the log up to that return (`readmit.integrations.prior`):
        what it withdrew stays withdrawn, what is stated on it later falls, and what it
        knows of every item stated before (keys, premises, readers) is known here too: a
        replacement or withdrawal of one the return did not hold takes down what rests on
        it (a probe: the return's items and their premises alone were known).
        """
        if current is not None and current.decided is decided:
            return current
        made = cls(decided)
        if before is not None:
            made._out |= before._out
            made._inherit(before)
            made._settle()
        return made

    def copy(self) -> "Following":
        """A walk that goes on from here apart from this one (what it holds, copied)."""
        made = copy(self)
        for name in _HELD:
            held = getattr(self, name)
            if isinstance(held, dict):  # its lists copied too
                held = {k: list(v) if isinstance(v, list) else v for k, v in held.items()}
            setattr(made, name, held if isinstance(held, dict) else copy(held))
        made.watch = None
        return made

    def _inherit(self, before: "Following") -> None:
        """Know what ``before`` knows of the items stated up to the return but C's (copied).

        Found by set operations: ``before`` holds every item of the log, and a pass item by
        item cost a Mem0 read 58-75 ms at each return at 100k items.
        """
        context = self._context.keys()
        keyed = before._keyed.keys() - context - self._keyed.keys() - self._out
        for key in {before._keyed[i] for i in keyed}:
            held = [i for i in before.keys[key] if i in keyed]
            self.keys.setdefault(key, []).extend(held)
            self._keyed.update(dict.fromkeys(held, key))
        for premise, resting in before._rests.items():
            known = self._rests.setdefault(premise, [])
            known += [i for i in resting if i not in known]
        for item in before.scopes.keys() - context - self.scopes.keys():
            scope = self.scopes[item] = before.scopes[item]
            if not self.may_read(scope):
                self._unseen.add(item)

    def __post_init__(self, from_start: bool) -> None:
        if from_start:
            self.ends.on = False  # what ended before the return, the return judged
            return
        context = self.decided.context
        self.epoch, self.noted = context.epoch, context.noted
        self._out |= fallen_at(self.decided)  # the decision names them already
        rest = self._rest
        for item in context.items:
            if item.depends_on:
                rest(item.id, item.depends_on)
        for premise, outside in context.outside.items():  # to the end of each chain
            if (held := outside.item) is None or outside.fallen:
                self._out.add(premise)  # what rests on it fell at the return, and will
                continue
            self._rest(premise, held.depends_on)
            self.scopes[premise] = held.scope  # whose keyed statement replaces it
            if not outside.readable:
                self._unseen.add(premise)
            if held.key is not None:  # a keyed statement replaces it
                self.keys.setdefault(held.key, []).append(premise)
                self._keyed[premise] = held.key
        self._settle()

    def _settle(self) -> None:
        """Put in `_out` what rests, in a chain, on what is out (`readmit.integrations.fallen`)."""
        spread(self._out, self._rests, admitted_ids(self.decided))

    def _rest(self, item: str, premises: frozenset[str]) -> None:
        for premise in premises:
            self._rests.setdefault(premise, []).append(item)

    def withdrawn(self, member: Member) -> list[Removal]:
        """The items withdrawn since the last read of the log, each with why."""
        if self.watch is None:
            self.watch = Watch(member.store)
        due = self.watch.due()
        taken = []
        if due is not None:
            taken = self.apply(self.read(member), member.agent)
            self.watch.read(due)
        return taken + self.lapse(member.clock)

    def lapse(self, clock: Callable[[], datetime]) -> list[Removal]:
        """What ended by ``clock``, or is not valid yet, each with why; what started: `back`."""
        if not lapsed(self.ends.next, clock):
            return []
        at, ends = clock().timestamp(), self.ends
        if begun := {i for i in ends.started(at) if i not in self._out and self._told(i)}:
            self.back += sorted(begun)
            self.gone[:] = [r for r in self.gone if r.item not in begun or r.reason != _EARLY]
        early = [(i, s) for i, s in ends.early(at) if i not in self._out and self._told(i)]
        gone = [Removal(i, _EARLY, f"valid from {format_time(s)}") for i, s in early]
        for item in ends.passed(at):
            if item in self._out:
                continue
            self._out.add(item)
            self._withdrawn(item)
            if item in self.texts and self._told(item) and item not in ends.withheld:
                why = f"valid until {format_time(ends.known[item])}"
                gone.append(Removal(item, Reason.EXPIRED.value, why))
            gone += self._fallen(item, "ended")
        self.gone += gone
        return gone

    def read(self, member: Member) -> News:
        """What the store says since the last read (`apply` it): no state changes here."""
        return News.read(member, self.epoch, self.noted, self.knows)

    def apply(self, news: News, agent: str) -> list[Removal]:
        """What ``news`` takes from ``agent``, each with why: its events, verdicts, chains.

        What another reader applied already is skipped: ``news`` may be older.
        """
        later = [r for r in news.later if r.epoch > self.epoch]
        self.ends.known.update(news.ends)  # before the events: what they rest on may end
        taken = self.take(later, agent, news.fallen)
        taken += self.judged(news.judged)
        self.noted = max(self.noted, news.noted)
        for item, premises in news.chains.items():  # stated before the return, outside C
            if not self.knows(item):
                self._chained.add(item)
                self._unseen.add(item)  # never served: never named either
                self._rest(item, premises)
                self.ends.rests_on(self.decided.context, premises)
        gone: list[Removal] = []
        for item in sorted(news.fallen - self._out):
            self._out.add(item)
            self._withdrawn(item)
            if item not in self._unseen and (item in self.texts or item in self._context):
                why = "replaced under its key" if self._told(item) else ""
                gone.append(Removal(item, Reason.STALE_OR_SUPERSEDED.value, why))
            gone += self._fallen(item)
        self.gone += gone
        return taken + gone

    def knows(self, item: str) -> bool:
        """Whether the walk follows ``item``: of C, outside it on C's chains, or stated since."""
        context = self.decided.context
        known = (context.by_id, context.outside, self.texts, self._chained)
        return any(item in where for where in known)

    def judged(self, verdicts: Sequence[Standing]) -> list[Removal]:
        """What ``verdicts``, stored since the last read, take from the agent, each with why.

        A verdict binds every later return, any agent's: the next return excludes its item
        (``implicitly_invalidated``) and what rests on it; the layer served them until then.
        Not in the verifier's words: they may name what the agent may not read, which only
        the decision that confirmed it can tell (a review); the next return shows them.
        """
        gone: list[Removal] = []
        for verdict in verdicts:
            item = verdict.item
            if item in self._out:
                continue
            self._out.add(item)
            if item not in self._unseen:  # a premise outside C it may not read
                why = (
                    f"confirmed after your return by {verdict.verifier}" if self._told(item) else ""
                )
                gone.append(Removal(item, Reason.IMPLICITLY_INVALIDATED.value, why))
            gone += self._fallen(item)
        self.gone += gone
        return gone

    def take(
        self, later: Sequence[Recorded], agent: str, fallen: Collection[str] = ()
    ) -> list[Removal]:
        """What ``later`` (the events after `epoch`) takes from ``agent``, each with why.

        Revocations and closings (its own too: one made through readmit, not through the
        memory layer, which holds the text still), its teammates' supersessions, what a
        keyed statement replaced (its own too), and what others stated that it may not read.
        ``fallen``: what the store says was withdrawn since (`News`), where a keyed
        statement finds the items of C it replaced (`keys` holds none).
        """
        self.replacing(fallen)
        gone = [removal for recorded in later for removal in self.meet(recorded, agent)]
        self.replacing(())
        return gone

    def replacing(self, fallen: Collection[str]) -> None:
        """Expect the store's ``fallen`` while meeting events (`meet`).

        The items of C among them go at the first keyed statement under their key that
        replaces them.
        """
        context, self._replacing = self._context, {}
        held = [context[i] for i in fallen if i in context and i not in self._out]
        for item in sorted(held, key=lambda i: i.epoch):  # as stated
            if item.key is not None:
                self._replacing.setdefault(item.key, []).append(item.id)

    def meet(self, recorded: Recorded, agent: str) -> list[Removal]:
        """What one event after `epoch` takes from ``agent``, each with why (`take`)."""
        gone: list[Removal] = []
        for removal in self._said(recorded.event, agent):
            if removal.reason in _ALONE:  # what rests on it stands (a gate, not a withdrawal)
                gone.append(removal)
            elif removal.item not in self._out:  # the first withdrawal stands
                self._out.add(removal.item)
                named = [] if removal.item in self._unseen else [removal]
                gone += [*named, *self._fallen(removal.item)]
        self.epoch = recorded.epoch
        self.gone += gone
        return gone

    def _said(self, event: Event, agent: str) -> list[Removal]:
        """What ``event`` withdraws from ``agent`` by itself, each with why."""
        theirs = event.author != agent
        by = "a teammate" if theirs else "you"
        said: list[Removal] = []
        if isinstance(event, Revoke | Close | Supersede):
            self._withdrawn(event.target)  # no key replaces it again: only active items
        match event:  # its own too: a withdrawal made through readmit, not the layer
            case Revoke():
                why = event.why if self._told(event.target) else f"revoked by {by}"
                said.append(Removal(event.target, Reason.REVOKED.value, why))
            case Close():
                said.append(Removal(event.target, Reason.EXPIRED.value, f"closed by {by}"))
            case Supersede():  # its own too: the layer shows its own newer version (`own`)
                why = "superseded by a teammate's later statement" if theirs else SUPERSEDED
                said.append(Removal(event.target, Reason.STALE_OR_SUPERSEDED.value, why))
        if isinstance(event, Assert | Supersede):
            said += self._stated(event, theirs)
        return said

    def _fallen(self, premise: str, went: str = "was withdrawn") -> list[Removal]:
        """What depends, directly or in a chain, on ``premise``, which ``went`` just now.

        A return excludes it as ``premise_invalidated``; the layer served it on (a probe).
        Each falls as its premise is withdrawn, event by event, so what a walk names does
        not depend on how the log was split into reads (a review).
        """
        fallen: list[Removal] = []
        first, premises = premise, [premise]
        while premises:
            premise = premises.pop()
            for item in self._rests.get(premise, ()):
                if item not in self._out:
                    self._out.add(item)
                    if item not in self._unseen:  # a premise outside C it may not read
                        how = went if premise == first else "was withdrawn"
                        fallen.append(self._fall(item, premise, how))
                    premises.append(item)
        return fallen

    def _fall(self, item: str, premise: str, went: str = "was withdrawn") -> Removal:
        """``item`` withdrawn as ``premise`` ``went``; the detail where the agent may read both."""
        why = f"depends on {premise}, which {went}"
        detail = why if self._told(item) and self._told(premise) else ""
        return Removal(item, Reason.PREMISE_INVALIDATED.value, detail)

    def _stated(self, event: Assert | Supersede, theirs: bool) -> list[Removal]:
        """What a new item withdraws (the writer's key rule, whoever states it), noted.

        Another agent's item the returning agent may not read is withdrawn from it too:
        a memory bank the two share must not serve it.
        """
        item, gone = event.item, []
        if item.key is not None and not item.unconfirmed:  # the agent's own replace too
            why = REPLACED_BY_TEAMMATE if theirs else REPLACED_BY_ITSELF
            target = event.target if isinstance(event, Supersede) else None  # its own version
            expected = self._replacing.get(item.key, [])
            held = [*expected, *self.keys.get(item.key, ())]
            replaced = [i for i in held if i != target and self._replaces(event.author, i)]
            expected[:] = [i for i in expected if i not in replaced]  # for a later statement
            gone += [Removal(i, Reason.STALE_OR_SUPERSEDED.value, why) for i in replaced]
            for i in replaced:
                self._withdrawn(i)
        self.texts[item.id] = item.text
        self._rest(item.id, item.depends_on)
        self.ends.stated(self.decided.context, item)
        scope = self.scopes[item.id] = self._scope(item, event.author)
        if not theirs:  # tracked so that a later withdrawal takes it down (a review)
            self.own.add(item.id)
        if not self.may_read(scope):  # its own too, stated for others' eyes: as a return says
            gone.append(Removal(item.id, Reason.UNAUTHORIZED.value, ""))
        elif self.ends.on and scope and (gated := self.gated(item, scope)) is not None:
            gone.append(gated)  # after a return: alone, as its gates exclude it, and for good
            self.ends.withheld.add(item.id)
        if fell := sorted(item.depends_on & self._out):  # stated on what was withdrawn
            gone.append(self._fall(item.id, fell[0]))
        if item.key is not None:
            self.keys.setdefault(item.key, []).append(item.id)
            self._keyed[item.id] = item.key
        return gone

    def _withdrawn(self, item_id: str) -> None:
        """Take ``item_id`` off its key: the store replaces only active items."""
        key = self._keyed.pop(item_id, None)
        if key is not None:
            self.keys[key].remove(item_id)

    def text_of(self, item_id: str) -> str | None:
        """The text of an item of C or one stated after the return (None: neither)."""
        item = self.decided.context.by_id.get(item_id)
        return item.text if item is not None else self.texts.get(item_id)


_HELD = [f.name for f in fields(Following) if f.name not in ("decided", "watch", "epoch", "noted")]
"""What a walk holds that `Following.copy` copies (each a container)."""
