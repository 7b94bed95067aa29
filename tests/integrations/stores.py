"""Inner LangGraph stores for the integration's tests, and a write cancelled in flight."""

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

import pytest
from langgraph.store.base import Op, PutOp, Result, TTLConfig
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore


class FailingStore(InMemoryStore):
    """A real ``InMemoryStore`` whose writes raise while ``failing`` (reads too if ``down``)."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False
        self.down = False

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        if self.down or (self.failing and any(isinstance(op, PutOp) for op in listed)):
            raise OSError("disk full")
        return super().batch(listed)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)


class Hooked(FailingStore):
    """A `FailingStore` that runs the next of its ``hooks`` at each put: ``before`` it lands
    (True) or after (False). A put a hook makes runs the hook after it."""

    def __init__(self) -> None:
        super().__init__()
        self.hooks: list[tuple[bool, Callable[[], object]]] = []

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        if not self.hooks or not any(isinstance(op, PutOp) for op in listed):
            return super().batch(listed)
        before, hook = self.hooks.pop(0)
        if before:
            hook()
        results = super().batch(listed)
        if not before:
            hook()
        return results


class FailingSqliteStore(SqliteStore):
    """A real ``SqliteStore`` (it keeps TTLs) whose writes raise while ``failing``; while
    ``landing``, they raise after they are written (as if the answer were lost)."""

    def __init__(self, conn: sqlite3.Connection, *, ttl: TTLConfig | None = None) -> None:
        super().__init__(conn, ttl=ttl)
        self.failing = False
        self.landing = False

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        writes = any(isinstance(op, PutOp) for op in listed)
        if self.failing and writes:
            raise OSError("disk full")
        found = super().batch(listed)
        if self.landing and writes:
            raise OSError("connection lost")
        return found


async def cancelled_while(
    write: Coroutine[Any, Any, None], started: threading.Event, go: threading.Event
) -> None:
    """Run ``write``, cancel it once ``started`` is set (its work under way in a thread), then
    set ``go`` (let that work finish); the cancellation must reach the caller."""
    task = asyncio.ensure_future(write)
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    go.set()
    with pytest.raises(asyncio.CancelledError):
        await task
