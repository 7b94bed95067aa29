"""readmit over an OpenAI Agents SDK session: what the agent learned is shared state.

`ReadmitSession` implements the SDK's ``Session`` protocol over any inner session
(``SQLiteSession``, ...), so an application adopts readmit by changing the line that
constructs its session::

    session = ReadmitSession(SQLiteSession("booker", "chat.db"), member)
    # was: session = SQLiteSession("booker", "chat.db")

**What becomes a fact.** ``add_items`` asserts one readmit item for each item that
``learned`` maps to a `Learned` (a text, an optional key, optional readmit
annotations). The default, `assistant_messages`, takes the text of every assistant
message and gives it no key; pass your own function to record only what your
application marks, to key facts (a later fact with the same key, from any agent,
replaces earlier ones), or to annotate them (`Learned.annotations`: what the fact
supports, its premises, scope, validity; SDK items have no field of their own for
it). The facts are validated first (a bad annotation raises `InvalidInput` and the
session is not written), then the items are stored in the inner session, then the
facts are recorded; if readmit refuses them, the items are popped back out of the
session and readmit's error is raised (writes take turns, so they are this call's).
``pop_item`` revokes the fact of the item it removes (and, for a keyed fact, every
active fact with that key the agent may read);
``clear_session`` forgets the conversation and records nothing.

**Departure and return.** The application calls ``depart()`` when the agent leaves.
The first ``get_items`` after that decides the return. From then on every
``get_items`` puts one developer message in front of the history: the decision's
outcome, what it admitted, what it excluded with the reasons, and the signed Return
View as JSON (the text starts with `PREAMBLE`). History items whose fact the decision
judged and did not admit are left out (text equal to no admitted item's), and those of
the agent's own facts withdrawn before the departure (`readmit.integrations.prior`),
unless it has stated the text again since the return. A withheld
decision admits nothing: the message says so, and every judged fact's item is left
out; user messages stay. ``limit`` applies to the inner history; the message is added
in front of it. Before the first return nothing is changed.

**Expiry.** An issued view is served until its ``expires_at`` (``Policy.view_ttl``
after the return, by the member's clock; the check is `readmit.integrations.team`'s,
the one the LangGraph store and the Mem0 wrapper make). The expired view is never
served: the first ``get_items`` at or after ``expires_at`` decides a fresh return, as
the first one after a departure does, against the agent's latest departure, and
builds the message from that decision (which may itself be withheld); the message
names the decision whose view expired. The session re-decides rather than
withholding because ``get_items`` is where a session's return happens: the SDK calls
it when a run starts, and there is no other hook (like LangGraph's middleware, which
returns the agent at every run) to renew the view; withholding would leave the agent
without its shared facts until the application departs it again. Each fresh return
is a decision in the audit log like any other. A withheld decision does not expire:
it stands until the next departure and read.

Store calls are synchronous and short (an in-process store) and run inline.
"""

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from readmit.decide import Decided
from readmit.events import Assert, Event
from readmit.integrations.agents_sdk_view import PREAMBLE, Judged, judge, preamble, reason_text
from readmit.integrations.annotations import RefKind, draft, parse, resolve
from readmit.integrations.corrections import owe
from readmit.integrations.following import REPLACED_BY_ITSELF, Following
from readmit.integrations.prior import Prior
from readmit.integrations.team import (
    Member,
    lapsed,
    missing_extra,
    new_id,
    one_at_a_time,
)
from readmit.integrations.to_the_end import Shared, Turn, shared, to_the_end

try:
    from agents import SessionSettings, TResponseInputItem
except ImportError as exc:  # the extra is not installed
    raise ImportError(missing_extra("the OpenAI Agents SDK", "agents")) from exc

__all__ = [
    "PREAMBLE",
    "Learned",
    "ReadmitSession",
    "assistant_messages",
    "message_text",
    "preamble",
]

T = TypeVar("T")
REFS: frozenset[RefKind] = frozenset({"key"})
"""The premise references a fact's annotations may use (besides item ids)."""


@dataclass(frozen=True, slots=True)
class Learned:
    """A fact an agent learned from one session item."""

    text: str
    key: str | None = None
    """Identity of the thing it describes: a later fact with this key replaces it."""
    annotations: Mapping[str, Any] | None = None
    """Readmit annotations (`readmit.integrations.annotations`: ``supports``, ``depends_on``
    by item id or ``{"key": K}``, scope, validity, ``cites``, ``kind``, ``unconfirmed``)."""


LearnedFrom = Callable[[TResponseInputItem], Learned | None]
"""Which session items are facts: an item's fact, or None."""


def message_text(item: Mapping[str, Any]) -> str:
    """The text of a message item (a string, or its text parts joined)."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))


def assistant_messages(item: TResponseInputItem) -> Learned | None:
    """The default: an assistant message's text is a fact, with no key."""
    fields: Mapping[str, Any] = item
    if fields.get("role") != "assistant":
        return None
    text = message_text(fields).strip()
    return Learned(text) if text else None


@dataclass
class ReadmitSession:
    """A ``Session`` whose facts are readmit events and whose history the view filters."""

    inner: Any
    """The wrapped session (anything implementing the SDK's ``Session`` protocol)."""
    member: Member
    learned: LearnedFrom = assistant_messages
    returning: bool | None = None
    """Whether the next read decides a return: after a departure, until it does. ``None``
    (the default) asks the store whether the agent ever departed if its member has no
    decision yet, so a process that starts after a departure (or after a return, whose
    decision only the store remembers) decides one before it serves anything
    (`Member.owes_return`)."""
    _judged: Judged | None = field(default=None, repr=False)
    _following: Following | None = field(default=None, repr=False)
    _prior: Prior = field(init=False, repr=False)
    _turn: Turn = field(default_factory=Turn, repr=False)
    _writes: Shared = field(init=False, repr=False)
    """Held by each write for its whole length, the session's part and readmit's: shared
    by every wrapper of the conversation (its ``session_id``) in this process."""
    _working: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """readmit's work (deciding a return, recording facts) runs in a worker thread, one call
    at a time, so the event loop is never held by it (a model verifier can take minutes). A
    write whose caller is cancelled still runs to its end, the session's part and readmit's,
    before the cancellation is raised (`to_the_end`): the SDK's sessions write in worker
    threads that go on whatever the caller does."""

    session_id: str = field(init=False)
    """The inner session's id (the SDK's ``Session`` protocol)."""
    session_settings: SessionSettings | None = field(init=False)
    """The inner session's settings (the SDK's ``Session`` protocol)."""

    def __post_init__(self) -> None:
        if self.returning is None:
            self.returning = self.member.owes_return()
        self.session_id = str(self.inner.session_id)
        self._writes = shared(self.session_id)
        self._prior = Prior(self.member)
        self.session_settings = getattr(self.inner, "session_settings", None)

    def depart(self, task: str | None = None, purpose: str | None = None) -> None:
        """The agent leaves: checkpoint it; its next ``get_items`` decides its return.

        ``task`` and ``purpose`` (together): what it returns to, so that items annotated
        with a task or purposes apply (`Member.depart`); else every task and purpose.
        """
        one_at_a_time(self._working, self._depart, task, purpose)

    async def adepart(self, task: str | None = None, purpose: str | None = None) -> None:
        """`depart`, awaited: the checkpoint is written off the event loop."""
        await self._off_loop(self._depart, task, purpose)

    def _depart(self, task: str | None, purpose: str | None) -> None:
        self.member.depart(task, purpose)
        self.returning = True

    async def _off_loop(self, work: Callable[..., T], *args: Any) -> T:
        async with self._turn():
            return await asyncio.to_thread(one_at_a_time, self._working, work, *args)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        judged = await self._off_loop(self._after_return)
        items: list[TResponseInputItem] = await self.inner.get_items(limit)
        if judged is None:
            return items
        kept = [item for item in items if judged.keeps(_text(self.learned(item)))]
        note: TResponseInputItem = {"role": "developer", "content": judged.note}
        return [note, *kept]

    @to_the_end
    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add the items to the session, then record their facts in readmit.

        One readmit refuses is taken back off the session's end, which only this call's
        items can be: writes take turns (two adds at once took the other's item off, a
        probe). Recording first would let a fact the session then refused replace an
        earlier one under its key for good (a review).
        """
        async with self._writes():
            events = await self._off_loop(self._facts, items)
            await self.inner.add_items(items)
            if not events:
                return
            try:
                await self._off_loop(self.member.record, events)
            except Exception as refused:
                for _ in items:  # readmit refused: take the items back out of the session
                    try:
                        await self.inner.pop_item()
                    except Exception as undo:
                        refused.add_note(f"the session kept items readmit refused: {undo!r}")
                        break
                raise

    def _facts(self, items: list[TResponseInputItem]) -> list[Event]:
        """The events asserting the facts of ``items``, validated (nothing is written).

        Raises:
            InvalidInput: for a fact whose annotations are bad or name no premise.
        """
        facts = [fact for fact in map(self.learned, items) if fact is not None]
        annotated = [
            (
                f"fact {fact.text[:60]!r}",
                None
                if fact.annotations is None
                else parse(fact.annotations, where=f"fact {fact.text[:60]!r}", refs=REFS),
            )
            for fact in facts
        ]
        premises = resolve(annotated, self.member)
        at, author = self.member.clock(), self.member.agent
        return [
            Assert(
                id=new_id("agents"),
                at=at,
                author=author,
                item=draft(a, new_id("agents"), fact.text, fact.key, premises),
            )
            for fact, (_, a) in zip(facts, annotated, strict=True)
        ]

    @to_the_end
    async def pop_item(self) -> TResponseInputItem | None:
        async with self._writes():
            item: TResponseInputItem | None = await self.inner.pop_item()
            fact = self.learned(item) if item is not None else None
            if fact is None or item is None:
                return item
            chosen = set[str]()
            try:
                await self._off_loop(self._revoke, fact, chosen)
            except Exception as failed:  # readmit holds the fact still: so does the session
                try:
                    await self.inner.add_items([item])
                    failed.add_note("readmit could not record the pop: the item is back")
                except Exception as back:
                    failed.add_note(f"the item popped could not be put back: {back!r}")
                    what = f"a fact popped from the session: {fact.text!r}"[:300]
                    again = partial(self._revoke, fact, chosen)  # the same items (a review)
                    owe(self.member.store, self.member.workspace, what, again)
                raise
            return item

    async def clear_session(self) -> None:
        await self.inner.clear_session()

    def _after_return(self) -> Judged | None:
        """The judged decision to filter by; a fresh return once the issued view expired."""
        member = self.member
        if self.returning or member.undecided:  # owed until decided
            member.return_()
            self.returning = False
        latest = member.latest
        if latest is None:
            return None
        judged = self._judged
        if judged is None or judged.decided is not latest:
            judged = self._judged = judge(latest, before=self._withdrawn_before(latest))
        if lapsed(judged.deadline, member.clock):  # never serve an expired view: decide again
            renewed = member.return_()
            before = self._withdrawn_before(renewed)
            judged = self._judged = judge(renewed, renews=judged.decided, before=before)
        following = self._following = self._prior.following(self._following, judged.decided)
        following.withdrawn(member)
        if judged.back != len(following.back):  # one withheld until its start started: anew
            made = judge(judged.decided, judged.renews, self._withdrawn_before(judged.decided))
            judged = self._judged = replace(made, back=len(following.back))
        if judged.followed != len(following.gone) or judged.owned != len(following.own):
            judged = self._judged = judged.without(following)
        return judged

    def _withdrawn_before(self, decided: Decided) -> dict[str, tuple[str, bool]]:
        """The agent's own facts withdrawn before ``decided`` (not judged by it), by text.

        Each with why, and whether the message lists it. Its own only: the session holds
        what it said (a teammate's 199 superseded facts were listed in every message, a
        review). Listed unless the agent withdrew or replaced it itself: one withdrawn
        before a first return was told nowhere (a review). One it stated for others' eyes
        only is left out too, as the return holds it: the session served it again after
        a return that the walk after the last one had hidden (a review).
        """
        prior = self._prior
        walk = prior.upto(decided)
        gone = {r.item: r for r in prior.withdrawn(decided) if r.item in walk.own}
        gone |= {i: r for i, r in prior.unread.items() if i in walk.own and i not in gone}
        return {
            walk.texts[i]: (
                reason_text(r.reason, r.detail),
                r.detail != REPLACED_BY_ITSELF and i not in prior.itself,
            )
            for i, r in gone.items()
        }

    def _revoke(self, fact: Learned, chosen: set[str]) -> None:
        """Revoke the agent's newest item with the fact's text, and its copies.

        With a key, an active item with that key and the fact's text is a copy; a newer
        fact under the key is none. ``chosen``: the items picked by a try before (those
        still active are revoked), or empty, to be filled with those picked now.
        """
        visible = self.member.visible()
        if not chosen:
            own = [i for i in visible if i.author == self.member.agent and i.text == fact.text]
            chosen |= {max(own, key=lambda i: i.epoch).id} if own else set()
            if fact.key is not None:
                chosen |= {i.id for i in visible if i.key == fact.key and i.text == fact.text}
        targets = chosen & {i.id for i in visible}
        self.member.revoke(targets, f"{self.member.agent} withdrew it from its session")


def _text(fact: Learned | None) -> str | None:
    return None if fact is None else fact.text
