"""``/health`` checks the store once for every caller (`readmit.service.health.SharedCheck`).

Each caller ran its own whole-file check in the threads every route shares, and /health
needs no key: 60 connections polling it held agents' requests for up to 8.5 s (a probe).
"""

import threading

import anyio
import pytest

from readmit.errors import StoreError
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


def test_a_refusal_answers_every_caller_of_its_window_and_the_next_window_checks_again() -> None:
    check = _Check(StoreError("store damaged"))
    shared = SharedCheck(check, fresh_s=3600)

    answers = anyio.run(_callers, shared, check, 10)

    assert [str(a) for a in answers] == ["store damaged"] * 10
    assert check.runs == 1
    with pytest.raises(StoreError, match="store damaged"):
        anyio.run(shared)
    assert check.runs == 1

    check.refusal = None
    shared = SharedCheck(check, fresh_s=0)  # every call a new window
    anyio.run(shared)
    anyio.run(shared)
    assert check.runs == 3


def test_a_bug_in_the_check_is_raised_to_its_caller_and_not_kept() -> None:
    calls: list[int] = []

    def broken() -> None:
        calls.append(1)
        raise RuntimeError("a bug")

    shared = SharedCheck(broken, fresh_s=3600)

    for _ in range(2):
        with pytest.raises(RuntimeError, match="a bug"):
            anyio.run(shared)
    assert len(calls) == 2  # not an answer: checked again
