"""One agent of a team acting on a readmit store in-process: what every integration wraps.

A `Member` records the agent's writes as events, departs, returns (deciding with
`readmit.decide.decide`, so the decision is in the audit log like any other), and
remembers its latest decision: what an integration filters reads through.

What every integration does with that decision's view is here too, so they agree:
an issued view is served until its ``expires_at`` (`expiry`, checked with `lapsed`);
a read refused because no view is served raises `readmit.integrations.withheld.ViewWithheld`.
"""

import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from time import time
from typing import Any, TypeVar

from readmit.admission.decision import Issued
from readmit.admission.invalidation.implicit import Verifier
from readmit.clock import format_time, now, parse_time
from readmit.decide import Decided, decide
from readmit.errors import InvalidInput, install_hint
from readmit.events import Event, Recorded, ReturnRequest, Revoke
from readmit.integrations.corrections import owe, settle
from readmit.integrations.fallen import admitted_ids
from readmit.integrations.withheld import ViewExpired as ViewExpired  # where they were first
from readmit.integrations.withheld import ViewWithheld as ViewWithheld
from readmit.integrations.withheld import agent_notice as agent_notice
from readmit.model import ANY, Checkpoint, Item
from readmit.policy import Policy
from readmit.reasons import Exclusion, Reason
from readmit.signing import Signer
from readmit.store.base import WorkStateStore
from readmit.store.deadline import LOOK_UP_WAIT
from readmit.store.resent import resent
from readmit.verifiers.builtin import TermVerifier
from readmit.wire import check_returning

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Removal:
    """Why an item of a return's C is not in the agent's view."""

    item: str
    reason: str
    """A reason code, or ``withheld`` when no view was issued and nothing else excluded it."""
    detail: str


def removals(decided: Decided, expired: datetime | None = None) -> dict[str, Removal]:
    """Every item of ``decided``'s C that its view does not hold, by id, with why.

    And each item its departure left out as no longer valid (`left_at_departure`).
    With ``expired`` (when its issued view expired), the view holds nothing: what it
    admitted is removed too, as ``view_expired``. An item the agent may not read is
    removed with its reason but no detail: the detail of another principal's item (a
    revocation's ``why``, a verifier's wording) is not the agent's to read (`readable`).
    """
    decision = decided.decision
    admitted = set(admitted_ids(decided))
    hidden = frozenset(decided.record.get("hidden") or ())
    why = {
        e.item: Removal(e.item, e.reason.value, e.detail if _told(decided, e, hidden) else "")
        for e in decision.decided
    }
    if expired is not None:
        detail = f"the return view expired at {format_time(expired)}"
        why |= {item: Removal(item, "view_expired", detail) for item in admitted}
        admitted = set()
    left_out = frozenset(decision.not_selected)  # most of a large C: no record made for each
    return {
        item.id: why.get(item.id)
        or (
            Removal(item.id, NOT_SELECTED, "")
            if item.id in left_out
            else Removal(item.id, "withheld", decision.outcome)
        )
        for item in decided.context.items
        if item.id not in admitted
    } | {item.id: left_at_departure(decided, item) for item in decided.context.left_out}


def left_at_departure(decided: Decided, item: Item) -> Removal:
    """Why ``item``, which the departure left out as no longer valid, is not in the view.

    It is no candidate of the return (not in C), so the decision names it nowhere; a
    memory layer that removes only what the decision judged would serve it as valid.
    """
    ctx = decided.context
    ended = item.validity.valid_to
    if ended is not None and ended <= ctx.departure.at:
        return Removal(
            item.id, Reason.EXPIRED.value, f"valid until {format_time(ended)}, before the departure"
        )
    if item.id in ctx.standing or not item.depends_on:  # no premise to fall: a verdict,
        detail = "found stale before the departure (a standing verdict)"  # maybe not loaded
        return Removal(item.id, Reason.IMPLICITLY_INVALIDATED.value, detail)
    return Removal(
        item.id, Reason.PREMISE_INVALIDATED.value, "a premise it rests on fell before the departure"
    )


NOT_SELECTED = Reason.NOT_SELECTED.value


def _told(decided: Decided, exclusion: Exclusion, hidden: frozenset[str]) -> bool:
    """Whether the agent may read an exclusion's detail, as its view shows it.

    Of an item it may read, naming nothing it may not (a premise another principal holds).
    """
    return readable(decided, exclusion.item) and hidden.isdisjoint(exclusion.evidence)


def readable(decided: Decided, item_id: str) -> bool:
    """Whether the agent that returned may read item ``item_id`` of its return's C."""
    item = decided.context.by_id.get(item_id)
    who = decided.context.returner
    return item is not None and item.scope.readable_by(who.principal, who.role)


FOREVER = datetime.max.replace(tzinfo=UTC)
"""The expiry of a decision with no issued view to expire."""


def expiry(decided: Decided) -> datetime:
    """When ``decided``'s view stops being served: its ``expires_at`` (`FOREVER` if withheld).

    ``Policy.view_ttl`` after the return, by the clock of the member that returned.
    """
    decision = decided.decision
    return parse_time(decision.signed["expires_at"]) if isinstance(decision, Issued) else FOREVER


def lapsed(deadline: float, clock: Callable[[], datetime]) -> bool:
    """Whether ``deadline`` (an `expiry` as a POSIX timestamp) has passed by ``clock``.

    Read paths keep the timestamp, not the datetime: with the wall clock (`now`, a
    `Member`'s default) this is one ``time()`` call and a float comparison.
    """
    return (time() if clock is now else clock().timestamp()) >= deadline


def one_at_a_time(lock: threading.Lock, work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` holding ``lock``: an async integration's readmit work, in its thread.

    An awaiting coroutine that is cancelled stops waiting, not the thread it waits on;
    this lock, held by the thread itself, keeps the next call from running beside it.
    """
    with lock:
        return work(*args)


def one_of(value: object, allowed: tuple[str, ...], name: str) -> None:
    """Refuse an option none of ``allowed`` (another integration's word, a typo).

    Raises:
        InvalidInput: naming the option and what it takes.
    """
    if value not in allowed:
        taken = " or ".join(map(repr, allowed))
        raise InvalidInput(f"{name} must be {taken}, not {value!r}")


def new_id(prefix: str) -> str:
    """A fresh id for an event or item: ``prefix`` and 16 random hex digits."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


@dataclass
class Member:
    """One agent (``agent`` in ``workspace``) acting on ``store``."""

    store: WorkStateStore
    workspace: str
    agent: str
    signer: Signer
    verifier: Verifier | None = field(default_factory=TermVerifier)
    policy: Policy = field(default_factory=Policy)
    clock: Callable[[], datetime] = now
    """Checks a view's expiry on read paths (`lapsed`: no round trip); given, it dates too."""
    latest: Decided | None = None
    """The agent's latest decision in this process, if it has returned."""
    away: bool = False
    """Whether the agent departed in this process and has not returned since."""

    def __post_init__(self) -> None:
        """Refuse a member of a workspace, or an agent, the store does not know, or no signer.

        Raises:
            InvalidInput: naming the workspace, or the agent and the workspace's agents, or
                what was given as the signer (a return failed with an ``AttributeError``).
        """
        if not isinstance(self.signer, Signer):  # it has no sign, verify or alg
            raise InvalidInput(
                f"signer: give a readmit.signing signer (HmacSha256Signer, ...), not "
                f"{type(self.signer).__name__}"
            )
        agents = self.store.agents(self.workspace)
        if not agents:
            raise InvalidInput(f"no workspace {self.workspace!r} in this store")
        if self.agent not in agents:
            known = ", ".join(sorted(agents))
            raise InvalidInput(
                f"no agent {self.agent!r} in workspace {self.workspace!r} (its agents: {known})"
            )

    def time(self) -> datetime:
        """Now by the store's clock (the database's on PostgreSQL), unless ``clock`` was given.

        It dates departures, returns and events: members on machines apart order them as one.
        """
        return self._clock()()

    def _clock(self) -> Callable[[], datetime]:
        return self.store.now if self.clock is now else self.clock

    def record(self, events: Sequence[Event], own: bool = False) -> list[Recorded]:
        """Record ``events`` (authored by this agent) atomically, at the clock's time.

        What a memory layer owes readmit is recorded first (`readmit.integrations.corrections`).
        ``own``: it may withdraw an item it wrote for other readers (`WorkStateStore.append`).

        Raises:
            InvalidInput: for an event another agent authors (nothing is recorded).
            Exception: what recording a correction owed raised (nothing is recorded).
        """
        for event in events:
            if event.author != self.agent:
                raise InvalidInput(
                    f"event {event.id!r}: authored by {event.author!r}; {self.agent!r}'s "
                    "member records only its own events"
                )
        settle(self.store, self.workspace)  # what a memory layer failed to undo comes first
        try:
            return self.store.append(self.workspace, events, clock=self._clock(), own=own)
        except InvalidInput:
            raise
        except Exception as failed:
            recorded = self._recorded_anyway(events, failed)
            if recorded is None:
                raise
            return recorded

    def _recorded_anyway(self, events: Sequence[Event], failed: Exception) -> list[Recorded] | None:
        """``events`` as the log holds them if `append` committed them though it raised.

        A commit whose answer was lost (a PostgreSQL connection cut as it committed) left
        the batch recorded: undoing the writes it stands for would leave readmit holding
        what the memory layer no longer does (a review). A batch is recorded whole or not
        at all. None: not recorded, or the log cannot say (noted on ``failed``: the caller
        undoes its writes, which may leave readmit holding them).
        """
        try:
            return resent(self.store, self.workspace, events, True, LOOK_UP_WAIT) or None
        except Exception as unread:
            failed.add_note(f"readmit could not read back whether it recorded them: {unread!r}")
            return None

    def revoke(self, targets: Iterable[str], why: str) -> list[Recorded]:
        """Revoke each of ``targets`` (ids the agent may read) in one batch, saying ``why``.

        Raises:
            InvalidInput: if ``targets`` is one string (it would be read as its characters).
        """
        if isinstance(targets, str):
            raise InvalidInput(f"revoke: give the ids as a set or list, e.g. {{{targets!r}}}")
        at = self.clock()
        events: list[Event] = [
            Revoke(id=new_id("revoke"), at=at, author=self.agent, target=target, why=why)
            for target in sorted(set(targets))
        ]
        return self.record(events) if events else []

    def withdraw(
        self, chosen: Callable[[list[Item]], Iterable[str]], why: str, what: str
    ) -> list[Recorded]:
        """Revoke what ``chosen`` picks of `visible`: what a memory layer no longer holds.

        ``what`` names it. If reading or recording fails (or readmit refuses, a teammate's
        withdrawal meanwhile), the revocation is owed, picked again from the live state
        when it is recorded (`readmit.integrations.corrections`).

        Raises:
            BaseException: what reading or recording raised.
        """
        again = partial(self._withdraw, chosen, why)
        try:
            return again()
        except BaseException:
            owe(self.store, self.workspace, what, again)
            raise

    def _withdraw(self, chosen: Callable[[list[Item]], Iterable[str]], why: str) -> list[Recorded]:
        return self.revoke(list(chosen(self.visible())), why)

    def depart(self, task: str | None = None, purpose: str | None = None) -> Checkpoint:
        """Checkpoint what the agent can see now (D_a).

        ``task`` and ``purpose`` (together): what it will return to, so that judging ahead
        (`readmit.ahead.judge_ahead`, `readmit judge-ahead`) can screen that return while
        it is away.

        Raises:
            InvalidInput: if only one of ``task`` and ``purpose`` is given, or one is not a
                valid name.
            Exception: what recording a correction a memory layer owes raised
                (`readmit.integrations.corrections`): nothing is checkpointed.
        """
        said = check_returning(task, purpose)
        settle(self.store, self.workspace)  # never checkpoint a write a memory layer failed to undo
        checkpoint = self.store.depart(self.workspace, self.agent, self.time(), said)
        self.away = True
        return checkpoint

    def return_(
        self, task: str | None = None, purpose: str | None = None, query: str | None = None
    ) -> Decided:
        """Decide the agent's return to ``task`` for ``purpose``; remember the decision.

        Without either, it returns to what its latest departure named (`depart`), as HTTP
        and MCP do, or to every task and purpose (``*``) if that departure named none
        (where HTTP and MCP ask for them).

        Raises:
            InvalidInput: if only one of ``task`` and ``purpose`` is given.
            InvalidEvent: if the return cannot be decided (the agent has not departed).
            Exception: what recording a correction a memory layer owes raised
                (`readmit.integrations.corrections`): nothing is decided.
        """
        named = check_returning(task, purpose)
        settle(self.store, self.workspace)  # never admit a write a memory layer failed to undo
        at = self.time()

        def request() -> ReturnRequest:  # for each try: to the latest departure's task
            said = named or self.store.departed_for(self.workspace, self.agent, at) or (ANY, ANY)
            return ReturnRequest(
                id=new_id("return"), at=at, agent=self.agent, task=said[0], purpose=said[1]
            )

        decided = decide(
            self.store,
            self.workspace,
            request,
            policy=self.policy,
            verifier=self.verifier,
            signer=self.signer,
            query=query,
        )
        own = self.store.own_number(self.workspace, self.agent, decided.id)
        self.latest, self.away = replace(decided, own=own), False
        return self.latest

    @property
    def undecided(self) -> bool:
        """Whether the agent departed in this process and no return is decided since.

        One raised, or none was asked: a memory layer owes it before it serves a read.
        """
        return self.away and self.latest is None

    def owes_return(self) -> bool:
        """Whether a wrapper made now must decide a return before it serves a read.

        So it must when this member has no decision and the store says the agent ever
        departed: a process started after a departure (or after a return, whose decision
        only the store keeps) would otherwise serve what that return left out.
        """
        return self.latest is None and self.store.has_departed(
            self.workspace, self.agent, self.time()
        )

    def admitted(self) -> list[Item] | None:
        """The items of the latest issued view: ``[]`` if it was withheld.

        None before any return: the agent has not been away, so nothing is filtered.
        """
        if self.latest is None:
            return None
        decision = self.latest.decision
        return list(decision.items) if isinstance(decision, Issued) else []

    def visible(self) -> list[Item]:
        """The active items the agent may read now (no admission: its live state).

        What a memory layer owes readmit is recorded first: a layer builds its events from
        this state (`readmit.integrations.corrections`).
        """
        settle(self.store, self.workspace)
        return self.store.visible_state(self.workspace, self.agent)


def missing_extra(what: str, extra: str) -> str:
    """What an integration's import says when its extra is not installed."""
    return f"this integration needs {what}: {install_hint(extra)}"
