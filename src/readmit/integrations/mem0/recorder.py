"""The readmit side of the Mem0 wrappers: Mem0 writes as events, Mem0 reads through the view.

`Recorder` holds no Mem0 object: the sync and async wrappers make the Mem0 calls and
hand it what Mem0 returned, so one piece of code serves both.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from readmit.clock import format_time
from readmit.errors import Forbidden, InvalidInput
from readmit.events import Assert, Event, ItemDraft, Revoke, Supersede
from readmit.integrations.annotations import (
    ANNOTATIONS,
    Annotations,
    Ref,
    RefKind,
    by_key,
    draft,
    parse,
    resolve,
)
from readmit.integrations.following import Following
from readmit.integrations.mem0.expiry import ending
from readmit.integrations.mem0.ids import (
    PREFIX,
    by_memory,
    current_item,
    item_id,
    memory_of,
    of_memory,
    writes_text,
)
from readmit.integrations.mem0.index import UNAUTHORIZED, ViewIndex, index
from readmit.integrations.prior import Prior
from readmit.integrations.team import Member, Removal, lapsed, new_id, one_of
from readmit.integrations.withheld import ViewExpired, ViewWithheld
from readmit.model import Item

MemoryKey = Callable[[Mapping[str, Any]], str | None]
"""A memory's readmit key, from the memory as Mem0's ``get`` returns it (None: no key)."""

REFS: frozenset[RefKind] = frozenset({"key", "memory"})
"""The premise references a memory's annotations may use."""

OnWithheld = Literal["remove", "raise"]
"""What reads do while no view is served (a withheld return, or an expired view):
``"remove"`` every memory the decision judged, or ``"raise"`` `ViewWithheld`."""


@dataclass(frozen=True, slots=True)
class Stated:
    """What the application states about a write beyond its text: validated, resolved."""

    annotations: Annotations | None = None
    premises: Mapping[Ref, str] = field(default_factory=dict)

    def draft(
        self, item: str, text: str, key: str | None, memory: Mapping[str, Any] | None
    ) -> ItemDraft:
        """The item of ``memory``'s text, valid as long as Mem0 shows it (`expiry`)."""
        return ending(draft(self.annotations, item, text, key, self.premises), memory)


def _matches(ref: Ref, item: Item) -> bool:
    if ref.kind == "memory":
        named = memory_of(item.id)
        return named is not None and named[0] == ref.value
    return by_key(ref, item)


def _removal_json(removal: Removal) -> dict[str, str]:
    """A removal as the JSON-ready dict a result's ``readmit.removed`` entry carries."""
    return {"reason": removal.reason, "item": removal.item, "detail": removal.detail}


@dataclass
class Recorder:
    """Turns Mem0 writes into ``member``'s events and filters Mem0 reads by its view."""

    member: Member
    key: MemoryKey | None = None
    on_withheld: OnWithheld = "remove"
    returning: bool | None = None
    """Whether the next read decides a return: after a departure, until it does. ``None``
    (the default) asks the store whether the agent ever departed if its member has no
    decision yet, so a process that starts after a departure (or after a return, whose
    decision only the store remembers) decides one before it serves anything
    (`Member.owes_return`)."""
    _index: ViewIndex = field(default_factory=lambda: ViewIndex(None))
    _following: Following | None = None
    _foreign: list[Removal] = field(default_factory=list)
    """The items before the return the agent may not read, and those withdrawn before it
    that it did not judge, each of its memory's newest version (`Prior`)."""
    _prior: Prior = field(init=False)

    def __post_init__(self) -> None:
        one_of(self.on_withheld, ("remove", "raise"), "on_withheld")
        self._prior = Prior(self.member, memory_of)
        if self.returning is None:
            self.returning = self.member.owes_return()

    def key_of(self, memory: Mapping[str, Any] | None) -> str | None:
        return self.key(memory) if self.key is not None and memory is not None else None

    def carried_key(self, memory: Mapping[str, Any] | None, versions: Sequence[Item]) -> str | None:
        """A memory's new version's key: the wrapper's, else its versions' (`current_key`)."""
        return self.key_of(memory) if self.key is not None else current_key(versions)

    def depart(self, task: str | None = None, purpose: str | None = None) -> None:
        self.member.depart(task, purpose)
        self.returning = True

    def before_read(self) -> ViewIndex:
        """Decide the return on the first read after a departure; the index to filter by.

        Once the issued view has expired (by the member's clock) the index admits
        nothing until the next return.

        Raises:
            ViewWithheld: in ``raise`` mode, after a withheld return or once the view
                expired (`ViewExpired` then).
        """
        member = self.member
        if self.returning or member.undecided:  # owed until decided
            member.return_()
            self.returning = False
        view = self._index  # replaced only once followed: a read beside this one uses it
        if view.decided is not member.latest:
            view = index(member.latest)
        if not view.expired and lapsed(view.deadline, member.clock):
            view = index(view.decided, expired=True)
        view = self._index = self._followed(view)
        decided = view.decided
        if decided is not None and view.withheld and self.on_withheld == "raise":
            raise ViewExpired(decided, view.expires) if view.expired else ViewWithheld(decided)
        return view

    def _followed(self, view: ViewIndex) -> ViewIndex:
        """``view`` less what teammates withdrew since its return (`Following`)."""
        decided = view.decided
        if decided is None:
            return view
        following = self._prior.following(self._following, decided)
        if following is not self._following:
            self._following = following
            self._foreign = self._prior.removals(decided)
        following.withdrawn(self.member)
        return view.after(following, self._foreign)

    def filtered(self, view: ViewIndex, result: dict[str, Any], top_k: int) -> dict[str, Any]:
        """Mem0's read result with what ``view`` does not admit taken out, and why.

        ``view``: what the read's own `before_read` gave. Another read may replace the
        wrapper's meanwhile (a review: one whose walk of the log then failed was served).
        """
        kept: list[dict[str, Any]] = []
        removed: list[dict[str, Any]] = []
        for memory in result.get("results", []):
            if view.keeps(memory, self.key_of(memory)):
                kept.append(memory)
            else:
                why = view.why(str(memory["id"]))
                if str(memory["id"]) in view.unreadable:  # not the agent's: not even its text
                    removed.append({"id": memory["id"], "reason": UNAUTHORIZED})
                    continue
                removed.append(
                    {"id": memory["id"], "memory": memory.get("memory")} | _removal_json(why)
                )
        decision = None if view.decided is None else view.decided.number
        outcome = None if view.decided is None else view.decided.decision.outcome
        expired_at = format_time(view.expires) if view.expired else None
        readmit = {
            "decision": decision,
            "outcome": outcome,
            "expired_at": expired_at,
            "removed": removed,
        }
        return {**result, "results": kept[:top_k], "readmit": readmit}

    def stated(self, metadata: Mapping[str, Any] | None, where: str) -> Stated:
        """The annotations under ``metadata["_readmit"]``, validated and resolved.

        Raises:
            InvalidInput: if they are malformed or a premise names nothing.
        """
        raw = None if metadata is None else metadata.get(ANNOTATIONS)
        if raw is None:
            return Stated()
        annotations = parse(raw, where=where, refs=REFS)
        return Stated(annotations, resolve([(where, annotations)], self.member, _matches))

    def added(
        self,
        rows: Iterable[Mapping[str, Any]],
        stated: Stated,
        memories: Mapping[str, Any],
        histories: Mapping[str, Sequence[Mapping[str, Any]]],
    ) -> None:
        """Record what an ``add`` reported: ADD asserts, UPDATE supersedes, DELETE revokes.

        ``memories`` and ``histories`` (by memory id) are the memories it added or updated
        (for their keys and expiration dates) and the histories of those it updated or deleted.
        """
        events: list[Event] = []
        visible: list[Item] | None = None
        for row in rows:
            memory_id, op = str(row.get("id")), row.get("event")
            if op == "ADD":
                key = self.key_of(memories.get(memory_id))
                memory = memories.get(memory_id)
                item = stated.draft(item_id(memory_id, 1), str(row["memory"]), key, memory)
                events.append(self._event(None, item))
            elif op in ("UPDATE", "DELETE"):
                visible = self.member.visible() if visible is None else visible
                current = of_memory(visible, memory_id)
                history = histories.get(memory_id, ())
                if op == "DELETE":
                    events += self._revokes([i.id for i in current], "deleted by Mem0's add")
                elif history and writes_text(history[-1]):
                    new = str(history[-1]["new_memory"])
                    memory = memories.get(memory_id)
                    version = item_id(memory_id, len(history))
                    item = stated.draft(version, new, self.carried_key(memory, current), memory)
                    events.append(self._event(current[-1].id if current else None, item))
        if events:
            self.member.record(events)

    def updated(
        self,
        memory_id: str,
        before: Sequence[Mapping[str, Any]],
        after: Sequence[Mapping[str, Any]],
        memory: Mapping[str, Any] | None,
        stated: Stated,
        annotated: bool = False,
    ) -> None:
        """Supersede the memory's current item if the update changed its text.

        Raises:
            InvalidInput: if the update changed the memory's annotations or expiration date
                (``annotated``) and not its text: its item would keep the old ones, so the
                caller undoes it.
        """
        if len(after) <= len(before) or not writes_text(after[-1]):
            if annotated:
                raise InvalidInput(
                    f"memory {memory_id}: readmit annotations and the expiration date change "
                    "with the memory's text (update its text too, or delete it and add it again)"
                )
            return
        text, current = str(after[-1]["new_memory"]), of_memory(self.member.visible(), memory_id)
        key = self.carried_key(memory, current)
        item = stated.draft(item_id(memory_id, len(after)), text, key, memory)
        self.member.record([self._event(current[-1].id if current else None, item)])

    def may_change(self, memory_id: str, history: Sequence[Mapping[str, Any]], call: str) -> None:
        """Refuse ``call`` of a memory whose current version is an item the agent may not read.

        Asked before Mem0 is: readmit would refuse to record the change (another principal's
        memory in a shared bank), and Mem0 would hold what readmit does not.

        Raises:
            Forbidden: naming the memory (Mem0 is not changed).
        """
        current, member = current_item(memory_id, history), self.member
        if current and member.store.unreadable(member.workspace, member.agent, [current]):
            raise Forbidden(
                f"{call} of memory {memory_id!r}: its current version is an item "
                f"{member.agent!r} may not read in readmit (written for other readers); "
                "Mem0 was not changed"
            )

    def hidden_memories(self) -> list[str]:
        """The memories with an active item the agent may not read (written for others)."""
        member = self.member
        hidden = member.store.unreadable_under(member.workspace, member.agent, PREFIX)
        return sorted({found[0] for i in hidden if (found := memory_of(i)) is not None})

    def may_remove(self, caught: Sequence[str], call: str) -> None:
        """Refuse ``call``, a bulk delete, if Mem0 would remove ``caught`` (`hidden_memories`).

        Raises:
            Forbidden: saying how many (Mem0 is not changed).
        """
        if caught:
            what = "1 memory" if len(caught) == 1 else f"{len(caught)} memories"
            raise Forbidden(
                f"{call} would remove {what} with an active version {self.member.agent!r} "
                "may not read in readmit (written for other readers); Mem0 was not changed"
            )

    def may_remove_listed(self, listed: Sequence[str], call: str) -> None:
        """Refuse ``call``, a bulk delete of the memories Mem0 ``listed``, before Mem0 is told.

        It may remove none with an active version the agent may not read (`may_remove`),
        nor one readmit holds no item of: added outside readmit, or being added by another
        agent whose add is not yet recorded (read after Mem0 listed them, so such an add is
        caught; Mem0's own ``delete_all`` would remove it, and readmit then keep its item).

        Raises:
            Forbidden: saying how many (Mem0 is not changed).
        """
        member, wanted = self.member, set(listed)
        # What readmit records first: an add recorded between the two reads is then hidden.
        recorded = member.store.recorded_under(member.workspace, PREFIX)
        self.may_remove(sorted(wanted.intersection(self.hidden_memories())), call)
        unknown = wanted - {found[0] for i in recorded if (found := memory_of(i)) is not None}
        if unknown:
            what = "1 memory" if len(unknown) == 1 else f"{len(unknown)} memories"
            raise Forbidden(
                f"{call} would remove {what} readmit holds no record of (added outside "
                "readmit: adopt them first with readmit.integrations.mem0.backfill; or being "
                "added now: try again); Mem0 was not changed"
            )

    def delete_targets(self, memory_id: str, memory: Mapping[str, Any] | None = None) -> list[str]:
        """What deleting the memory revokes: its current items, and its text's copies.

        With a key, an active item with that key and the memory's text (``memory`` as
        Mem0's ``get`` returns it) is a copy; a newer statement under the key is none.
        """
        visible = self.member.visible()
        mine = [
            i for i in visible if (found := memory_of(i.id)) is not None and found[0] == memory_id
        ]
        key, text = self.key_of(memory), None if memory is None else memory.get("memory")
        if memory is None and self.key is not None:  # Mem0 deleted it (a retry): as readmit has it
            member = self.member
            said = (
                mine[-1]
                if mine
                else member.store.newest_under(
                    member.workspace, member.agent, f"{PREFIX}{memory_id}-"
                )
            )
            key, text = (said.key, said.text) if said is not None else (None, None)
        ids = {i.id for i in mine}
        return [
            i.id
            for i in visible
            if i.id in ids or (key is not None and i.key == key and i.text == text)
        ]

    def memories(self) -> dict[str, list[str]]:
        """Memory id -> its active items the agent may read (what a bulk delete may remove)."""
        return by_memory(self.member.visible())

    def _event(self, target: str | None, item: ItemDraft) -> Event:
        at, author = self.member.clock(), self.member.agent
        if target is None:
            return Assert(id=new_id("mem0"), at=at, author=author, item=item)
        return Supersede(id=new_id("mem0"), at=at, author=author, target=target, item=item)

    def _revokes(self, targets: list[str], why: str) -> list[Event]:
        at, author = self.member.clock(), self.member.agent
        return [Revoke(id=new_id("mem0"), at=at, author=author, target=t, why=why) for t in targets]


def current_key(items: Sequence[Item]) -> str | None:
    """The key of the newest of ``items`` (a memory's versions keep its key)."""
    return items[-1].key if items else None
