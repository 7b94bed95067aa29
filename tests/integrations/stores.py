"""Inner LangGraph stores for the integration's tests."""

import sqlite3
from collections.abc import Callable, Iterable

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
