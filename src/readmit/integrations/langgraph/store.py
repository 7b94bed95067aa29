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
from collections.abc import Iterable
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

from readmit.events import Assert, Event, ItemDraft, Revoke
from readmit.integrations.langgraph.admitted import Lens, ViewWithheld
from readmit.integrations.langgraph.keys import Identity, identity, item_key, parse, render
from readmit.integrations.langgraph.paging import admit, arun, merge, paged, reader, rounds, run
from readmit.integrations.team import Member, new_id


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
        reads = [op for op in ops if not isinstance(op, PutOp)]
        if all(isinstance(op, GetOp) for op in reads):  # one round, no paging: the common case
            results = [admit(found, lens) for found in self.inner.batch(reads)] if reads else []
        else:
            results = run(rounds([reader(op, lens) for op in reads]), self.inner.batch)
        if puts:
            lens.add(self._record(puts))
            self.inner.batch(puts)
        return merge(ops, results) if puts else results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops, puts, lens = self._prepare(ops)
        if lens is None:
            await asyncio.to_thread(self._record, puts)
            return await self.inner.abatch(ops)
        reads = [op for op in ops if not isinstance(op, PutOp)]
        results = await arun(rounds([reader(op, lens) for op in reads]), self.inner.abatch)
        if puts:
            lens.add(await asyncio.to_thread(self._record, puts))
            await self.inner.abatch(puts)
        return merge(ops, results) if puts else results

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        # the hottest read: as little as possible between the caller and the inner store
        lens = self._lens
        if lens is None or lens.decided is not self.member.latest or lens.withheld:
            lens = self._read_lens()
        found = self.inner.get(namespace, key, refresh_ttl=refresh_ttl)
        if lens is None or found is None:
            return found
        return found if lens.shows(found) else None

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        lens = self._read_lens()
        found = await self.inner.aget(namespace, key, refresh_ttl=refresh_ttl)
        return found if lens is None or found is None or lens.shows(found) else None

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
        if lens is None:
            return self.inner.search(
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return cast(list[SearchItem], run(paged(op, lens), self.inner.batch))

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
        lens = self._read_lens()
        if lens is None:
            return await self.inner.asearch(
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return cast(list[SearchItem], await arun(paged(op, lens), self.inner.abatch))

    def _search_op(
        self,
        prefix: tuple[str, ...],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
    ) -> SearchOp:
        """The op `BaseStore.search` would send (its TTL default: refresh unless configured)."""
        if refresh_ttl is None:
            refresh_ttl = (self.ttl_config or {}).get("refresh_on_read", True)
        op = SearchOp(prefix, filter, limit, offset, query, refresh_ttl)
        validate_op_namespace(op)
        return op

    def _read_lens(self) -> Lens | None:
        """The lens reads go through now (None: unfiltered).

        Raises:
            ViewWithheld: after a withheld return, in ``raise`` mode.
        """
        lens = self._current_lens()
        if lens is not None and lens.withheld and self.on_withheld == "raise":
            raise ViewWithheld(lens.decided)
        return lens

    def _prepare(self, batch: Iterable[Op]) -> tuple[list[Op], list[PutOp], Lens | None]:
        """Validate ``batch`` and find the lens its reads go through (None: unfiltered).

        Raises:
            ViewWithheld: if the batch reads after a withheld return, in ``raise`` mode.
        """
        ops = list(batch)
        puts = [op for op in ops if isinstance(op, PutOp)]
        for put in puts:  # before readmit records it; reads are the inner store's to check
            validate_op_namespace(put)
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
