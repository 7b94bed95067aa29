"""`ReadmitStore`: a LangGraph `BaseStore` that admits what a returning agent may read.

It wraps any inner store (``InMemoryStore``, ``SqliteStore``, ``PostgresStore``, ...) and is
built per agent, ``ReadmitStore(inner, member)``: LangGraph calls a store's ``batch`` with
no run config, so who is reading has to be fixed where the store is made, not guessed from a
context variable at call time.

Writes (`readmit.integrations.langgraph.writes`): the inner store gets every write (the
application keeps its data), and each becomes a readmit event by the agent first, so a write
readmit refuses, or whose annotations are bad, reaches neither store. A new (namespace, key)
asserts an item; an overwrite asserts the next version under the same readmit key, a
same-key replacement of the one before; a delete revokes the current version. A value's
``"_readmit"`` key carries the item's annotations (``supports``, ``depends_on``, scope,
validity, ``cites``: `readmit.integrations.annotations`); a value put with a TTL ends its
item when the inner store may sweep it (`readmit.integrations.langgraph.expiry`). A batch
that would write a path holding a version the agent may not read (another principal's) is
refused whole with `Forbidden`, before either store is written (`writes.may_write`). If the
inner store then fails the write, readmit records what makes it match what the inner store
holds, and the inner store's error is raised.

Reads (``get``, ``search``, ``list_namespaces``) show only what the agent's latest issued
view admits, plus what the agent itself wrote since that return, less the paths a teammate
wrote or withdrew since (their values were never judged for this agent;
`readmit.integrations.langgraph.admitted`). ``search`` and ``list_namespaces`` over-fetch
from the inner store, page after doubling page, until ``limit`` admitted results are found
or the inner store runs out, so filtering never starves a page. Before the agent's first
return nothing is filtered: an agent that has not been away has nothing to readmit (a store
made in a process started after its departure decides that return at its first read,
`OwedReturn`). After a withheld decision reads raise `ViewWithheld`
(``on_withheld="raise"``, the default, so an agent cannot mistake "wait for evidence" for
"no memory") or show only the agent's own writes since (``on_withheld="empty"``). An issued
view is served until its ``expires_at`` (``Policy.view_ttl`` after the return, by the
member's clock); after that it is treated exactly like a withheld one until the next return:
reads raise `ViewExpired` (a `ViewWithheld`, code ``view_expired``) or show only the agent's
own writes since the return. The view is not re-decided behind the agent's back: the next
return (the middleware's next run, or `arrive`) issues a fresh one.
"""

import asyncio
from collections.abc import Iterable
from functools import partial
from time import monotonic
from typing import Any, Literal, cast

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from readmit.errors import InvalidInput
from readmit.integrations.langgraph.admitted import Lens
from readmit.integrations.langgraph.cancelled import amatch, arecorded, matched, unstoppable
from readmit.integrations.langgraph.expiry import Expiry
from readmit.integrations.langgraph.notice import refusal
from readmit.integrations.langgraph.paging import (
    admit,
    aread_again,
    arun,
    merge,
    paged,
    read_again,
    reader,
    rounds,
    run,
)
from readmit.integrations.langgraph.pending import Pending
from readmit.integrations.langgraph.reconcile import reconcile
from readmit.integrations.langgraph.writes import Write, plan, record, recorded, written
from readmit.integrations.langgraph.writes import reads as reads_of
from readmit.integrations.owed import OwedReturn
from readmit.integrations.team import Member, lapsed, one_of
from readmit.store.deadline import LOOK_UP_WAIT


class ReadmitStore(BaseStore):
    """A LangGraph store whose reads show what ``member``'s latest return admitted.

    Args:
        inner: The store that keeps the application's data.
        member: The agent reading and writing through this store.
        on_withheld: After a withheld return, or once the issued view expired, ``"raise"``
            `ViewWithheld` (`ViewExpired`) on every read, or show only the agent's writes
            since the return (``"empty"``).
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
        one_of(on_withheld, ("raise", "empty"), "on_withheld")
        self.on_withheld = on_withheld
        self.supports_ttl = inner.supports_ttl
        self.ttl_config = inner.ttl_config
        self._expiry = Expiry.of(inner)
        self._lens: Lens | None = None
        self._latest = OwedReturn(member)  # in a process started after a departure: a return
        self._pending = Pending()
        """The agent's writes recorded here whose inner write has not landed, or failed."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops, puts, lens = self._prepare(ops)
        if lens is None:
            if not puts:
                return self.inner.batch(ops)
            return self._land(record(self.member, puts, self._expiry), ops)
        reads = [op for op in ops if not isinstance(op, PutOp)]
        if all(isinstance(op, GetOp) for op in reads):  # one round, no paging: the common case
            results = [admit(found, lens) for found in self.inner.batch(reads)] if reads else []
        else:
            results = run(rounds([reader(op, lens) for op in reads]), self.inner.batch)
        if lens.since(self.member):  # a write recorded meanwhile: read again through the lens
            results = read_again(reads, results, lens, self.member, self.inner.batch)
        if puts:
            writes = self._recorded(lens, puts)
            try:
                self._land(writes, list(puts), lens)
            except BaseException:
                self._landed(lens, writes, shown=False)
                raise
            self._landed(lens, writes)
        return merge(ops, results) if puts else results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        await self._aready()
        ops, puts, lens = self._prepare(ops, follow=False)
        await self._afollow(lens)
        if lens is None:
            if not puts:
                return await self.inner.abatch(ops)
            made = partial(record, self.member, puts, self._expiry)
            writes = await arecorded(made, self.inner, self.member)
            return await self._aland(writes, ops)
        reads = [op for op in ops if not isinstance(op, PutOp)]
        results = await arun(rounds([reader(op, lens) for op in reads]), self.inner.abatch)
        if lens.watch is not None and lens.watch.moved():  # as `Lens.since`, off the loop
            results = await aread_again(reads, results, lens, self.member, self.inner.abatch)
        if puts:
            undone = partial(self._landed, lens, shown=False)
            made = partial(self._recorded, lens, puts)
            writes = await arecorded(made, self.inner, self.member, undone)
            try:
                await self._aland(writes, list(puts), lens)
            except BaseException:
                self._landed(lens, writes, shown=False)
                raise
            self._landed(lens, writes)
        return merge(ops, results) if puts else results

    def _recorded(self, lens: Lens, puts: list[PutOp]) -> list[Write]:
        """Record ``puts`` as the agent's events, noted pending in ``lens`` until they land."""
        writes = plan(self.member, puts, self._expiry)
        ids = {w.event.id for w in writes if w.event is not None}
        with lens.lock:
            lens.pending |= ids
        try:
            epochs = {r.event.id: r.epoch for r in recorded(self.member, writes)}
        except InvalidInput:  # refused: nothing of the batch is in the log to meet
            with lens.lock:
                lens.pending -= ids
            raise
        except BaseException:  # maybe recorded all the same: the log says which
            self._pending.failed_recording(ids, self._logged(ids))
            raise
        self._pending.recorded(epochs)
        return writes

    def _logged(self, ids: set[str]) -> dict[str, int] | None:
        """The epochs of those of ``ids`` the log holds (None: unreadable; `Held.logged`)."""
        try:
            return self.member.store.logged(self.member.workspace, sorted(ids), LOOK_UP_WAIT)
        except Exception:
            return None

    def _landed(self, lens: Lens | None, writes: list[Write], shown: bool = True) -> None:
        """The inner store has answered ``writes``: show what they wrote (if it landed).

        A failed write's events stay pending (its value never lands) until no lens will
        meet them again (`Pending.settled`).
        """
        if lens is None:  # recorded without one (`record`): nothing pending
            return
        ids, made = {w.event.id for w in writes if w.event is not None}, written(writes)
        lens.answered(made, ids, landed=shown)
        latest = self._lens  # a return decided meanwhile: its lens shows what it met pending
        if latest is not None and latest.decided is not lens.decided:
            latest.answered(made, ids, landed=shown, met_only=True)
        self._pending.answered(ids, landed=shown)

    def _land(self, writes: list[Write], ops: list[Op], lens: Lens | None = None) -> list[Result]:
        """Send ``ops`` (the recorded ``writes``, maybe with reads) to the inner store.

        If it raises, readmit is made to match what the inner store then holds, and
        ``lens`` shows what landed all the same (a review: it hid the agent's write).
        """
        try:
            return self.inner.batch(ops)
        except BaseException as exc:  # an interrupt too: what landed is read back
            found: list[Result] | None
            try:
                found = self.inner.batch(reads_of(writes))
            except Exception:
                found = None
            self._landed(lens, reconcile(self.member, writes, found, exc))
            raise

    async def _aland(
        self, writes: list[Write], ops: list[Op], lens: Lens | None = None
    ) -> list[Result]:
        """`_land` with the inner store's ``abatch``, cancelled (a node's timeout) too.

        Cancelled, the write is let finish (an inner store may write in a thread that no
        cancellation stops), then read back: readmit then matches what it left.
        """
        landing, shown = asyncio.ensure_future(self.inner.abatch(ops)), partial(self._landed, lens)
        try:
            return await asyncio.shield(landing)
        except asyncio.CancelledError as cancelled:
            await unstoppable(matched(landing, self.inner, self.member, writes, cancelled, shown))
            raise
        except Exception as exc:
            shown(await amatch(self.inner, self.member, writes, exc))
            raise

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        # the hottest read: as little as possible between the caller and the inner store
        lens = self._lens
        member = self.member
        if (
            lens is None
            or lens.decided is not member.latest
            or lens.withheld
            or lapsed(lens.wake, member.clock)  # the view expired, or an item it follows
        ):
            lens = self._read_lens()
        elif (
            (watch := lens.watch) is None
            or watch.generation != getattr(member.store, "generation", None)
            or monotonic() >= watch.due_at
        ):
            lens.catch_up(member)  # `Watch.due`, inlined as far as nothing is due
        found = self.inner.get(namespace, key, refresh_ttl=refresh_ttl)
        if lens is None or found is None:
            return found
        watch = lens.watch  # `Lens.since`, inlined: a write recorded while it read is hidden
        if watch is not None and watch.generation != getattr(member.store, "generation", None):
            lens.catch_up(member)
        return found if lens.shows(found) else None

    async def _aready(self) -> None:
        """Decide an owed return, and make the lens of a new decision, off the event loop."""
        lens, latest = self._lens, self.member.latest
        if self._latest.owed or (
            latest is not None and (lens is None or lens.decided is not latest)
        ):
            await asyncio.to_thread(self._current_lens, False)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        op = GetOp(namespace, key, self._refresh(refresh_ttl))
        return cast(Item | None, (await self.abatch([op]))[0])

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        lens = self._read_lens()
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        if lens is None:
            return cast(list[SearchItem], self.inner.batch([op])[0])
        found = run(paged(op, lens), self.inner.batch)  # `batch`'s read, less its rounds
        if lens.since(self.member):  # a write recorded meanwhile: read again through the lens
            found = read_again([op], [found], lens, self.member, self.inner.batch)[0]
        return cast(list[SearchItem], found)

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return cast(list[SearchItem], (await self.abatch([op]))[0])

    def _search_op(
        self,
        prefix: tuple[str, ...],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
    ) -> SearchOp:
        """The op `BaseStore.search` would send."""
        op = SearchOp(prefix, filter, limit, offset, query, self._refresh(refresh_ttl))
        validate_op_namespace(op)
        return op

    def _refresh(self, refresh_ttl: bool | None) -> bool:
        """Whether a read refreshes TTLs: as asked, else as configured (by default, yes)."""
        if refresh_ttl is None:
            return bool((self.ttl_config or {}).get("refresh_on_read", True))
        return refresh_ttl

    def _read_lens(self, follow: bool = True) -> Lens | None:
        """The lens reads go through now (None: unfiltered); with ``follow``, up to the log.

        Raises:
            ViewWithheld: after a withheld return or once the view expired, in ``raise``
                mode (`ViewExpired` then).
        """
        lens = self._current_lens(follow)
        if lens is not None and lens.withheld and self.on_withheld == "raise":
            raise refusal(lens.decided, lens.expires if lens.expired else None)
        return lens

    def _prepare(
        self, batch: Iterable[Op], follow: bool = True
    ) -> tuple[list[Op], list[PutOp], Lens | None]:
        """Validate ``batch`` and find the lens its reads go through (None: unfiltered).

        Raises:
            ViewWithheld: if the batch reads after a withheld return or once the view
                expired, in ``raise`` mode.
        """
        ops = list(batch)
        puts = [op for op in ops if isinstance(op, PutOp)]
        for put in puts:  # before readmit records it; reads are the inner store's to check
            validate_op_namespace(put)
        lens = self._current_lens(follow)
        reads = len(puts) < len(ops)
        if lens is not None and lens.withheld and reads and self.on_withheld == "raise":
            raise refusal(lens.decided, lens.expires if lens.expired else None)
        return ops, puts, lens

    def _current_lens(self, follow: bool = True) -> Lens | None:
        """The lens of the agent's latest decision; a lapsed one once its view expired.

        With ``follow``, brought up to the workspace's log (`Lens.catch_up`).
        """
        latest = self._latest()
        if latest is None:
            return None
        lens = self._lens
        if lens is None or lens.decided is not latest:
            lens = Lens.of(latest, partial(self.member.store.newest_texts, self.member.workspace))
            lens.pending = self._pending.settled(lens)  # before other threads read through it
            self._lens = lens
            self._pending.settled(lens)  # again, now that the lens it replaced may be gone
        if not lens.withheld and lens.lapsed_at(self.member.clock):
            lens = self._lens = lens.lapsed()
            self._pending.settled(lens)
        if follow:
            lens.catch_up(self.member)
        return lens

    async def _afollow(self, lens: Lens | None) -> None:
        """`Lens.catch_up` in a worker thread, when the log may hold news or an end passed."""
        if lens is not None and (
            lens.watch is None
            or lens.watch.due() is not None
            or lapsed(lens.wake, self.member.clock)
        ):
            await asyncio.to_thread(lens.catch_up, self.member)
