"""`ReadmitMemory` (over ``mem0.Memory``) and `AsyncReadmitMemory` (over ``mem0.AsyncMemory``).

**The write order.** Mem0 gives memories their ids, so Mem0 writes before readmit records:

1. *Validate.* The write's annotations (``metadata["_readmit"]``) are parsed and their premises
   resolved; for a delete, what it will revoke is read from readmit. A bad annotation raises
   `InvalidInput` and Mem0 is not called; so does an ``update`` or ``delete`` of a memory
   whose current version the agent may not read in readmit, with `Forbidden`.
2. *Mem0 writes.*
3. *readmit records what Mem0 reported.* If readmit refuses (a premise id or a cited evidence
   id it does not know, ...), the wrapper undoes the Mem0 write where Mem0 can (the memories
   ``add`` created are deleted, an ``update``'s old text and metadata are written back) and
   raises readmit's error. A Mem0 delete cannot be undone: if readmit then fails to record
   it, the error says so, and the revocation is owed (`readmit.integrations.corrections`),
   as it is for a write Mem0 could not take back (`readmit.integrations.mem0.undo`).

An ``add(..., infer=False)`` of several messages is sent to Mem0 one message at a time
(what Mem0 does with them anyway), so when Mem0 fails part-way the memories it created
first are recorded before its error is raised. ``delete_all`` and ``reset`` revoke the
items of every memory they removed, even when they raise part-way.
"""

import asyncio
import threading
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar, cast

from readmit.integrations.annotations import ANNOTATIONS
from readmit.integrations.mem0 import bulk, expiry, withdrawals
from readmit.integrations.mem0.ids import not_on_itself
from readmit.integrations.mem0.index import ViewIndex
from readmit.integrations.mem0.paging import apaged, paged
from readmit.integrations.mem0.recorder import MemoryKey, OnWithheld, Recorder, Stated
from readmit.integrations.mem0.undo import Update, aundo_add, aundo_update, undo_add, undo_update
from readmit.integrations.mem0.updates import (
    annotating,
    failed_first,
    merged,
    same_key,
)
from readmit.integrations.team import Member, one_at_a_time
from readmit.integrations.to_the_end import Turn, to_the_end

T = TypeVar("T")

_SCOPE = ("user_id", "agent_id", "run_id")


def _parts(messages: Any, kwargs: Mapping[str, Any]) -> list[Any]:
    """``messages`` as the adds to send: one per message for a raw (``infer=False``) list."""
    raw = kwargs.get("infer", True) is False and kwargs.get("memory_type") is None
    if raw and isinstance(messages, list) and len(messages) > 1:
        return [[m] for m in messages]
    return [messages]


class ReadmitMemory:
    """A ``mem0.Memory`` whose writes are readmit events and whose reads the view filters.

    Methods other than those below go to the inner memory unrecorded.

    Args:
        inner: The Mem0 memory that keeps the application's data.
        member: The agent reading and writing through it.
        key: A memory's readmit key (None: memories have none).
        on_withheld: While no view is served (after a withheld return, or once the
            issued view expired), ``"remove"`` from reads every memory the decision
            judged, or ``"raise"`` `ViewWithheld` (`ViewExpired`) on every read; until
            the agent's next return either way.
    """

    def __init__(
        self,
        inner: Any,
        member: Member,
        *,
        key: MemoryKey | None = None,
        on_withheld: OnWithheld = "remove",
    ) -> None:
        self.inner = inner
        self.readmit = Recorder(member, key, on_withheld)
        self._deciding = threading.Lock()
        """Held while a read decides the return or a departure is written: a thread reading
        beside a return being decided was served Mem0's results unfiltered (a probe)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def depart(self, task: str | None = None, purpose: str | None = None) -> None:
        """The agent leaves: checkpoint it; its next read decides its return.

        ``task`` and ``purpose`` (together): what it returns to, so that memories annotated
        with a task or purposes apply (`Member.depart`); else every task and purpose.
        """
        one_at_a_time(self._deciding, self.readmit.depart, task, purpose)

    def _view(self) -> ViewIndex:
        return one_at_a_time(self._deciding, self.readmit.before_read)

    def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        stated = self.readmit.stated(kwargs.get("metadata"), "add to Mem0")
        rows: list[dict[str, Any]] = []
        result: dict[str, Any] = {}
        error: Exception | None = None
        for part in _parts(messages, kwargs):
            try:
                result = self.inner.add(part, **kwargs)
            except Exception as exc:
                error = exc
                break
            rows += result.get("results", [])
        changed = [str(r["id"]) for r in rows if r.get("event") in ("UPDATE", "DELETE")]
        histories = {m: self.inner.history(m) for m in changed}
        keyed = expiry.read_back(rows, kwargs, self.readmit.key is not None)
        memories = {m: self.inner.get(m) for m in keyed}  # their keys and expiration dates
        try:
            self.readmit.added(rows, stated, memories, histories)
        except Exception as refused:
            undo_add(self.inner, self.readmit.member, rows, histories, refused)
            failed_first(refused, error)
            raise
        if error is not None:
            raise error
        return {**result, "results": rows}

    def update(self, memory_id: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        metadata = kwargs.get("metadata", args[1] if len(args) > 1 else None)
        current: dict[str, Any] | None = self.inner.get(memory_id)
        where = f"update of memory {memory_id!r}"
        stated = self.readmit.stated(merged(current, metadata), where)
        not_on_itself(stated.premises.values(), memory_id, where)
        before = self.inner.history(memory_id)
        self.readmit.may_change(memory_id, before, "update")
        result: dict[str, Any] = self.inner.update(memory_id, *args, **kwargs)
        made = Update(memory_id, current, metadata, before)
        try:  # reading it back too: failing, readmit holds what Mem0 no longer does (a review)
            after = made.after = self.inner.history(memory_id)
            memory = made.memory = self.inner.get(memory_id)
            same_key(self.readmit.key_of, memory_id, current, memory, after[len(before) :])
            changes = annotating(current, metadata) or expiry.changed(current, memory)
            self.readmit.updated(memory_id, before, after, memory, stated, changes)
        except Exception as refused:
            undo_update(self.inner, self.readmit.member, made, refused)
            raise
        return result

    def delete(self, memory_id: str) -> dict[str, Any]:
        history = self.inner.history(memory_id)
        self.readmit.may_change(memory_id, history, "delete")
        memory = self.inner.get(memory_id) if self.readmit.key else None
        targets = self.readmit.delete_targets(memory_id, memory)
        try:
            result: dict[str, Any] = self.inner.delete(memory_id)
        except Exception:  # deleted before, readmit failing to record it: recorded now
            if not targets or not bulk.deleted_before(history):
                raise
            result = dict(bulk.DELETED)
        withdrawals.deleted(self.readmit.member, memory_id, targets)
        return result

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """Mem0's ``delete_all``; the item of every memory it removed is revoked."""
        scope = bulk.scoped(user_id=user_id, agent_id=agent_id, run_id=run_id)
        return bulk.delete_all(self.inner, self.readmit, scope, self._gone)

    def reset(self) -> None:
        """Mem0's ``reset``; the item of every memory of this bank is revoked."""
        bulk.reset(self.inner, self.readmit, self._gone)

    def _gone(self, memory_id: str) -> bool:
        """Whether Mem0 no longer holds ``memory_id`` (yes, if it cannot say: fail closed)."""
        try:
            return self.inner.get(memory_id) is None
        except Exception:
            return True

    def search(self, query: str, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        return paged(self.readmit, self._view(), partial(self.inner.search, query, **kwargs), top_k)

    def get_all(self, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        return paged(self.readmit, self._view(), partial(self.inner.get_all, **kwargs), top_k)

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory, or None when the view removed it (``search``/``get_all`` say why)."""
        view = self._view()
        memory: dict[str, Any] | None = self.inner.get(memory_id)
        keep = memory is None or view.keeps(memory, self.readmit.key_of(memory))
        return memory if keep else None

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Mem0's history of the memory; ``[]`` when the view removed it (texts and all)."""
        view, memory = self._view(), self.inner.get(memory_id)
        shown = view.keeps_history(memory_id, memory, self.readmit.key_of(memory))
        return cast(list[dict[str, Any]], self.inner.history(memory_id)) if shown else []


class AsyncReadmitMemory:
    """`ReadmitMemory` for a ``mem0.AsyncMemory``: the same behaviour, awaited.

    readmit's own work (deciding a return, which a model verifier can make take minutes, and
    recording writes) runs in a worker thread, one call at a time: it never holds the loop.
    A write whose caller is cancelled (a timeout) still runs to its end, Mem0's part and
    readmit's record, before the cancellation is raised (`to_the_end`): Mem0 goes on in its
    worker threads whatever the caller does.
    """

    def __init__(
        self,
        inner: Any,
        member: Member,
        *,
        key: MemoryKey | None = None,
        on_withheld: OnWithheld = "remove",
    ) -> None:
        self.inner = inner
        self.readmit = Recorder(member, key, on_withheld)
        self._turn = Turn()
        self._working = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def _off_loop(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` in a worker thread, after any earlier call has finished."""
        async with self._turn():
            return await asyncio.to_thread(one_at_a_time, self._working, work, *args)

    async def _stated(self, metadata: Mapping[str, Any] | None, where: str) -> Stated:
        """`Recorder.stated`, in a worker thread (not waiting its turn) if it reads readmit."""
        if metadata is None or ANNOTATIONS not in metadata:
            return self.readmit.stated(metadata, where)
        return await asyncio.to_thread(self.readmit.stated, metadata, where)

    def depart(self, task: str | None = None, purpose: str | None = None) -> None:
        """The agent leaves: checkpoint it; its next read decides its return.

        ``task`` and ``purpose`` (together): what it returns to, so that memories annotated
        with a task or purposes apply (`Member.depart`); else every task and purpose.
        """
        one_at_a_time(self._working, self.readmit.depart, task, purpose)

    async def adepart(self, task: str | None = None, purpose: str | None = None) -> None:
        """`depart`, awaited: the checkpoint is written off the event loop."""
        await self._off_loop(self.readmit.depart, task, purpose)

    @to_the_end
    async def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        stated = await self._stated(kwargs.get("metadata"), "add to Mem0")
        rows: list[dict[str, Any]] = []
        result: dict[str, Any] = {}
        error: Exception | None = None
        for part in _parts(messages, kwargs):
            try:
                result = await self.inner.add(part, **kwargs)
            except Exception as exc:
                error = exc
                break
            rows += result.get("results", [])
        changed = [str(r["id"]) for r in rows if r.get("event") in ("UPDATE", "DELETE")]
        histories = {m: await self.inner.history(m) for m in changed}
        keyed = expiry.read_back(rows, kwargs, self.readmit.key is not None)
        memories = {m: await self.inner.get(m) for m in keyed}  # keys, expiration dates
        try:
            await self._off_loop(self.readmit.added, rows, stated, memories, histories)
        except Exception as refused:
            member = self.readmit.member
            await aundo_add(self.inner, member, rows, histories, refused, self._off_loop)
            failed_first(refused, error)
            raise
        if error is not None:
            raise error
        return {**result, "results": rows}

    @to_the_end
    async def update(self, memory_id: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        metadata = kwargs.get("metadata", args[1] if len(args) > 1 else None)
        current: dict[str, Any] | None = await self.inner.get(memory_id)
        where = f"update of memory {memory_id!r}"
        stated = await self._stated(merged(current, metadata), where)
        not_on_itself(stated.premises.values(), memory_id, where)
        before = await self.inner.history(memory_id)
        await self._off_loop(self.readmit.may_change, memory_id, before, "update")
        result: dict[str, Any] = await self.inner.update(memory_id, *args, **kwargs)
        made = Update(memory_id, current, metadata, before)
        try:  # reading it back too: failing, readmit holds what Mem0 no longer does (a review)
            after = made.after = await self.inner.history(memory_id)
            memory = made.memory = await self.inner.get(memory_id)
            same_key(self.readmit.key_of, memory_id, current, memory, after[len(before) :])
            changes = annotating(current, metadata) or expiry.changed(current, memory)
            await self._off_loop(
                self.readmit.updated, memory_id, before, after, memory, stated, changes
            )
        except Exception as refused:
            member = self.readmit.member
            await aundo_update(self.inner, member, made, refused, self._off_loop)
            raise
        return result

    @to_the_end
    async def delete(self, memory_id: str) -> dict[str, Any]:
        history = await self.inner.history(memory_id)
        await self._off_loop(self.readmit.may_change, memory_id, history, "delete")
        memory = await self.inner.get(memory_id) if self.readmit.key else None
        targets = await self._off_loop(self.readmit.delete_targets, memory_id, memory)
        try:
            result: dict[str, Any] = await self.inner.delete(memory_id)
        except Exception:  # deleted before, readmit failing to record it: recorded now
            if not targets or not bulk.deleted_before(history):
                raise
            result = dict(bulk.DELETED)
        await self._off_loop(withdrawals.deleted, self.readmit.member, memory_id, targets)
        return result

    @to_the_end
    async def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """Mem0's ``delete_all``; the item of every memory it removed is revoked."""
        scope = bulk.scoped(user_id=user_id, agent_id=agent_id, run_id=run_id)
        return await bulk.delete_all_async(
            self.inner, self.readmit, scope, self._off_loop, self._gone
        )

    @to_the_end
    async def reset(self) -> None:
        """Mem0's ``reset``; the item of every memory of this bank is revoked."""
        await bulk.reset_async(self.inner, self.readmit, self._off_loop, self._gone)

    async def _gone(self, memory_id: str) -> bool:
        try:
            return await self.inner.get(memory_id) is None
        except Exception:
            return True

    async def search(self, query: str, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        view = await self._off_loop(self.readmit.before_read)
        return await apaged(self.readmit, view, partial(self.inner.search, query, **kwargs), top_k)

    async def get_all(self, *, top_k: int = 20, **kwargs: Any) -> dict[str, Any]:
        view = await self._off_loop(self.readmit.before_read)
        return await apaged(self.readmit, view, partial(self.inner.get_all, **kwargs), top_k)

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory, or None when the view removed it (``search``/``get_all`` say why)."""
        view = await self._off_loop(self.readmit.before_read)
        memory: dict[str, Any] | None = await self.inner.get(memory_id)
        keep = memory is None or view.keeps(memory, self.readmit.key_of(memory))
        return memory if keep else None

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        """`ReadmitMemory.history`, awaited."""
        view = await self._off_loop(self.readmit.before_read)
        memory = await self.inner.get(memory_id)
        if not view.keeps_history(memory_id, memory, self.readmit.key_of(memory)):
            return []
        return cast(list[dict[str, Any]], await self.inner.history(memory_id))
