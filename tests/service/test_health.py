"""``/health`` checks the store once for every caller (`readmit.service.health.SharedCheck`).

Each caller ran its own whole-file check in the threads every route shares, and /health
needs no key: 60 connections polling it held agents' requests for up to 8.5 s (a probe).
"""

import asyncio
import threading
import time

import anyio
import pytest

from readmit.errors import StoreError
from readmit.service import health
from readmit.service.health import SharedCheck


class _Check:
    """A store check that waits to be let go, counting its runs and the threads in it."""

    def __init__(self, refusal: StoreError | None = None) -> None:
        self.runs = 0
        self.inside = 0
        self.most_inside = 0
        self.go = threading.Event()
        self.refusal = refusal
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.runs += 1
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        self.go.wait(timeout=120)
        with self._lock:
            self.inside -= 1
        if self.refusal is not None:
            raise self.refusal


async def _callers(shared: SharedCheck, check: _Check, n: int) -> list[BaseException | None]:
    """``n`` callers at once; the check let go once all have started."""
    answers: list[BaseException | None] = []

    async def call() -> None:
        try:
            await shared()
        except StoreError as refused:
            answers.append(refused)
        else:
            answers.append(None)

    async with anyio.create_task_group() as group:
        for _ in range(n):
            group.start_soon(call)
        while check.runs == 0:  # the first caller's check has started: the rest wait on it
            await anyio.sleep(0.01)
        await anyio.sleep(0.05)  # the others queue behind it (a slower machine only waits)
        check.go.set()
    return answers


def test_callers_at_once_share_one_check_in_one_thread() -> None:
    check = _Check()
    shared = SharedCheck(check, fresh_s=3600)

    answers = anyio.run(_callers, shared, check, 40)

    assert answers == [None] * 40
    assert (check.runs, check.most_inside) == (1, 1)
    anyio.run(shared)  # within the window: answered without a check
    assert check.runs == 1


def test_a_refusal_answers_every_caller_of_its_window_and_the_next_window_checks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = _Check(StoreError("store damaged"))
    shared = SharedCheck(check, fresh_s=3600)

    answers = anyio.run(_callers, shared, check, 10)

    assert [str(a) for a in answers] == ["store damaged"] * 10
    assert check.runs == 1
    with pytest.raises(StoreError, match="store damaged"):
        anyio.run(shared)
    assert check.runs == 1

    check.refusal = None
    monkeypatch.setattr(health, "PER_CHECK_S", 0)
    shared = SharedCheck(check, fresh_s=0)  # every call a new window
    anyio.run(shared)
    anyio.run(shared)
    assert check.runs == 3


def test_a_bug_in_the_check_answers_the_callers_of_its_window() -> None:
    calls: list[int] = []

    def broken() -> None:
        calls.append(1)
        raise RuntimeError("a bug")

    shared = SharedCheck(broken, fresh_s=3600)

    for _ in range(2):
        with pytest.raises(RuntimeError, match="a bug"):
            anyio.run(shared)
    assert len(calls) == 1


def test_a_caller_cancelled_mid_check_leaves_it_running_alone() -> None:
    """A cancelled caller released the lock while its check still ran, and the next
    caller started a second check beside it (a review's finding)."""
    check = _Check()
    shared = SharedCheck(check, fresh_s=3600)

    async def cancelled_callers() -> None:
        for _ in range(4):
            task = asyncio.create_task(shared())
            while check.runs == 0:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        check.go.set()
        await shared()  # the one check's answer

    asyncio.run(cancelled_callers())

    assert (check.runs, check.most_inside) == (1, 1)


def test_an_answer_serves_ten_times_as_long_as_its_check_took(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A check of 26 s ran again 2 s after it ended: 90% of the time (a review)."""
    monkeypatch.setattr(health, "PER_CHECK_S", 1000)
    runs: list[int] = []

    def slow() -> None:
        runs.append(1)
        time.sleep(0.02)  # so its answer serves 20 s at least

    shared = SharedCheck(slow, fresh_s=0)
    anyio.run(shared)
    anyio.run(shared)

    assert len(runs) == 1


def test_a_check_that_hangs_answers_store_error_to_its_callers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A database that stopped answering held every /health caller for good (a review)."""
    monkeypatch.setattr(health, "HANG_S", 0.2)
    check = _Check()  # held until `go`: hung, as far as its callers can tell
    shared = SharedCheck(check, fresh_s=3600)

    try:
        with pytest.raises(StoreError, match=r"the store's check has not answered in 0\.2 s"):
            anyio.run(shared)
        assert check.runs == 1
    finally:
        check.go.set()


def test_a_failed_answer_serves_only_the_short_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow check that failed kept answering 503 ten times its length (a review)."""
    monkeypatch.setattr(health, "PER_CHECK_S", 1000)
    monkeypatch.setattr(health, "FRESH_S", 0.0)
    runs: list[int] = []

    def slow_and_failing() -> None:
        runs.append(1)
        time.sleep(0.02)  # a fine answer would serve 20 s
        raise StoreError("store down")

    shared = SharedCheck(slow_and_failing)
    for _ in range(2):
        with pytest.raises(StoreError, match="store down"):
            anyio.run(shared)

    assert len(runs) == 2
