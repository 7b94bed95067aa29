"""ReturnContext: the one immutable ``C = D_a ⊕ Δ`` every decision of a return is made on."""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from types import MappingProxyType
from typing import NamedTuple, Protocol, TypeVar

from readmit.admission.memo import Grown
from readmit.events import Recorded
from readmit.model import Agent, Checkpoint, Experience, Item, Obligation, Returner, Scope

StandIn = tuple[str, str | None, Scope | None]
"""An item standing in for a withdrawn statement: its id, key and readers (``None``:
unknown, replaced by no key)."""


class Restoring(NamedTuple):
    """What restores a verdict resting on an event.

    The text whose restatement does, with who may read the statement it withdrew; or the
    item whose withdrawal does; or neither. An event that brought an item in the place of
    the statement it withdrew also restores it where that item (``in_place``: its id, key
    and readers) is replaced by one that holds wherever the statement (``withdrawn``) held
    (`readmit.admission.invalidation.narrowed`).
    """

    text: str | None = None
    news: str | None = None
    said: Scope | None = None
    in_place: StandIn | None = None
    withdrawn: Item | None = None


_ID = attrgetter("id")
V = TypeVar("V")
_BY_ID: Grown[dict[str, Item]] = Grown()
"""The id index of recent contexts' item tuples."""


def items_by_id(items: tuple[Item, ...]) -> Mapping[str, Item]:
    """``items`` by id, made once per tuple (not to be changed: copy it to add to it).

    A store hands returns at one epoch the same tuple (`readmit.store.bodies.Departures`),
    and a 100k-item index costs 30 times its copy.
    """
    known = _BY_ID.found(items)
    if known is not None:
        return known
    # At a later epoch, the index of the part remembered is copied and what follows added.
    base = _BY_ID.base(items)
    start, made = (0, {}) if base is None else (base[0][0], dict(base[1]))
    made.update(zip(map(_ID, items[start:]), items[start:], strict=True))  # in C
    return _BY_ID.put((items,), made)


def events_by_id(delta: tuple[Recorded, ...]) -> Mapping[str, Recorded]:
    """Δ's events by id, made once per tuple and grown from the last (as `items_by_id`)."""
    known = _EVENTS.found(delta)
    if known is not None:
        return known
    base = _EVENTS.base(delta)
    start, made = (0, {}) if base is None else (base[0][0], dict(base[1]))
    made.update((r.event.id, r) for r in delta[start:])
    return _EVENTS.put((delta,), made)


def receipt_events(items: tuple[Item, ...]) -> frozenset[str]:
    """The events ``items`` came from, made once per tuple and grown from the last."""
    known = _RECEIPTS.found(items)
    if known is not None:
        return known
    base = _RECEIPTS.base(items)
    start, made = (0, frozenset[str]()) if base is None else (base[0][0], base[1])
    more = {i.receipt.event_id for i in items[start:] if i.receipt is not None}
    return _RECEIPTS.put((items,), made | more if more else made)


_EVENTS: Grown[dict[str, Recorded]] = Grown()
_RECEIPTS: Grown[frozenset[str]] = Grown()


def grown_base(memo: "Grown[V]", ctx: "ReturnContext") -> tuple[int, V] | None:
    """The value ``memo`` made for tuples ``ctx.tuples`` extend, and how much of Δ it covers.

    ``None`` if there is none, or if it was made for a C or left-out lacking some of
    this one's: another reader's C may be a prefix of this one (same Δ, fewer items of
    its D_a, or fewer left out), and what was made for it lacks what only this reader
    quotes.
    """
    base = memo.base(*ctx.tuples)
    if base is None:
        return None
    lengths, value = base
    if lengths[0] < len(ctx.departure.item_ids):
        return None
    if len(lengths) > 2 and lengths[2] != len(ctx.left_out):
        return None
    return lengths[1], value


@dataclass(frozen=True, slots=True, kw_only=True)
class Standing:
    """A confirmed implicit invalidation the store keeps: it binds every later return.

    It applies to every agent until something restores the premise (the store
    lapses it then, and the item is screened again against what came after the evidence).
    """

    item: str
    evidence: tuple[str, ...]
    """The event (and item) ids behind the verdict."""
    verifier: str
    confidence: float
    detail: str
    decided_epoch: int
    """The epoch of the return that confirmed it."""
    reader: tuple[str, str] | None = None
    """The (principal, role) of the return that confirmed it: ``detail`` may name what
    only such readers may read (``None``: not known)."""
    premise: str | None = None
    """The item its judged observation withdrew, or brought as news
    (`readmit.admission.invalidation.restored.rests_on`; ``None``: not known)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Outside:
    """A premise of C's items that C does not hold (`ReturnContext.outside`)."""

    fallen: bool
    """Whether it no longer stands, by the rule a departure judges premises by: what
    rests on it falls (``premise_invalidated``)."""
    readable: bool
    """Whether the returning agent may read it: one it may not is never shown to it."""
    item: Item | None = None
    """The premise as stored, while it stands: a return screens it as it screens C's
    premises, as the same history without the departure does, its Δ holding the premise.
    Its own premises outside C are in `ReturnContext.outside` too: it falls with any item
    of C the chain reaches (`readmit.admission.invalidation.propagation.outside_seeds`)."""


Told = tuple[Recorded, tuple[Item | None, ...]]
"""An event of the log, and the items it is about (`ReturnContext.named`; ``None``: one
the store lacks)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class History:
    """Events recorded before the departure, for items screened less far than D_a's epoch."""

    events: tuple[Recorded, ...]
    """The events in (after, departure epoch], in epoch order."""
    items: tuple[Item, ...]
    """The items those events withdrew or replaced (so observations can quote them)."""
    gone: frozenset[str] = frozenset()
    """Of ``items``, those withdrawn before the events (they hold no key any more)."""


class HistoryLoader(Protocol):
    """Loads the events after an epoch and up to the departure epoch.

    The log is append-only, so what it returns for an epoch never changes.
    """

    def __call__(self, after: int, news: bool = True) -> History:
        """The events in (``after``, departure] and the items they withdrew or replaced.

        With ``news`` false, only the events that can withdraw an item are needed (all
        a verifier that judges no news is shown); a loader may return more.
        """
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ReturnContext:
    """The post-absence checkpoint C for one return cycle."""

    workspace: str
    cycle: str
    """Return-cycle id: binds the view to this one return."""
    returner: Returner
    departure: Checkpoint
    """D_a: what the agent could see when it left."""
    epoch: int
    """The current epoch; Δ covers epochs (departure.epoch, epoch]."""
    items: tuple[Item, ...]
    """The items of D_a and every item asserted during Δ."""
    delta: tuple[Recorded, ...]
    """Δ: the events recorded after departure, in epoch order."""
    obligations: tuple[Obligation, ...] = ()
    """Obligations open at return (any role)."""
    evidence: frozenset[str] = frozenset()
    """Ids of evidence sources recorded with a receipt (a store's context: those its items
    cite, all the gate asks about)."""
    experiences: tuple[Experience, ...] = ()
    """The returning agent's private bank (quarantined until readmission)."""
    standing: Mapping[str, Standing] = field(default_factory=dict)
    """Confirmed implicit invalidations of items of C, by item (lapsed ones left out)."""
    screened: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """By verifier name, the epoch through which each item of C (and each premise outside
    C that stands) was screened. An item absent here was screened through its own epoch
    (it was never screened)."""
    agents: Mapping[str, Agent] = field(default_factory=dict)
    """The workspace's agents by id: whose writes may touch which items (empty: not
    checked, every author may read what it replaces)."""
    history: HistoryLoader | None = None
    """Events before the departure, for items screened less far than it; ``None``: only Δ
    is screened against (each item is taken as screened through the departure)."""
    keys_before: Callable[[Sequence[str]], Collection[str]] | None = None
    """Of the keys given, those some item held at or before the departure
    (`readmit.admission.invalidation.unquoted`); ``None``: every key may have been."""
    restoration: Callable[[str, str | None], Restoring] | None = None
    """What restores a verdict resting on an event, by its id and the item the verdict rests
    on (`readmit.admission.invalidation.restored.rests_on`; `readmit.store.restoring`):
    the text whose restatement does (even one the returning agent may not read; never
    shown), with who may read the statement it withdrew (so may state it again), or the
    item whose withdrawal does; neither, nothing. A return judges by the same rule
    (`readmit.admission.invalidation.restored`). ``None``: the rule is rebuilt from each
    observation."""
    quote: Callable[[Sequence[str], Sequence[str]], tuple[Item, ...]] | None = None
    """The items held at the departure, named by one of the ids or holding one of the keys
    given (`readmit.store.quoted`): what Δ withdraws that D_a lacks is quoted as it was
    held (`readmit.admission.invalidation.unquoted.quoted`). ``None``: it goes unquoted."""
    named: Callable[[Sequence[str]], Mapping[str, "Told"]] | None = None
    """The events before the departure of the ids given, by id, each with the items it is
    about: those it stated or withdrew, and those its key replaced
    (`readmit.store.history.named`). One an exclusion cites is shown to the returning
    agent when it may read all of them (`readmit.admission.hidden`). ``None``: such an
    event is hidden, unless an item of C came from it."""
    left_out: tuple[Item, ...] = ()
    """The items D_a left out as no longer valid (a standing verdict, an ended validity,
    a fallen premise) that the returning agent may read: not candidates, but quoted when
    Δ withdraws them (`readmit.admission.invalidation.observations`), as they would be
    had D_a held them."""
    outside: Mapping[str, "Outside"] = field(default_factory=dict)
    """The premises of C's items that C does not hold (another principal's, or withdrawn
    or left out before the departure), and their own premises outside C to the end of
    each chain, by id (`readmit.store.premises`)."""
    noted: int = 0
    """The number of the last store of verdicts when the context was read (m031,
    `readmit.store.verdicts.last_noted`): a memory layer serving after the return hides
    what one stored later covers. 0: none yet, or a context no store made."""
    by_id: Mapping[str, Item] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id = dict(items_by_id(self.items))
        for obligation in self.obligations:
            by_id.setdefault(obligation.item.id, obligation.item)
            by_id.setdefault(obligation.frontier.id, obligation.frontier)
        object.__setattr__(self, "by_id", MappingProxyType(by_id))

    @property
    def tuples(self) -> tuple[tuple[object, ...], ...]:
        """What memos of passes over Δ are keyed by (`grown_base`).

        C's items, Δ, and what D_a left out, if anything.
        """
        if self.left_out:
            return (self.items, self.delta, self.left_out)
        return (self.items, self.delta)

    def detached(self) -> "ReturnContext":
        """This context without what would ask its store, for use once the store is closed.

        Screening then reads C and Δ alone, as a context made without a store does.
        """
        return replace(
            self, history=None, keys_before=None, restoration=None, quote=None, named=None
        )

    def item_or_premise(self, item_id: str) -> Item | None:
        """The item of C, else the premise outside it as stored while it stands (`outside`)."""
        item = self.by_id.get(item_id)
        if item is None and (premise := self.outside.get(item_id)) is not None:
            return premise.item
        return item

    def reads_evidence_of(self, author: str) -> bool:
        """Whether the returning agent may read evidence ``author`` recorded.

        Evidence is read as its author's principal's alone (`readmit.store.writer`): an
        agent of its own principal's; with no agents known, any.
        """
        if not self.agents:
            return True
        agent = self.agents.get(author)
        return agent is not None and agent.principal == self.returner.principal

    @property
    def role_obligations(self) -> tuple[Obligation, ...]:
        """O: the open obligations the returning role must continue."""
        return tuple(o for o in self.obligations if o.role == self.returner.role)
