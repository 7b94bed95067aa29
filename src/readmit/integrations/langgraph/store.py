"""`ReadmitStore`: a LangGraph `BaseStore` that admits what a returning agent may read.

It wraps any inner store (``InMemoryStore``, ``SqliteStore``, ``PostgresStore``, ...) and
is built per agent, ``ReadmitStore(inner, member)``: LangGraph calls a store's
``batch`` with no run config, so who is reading has to be fixed where the store is
made, not guessed from a context variable at call time.

Writes: the inner store gets every write (the application keeps its data), and each
becomes a readmit event by the agent first, so a write readmit refuses reaches
neither store. A new (namespace, key) asserts an item; an overwrite asserts the
next version under the same readmit key, a same-key replacement of the one before;
a delete revokes the current version.

Reads (``get``, ``search``, ``list_namespaces``) show only what the agent's latest
issued view admits, plus what the agent itself wrote since that return. ``search``
and ``list_namespaces`` over-fetch from the inner store, page after doubling page,
until ``limit`` admitted results are found or the inner store runs out, so filtering
never starves a page. Before the agent's first return in this process nothing is
filtered: an agent that has not been away has nothing to readmit. After a withheld
decision reads raise `ViewWithheld` (``on_withheld="raise"``, the default, so an agent
cannot mistake "wait for evidence" for "no memory") or show only the agent's own
writes since (``on_withheld="empty"``).
"""

import asyncio
from collections.abc import Awaitable, Callable, Generator, Iterable
from typing import Literal, cast

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    validate_op_namespace,
)

from readmit.events import Assert, Event, ItemDraft, Revoke
from readmit.integrations.langgraph.admitted import Lens, ViewWithheld
from readmit.integrations.langgraph.keys import Identity, identity, item_key, parse, render
from readmit.integrations.team import Member, new_id

Reader = Generator[list[Op], list[Result], Result]
"""One read: yields the inner ops it needs, is sent their results, returns its own."""

Rounds = Generator[list[Op], list[Result], list[Result]]
"""Every read of a batch, advanced together: one inner batch per round."""


class ReadmitStore(BaseStore):
    """A LangGraph store whose reads show what ``member``'s latest return admitted.

    Args:
        inner: The store that keeps the application's data.
        member: The agent reading and writing through this store.
        on_withheld: After a withheld return, ``"raise"`` `ViewWithheld` on every read
            or show only the agent's writes since (``"empty"``).
    """

    def __init__(
        self,
        inner: BaseStore,
        member: Member,
        *,
        on_withheld: Literal["raise", "empty"] = "raise",
    ) -> None:
        self.inner = inner
        self.member = member
        self.on_withheld = on_withheld
        self.supports_ttl = inner.supports_ttl
        self.ttl_config = inner.ttl_config
        self._lens: Lens | None = None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops, puts, lens = self._prepare(ops)
        if lens is None:
            self._record(puts)
            return self.inner.batch(ops)
        results = _run(_rounds(_readers(ops, lens)), self.inner.batch)
        if puts:
            lens.add(self._record(puts))
            self.inner.batch(puts)
        return _merge(ops, results)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops, puts, lens = self._prepare(ops)
        if lens is None:
            await asyncio.to_thread(self._record, puts)
            return await self.inner.abatch(ops)
        results = await _arun(_rounds(_readers(ops, lens)), self.inner.abatch)
        if puts:
            lens.add(await asyncio.to_thread(self._record, puts))
            await self.inner.abatch(puts)
        return _merge(ops, results)

    def _prepare(self, batch: Iterable[Op]) -> tuple[list[Op], list[PutOp], Lens | None]:
        """Validate ``batch`` and find the lens its reads go through (None: unfiltered).

        Raises:
            ViewWithheld: if the batch reads after a withheld return, in ``raise`` mode.
        """
        ops = list(batch)
        for op in ops:
            validate_op_namespace(op)
        puts = [op for op in ops if isinstance(op, PutOp)]
        lens = self._current_lens()
        reads = len(puts) < len(ops)
        if lens is not None and lens.withheld and reads and self.on_withheld == "raise":
            raise ViewWithheld(lens.decided)
        return ops, puts, lens

    def _current_lens(self) -> Lens | None:
        latest = self.member.latest
        if latest is None:
            return None
        if self._lens is None or self._lens.decided is not latest:
            self._lens = Lens.of(latest)
        return self._lens

    def _record(self, puts: list[PutOp]) -> list[Identity]:
        """Record ``puts`` as the agent's events; return the identities written, not deleted.

        The last write to a path in one batch wins, as in the inner stores.
        """
        last: dict[Identity, PutOp] = {identity(op.namespace, op.key): op for op in puts}
        deleted = {i for i, op in last.items() if op.value is None}
        current = self._current_items(deleted) if deleted else {}
        events: list[Event] = []
        for ident, op in last.items():
            event = self._event(ident, op, current.get(ident))
            if event is not None:
                events.append(event)
        if events:
            self.member.record(events)
        return [i for i in last if i not in deleted]

    def _event(self, ident: Identity, op: PutOp, current: str | None) -> Event | None:
        at, author = self.member.clock(), self.member.agent
        if op.value is not None:
            draft = ItemDraft(
                id=new_id("lg"), text=render(op.namespace, op.key, op.value), key=item_key(ident)
            )
            return Assert(id=new_id("put"), at=at, author=author, item=draft)
        if current is None:  # never recorded, or not the agent's to read: nothing to revoke
            return None
        why = f"deleted {'/'.join((*op.namespace, op.key))!r} from the LangGraph store"
        return Revoke(id=new_id("delete"), at=at, author=author, target=current, why=why)

    def _current_items(self, idents: set[Identity]) -> dict[Identity, str]:
        """The id of the active version of each of ``idents`` the agent may read."""
        found: dict[Identity, str] = {}
        for item in self.member.visible():
            ident = parse(item.key)
            if ident in idents:
                found[ident] = item.id
        return found


def _readers(ops: list[Op], lens: Lens) -> list[Reader]:
    return [_reader(op, lens) for op in ops if not isinstance(op, PutOp)]


def _reader(op: Op, lens: Lens) -> Reader:
    if isinstance(op, GetOp):
        return _get(op, lens)
    if isinstance(op, SearchOp):
        return _paged(op, lens)
    return _paged(cast(ListNamespacesOp, op), lens)


def _get(op: GetOp, lens: Lens) -> Reader:
    (found,) = yield [op]
    if isinstance(found, Item) and identity(found.namespace, found.key) in lens.visible:
        return found
    return None


def _paged(op: SearchOp | ListNamespacesOp, lens: Lens) -> Reader:
    """Fetch pages from offset 0, each twice the last, until ``offset + limit`` pass."""
    offset, want = max(op.offset, 0), max(op.offset, 0) + max(op.limit, 0)
    kept: list[object] = []
    start, size = 0, want
    while len(kept) < want:
        (page,) = yield [op._replace(offset=start, limit=size)]
        rows = cast(list[object], page)
        kept.extend(row for row in rows if _shows(row, lens))
        if len(rows) < size:
            break
        start, size = start + len(rows), size * 2
    return cast(Result, kept[offset:want])


def _shows(row: object, lens: Lens) -> bool:
    if isinstance(row, Item):
        return identity(row.namespace, row.key) in lens.visible
    return cast(tuple[str, ...], row) in lens.prefixes


def _rounds(readers: list[Reader]) -> Rounds:
    """Advance every reader together, one inner batch per round; return their results."""
    results: list[Result] = [None] * len(readers)
    pending = {i: ops for i, r in enumerate(readers) if (ops := _step(r, None, results, i))}
    while pending:
        answers = yield [op for ops in pending.values() for op in ops]
        sent, pos = pending, 0
        pending = {}
        for i, ops in sent.items():
            got, pos = answers[pos : pos + len(ops)], pos + len(ops)
            if step := _step(readers[i], got, results, i):
                pending[i] = step
    return results


def _step(reader: Reader, sent: list[Result] | None, results: list[Result], i: int) -> list[Op]:
    """Send ``sent`` to ``reader``: the ops it asks for next, or [] once its result is in."""
    try:
        return next(reader) if sent is None else reader.send(sent)
    except StopIteration as done:
        results[i] = done.value
        return []


def _run(rounds: Rounds, batch: Callable[[list[Op]], list[Result]]) -> list[Result]:
    try:
        ops = next(rounds)
        while True:
            ops = rounds.send(batch(ops))
    except StopIteration as done:
        return cast(list[Result], done.value)


async def _arun(
    rounds: Rounds, abatch: Callable[[list[Op]], Awaitable[list[Result]]]
) -> list[Result]:
    try:
        ops = next(rounds)
        while True:
            ops = rounds.send(await abatch(ops))
    except StopIteration as done:
        return cast(list[Result], done.value)


def _merge(ops: list[Op], reads: list[Result]) -> list[Result]:
    """Results in the order of ``ops``: each read's own, None for each write."""
    answers = iter(reads)
    return [None if isinstance(op, PutOp) else next(answers) for op in ops]
