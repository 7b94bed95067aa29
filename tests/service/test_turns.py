"""Returns of one workspace take turns in a process (`readmit.service.turns`)."""

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from builders import KEY, build_note, spent
from readmit.clock import elapsed
from readmit.errors import Abandoned
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.service import turns, workers
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.service.turns import Turns
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore
from readmit.testing import FunctionVerifier, SlowVerifier
from servicekit import team_away_while_changed


def test_the_next_return_of_a_workspace_starts_when_the_last_ends() -> None:
    order: list[str] = []
    gate = Turns()

    def second() -> None:
        with gate.take("w"):
            order.append("second in")

    with gate.take("w"):
        waiter = threading.Thread(target=second)
        waiter.start()
        time.sleep(0.05)  # let it reach the lock (if it did not, the order holds anyway)
        order.append("first out")
    waiter.join(30)

    assert order == ["first out", "second in"]


def test_returns_get_their_turn_in_the_order_they_asked() -> None:
    gate = Turns()
    order: list[str] = []

    def return_(name: str) -> None:
        with gate.take("w"):
            order.append(name)

    with gate.take("w"):
        threads = []
        for name in ("first", "second", "third"):
            threads.append(threading.Thread(target=return_, args=(name,)))
            threads[-1].start()
            _until(lambda: len(gate._lines["w"].waiting) == len(threads))  # queued: next asks
    for thread in threads:
        thread.join(30)

    assert order == ["first", "second", "third"]


def _until(done: Callable[[], bool]) -> None:
    """Wait for ``done`` (a thread reaching the line), failing after a minute, not hanging."""
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, "the thread never reached the line"
        time.sleep(0.001)


def test_another_workspace_does_not_wait() -> None:
    gate = Turns()
    entered = threading.Event()

    def elsewhere() -> None:
        with gate.take("other"):
            entered.set()

    with gate.take("w"):
        thread = threading.Thread(target=elsewhere)
        thread.start()
        assert entered.wait(30)
    thread.join(30)


def test_a_return_whose_client_went_away_stops_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turns, "POLL_S", 0.01)
    gate, gone = Turns(), threading.Event()
    raised: list[BaseException] = []

    def waiting() -> None:
        try:
            with gate.take("w", gone):
                pass
        except Abandoned as exc:
            raised.append(exc)

    with gate.take("w"):
        thread = threading.Thread(target=waiting)
        thread.start()
        gone.set()
        thread.join(30)  # it gives up while the turn is still held

    assert not thread.is_alive()
    assert len(raised) == 1


def test_a_return_that_stopped_waiting_leaves_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turns, "POLL_S", 0.01)
    gate, gone = Turns(), threading.Event()
    served: list[str] = []

    def return_(name: str, cancel: threading.Event | None) -> None:
        try:
            with gate.take("w", cancel):
                served.append(name)
        except Abandoned:
            pass

    with gate.take("w"):
        quitter = threading.Thread(target=return_, args=("quitter", gone))
        quitter.start()
        _until(lambda: bool(gate._lines["w"].waiting))
        patient = threading.Thread(target=return_, args=("patient", None))
        patient.start()
        gone.set()
        quitter.join(30)
    patient.join(30)

    assert served == ["patient"]
    assert not gate._lines["w"].busy  # the line is free again


def test_a_return_cancelled_before_its_turn_does_nothing() -> None:
    gone = threading.Event()
    gone.set()
    with pytest.raises(Abandoned), Turns().take("w", gone):
        raise AssertionError("a cancelled return must not run")


def test_a_coroutine_takes_its_turn_in_line_with_threads() -> None:
    """`Turns.awaited` (a return going to a worker) queues with the threads' returns."""
    gate = Turns()
    order: list[str] = []

    async def coroutine() -> None:
        async with gate.awaited("w"):
            order.append("coroutine")

    def thread_return() -> None:
        with gate.take("w"):
            order.append("thread")

    with gate.take("w"):
        waiting = threading.Thread(target=asyncio.run, args=(coroutine(),))
        waiting.start()
        _until(lambda: gate.contended("w"))
        behind = threading.Thread(target=thread_return)
        behind.start()
        _until(lambda: len(gate._lines["w"].waiting) == 2)
        order.append("holder")
    waiting.join(30)
    behind.join(30)

    assert order == ["holder", "coroutine", "thread"]
    assert not gate.contended("w")


def test_a_coroutine_whose_client_went_away_leaves_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(turns, "POLL_S", 0.01)
    gate, gone = Turns(), threading.Event()
    raised: list[BaseException] = []

    async def coroutine() -> None:
        try:
            async with gate.awaited("w", gone):
                raise AssertionError("a cancelled return must not run")
        except Abandoned as exc:
            raised.append(exc)

    with gate.take("w"):
        waiting = threading.Thread(target=asyncio.run, args=(coroutine(),))
        waiting.start()
        _until(lambda: gate.contended("w"))
        gone.set()
        waiting.join(30)  # it gives up while the turn is still held
        assert not gate.contended("w")

    assert len(raised) == 1
    assert not gate._lines["w"].busy


def test_a_cancelled_coroutine_leaves_the_line() -> None:
    gate = Turns()

    async def cancelled() -> None:
        task = asyncio.create_task(_hold(gate))
        while not gate.contended("w"):
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with gate.take("w"):
        asyncio.run(cancelled())
        assert not gate.contended("w")
    assert not gate._lines["w"].busy


async def _hold(gate: Turns) -> None:
    async with gate.awaited("w"):
        raise AssertionError("a cancelled return must not run")


@pytest.mark.parametrize("background", [True, False])
def test_a_wait_behind_a_background_holder_is_excused(background: bool) -> None:
    """Judging ahead holds the turn in the background: a return's wait behind it is not
    the return's to count against its time budget; a wait behind another return is."""
    gate = Turns()
    turns_taken: list[turns.Turn] = []

    def return_() -> None:
        with gate.take("w") as turn:
            turns_taken.append(turn)

    with gate.take("w", background=background):
        waiting = threading.Thread(target=return_)
        waiting.start()
        _until(lambda: gate.contended("w"))
        time.sleep(0.2)
    waiting.join(30)

    [turn] = turns_taken
    assert (turn.excused >= 0.2) is background
    assert turn.excused == 0 or background


def test_a_team_returning_together_judges_once(store: SqlStore) -> None:
    """The first return screens what changed; the others read its screenings.

    Returning at once used to make every return judge the same pairs: none could see
    what another had screened until that one's decision was recorded.
    """
    service = Service(store, signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"))
    callers = team_away_while_changed(service, "w", "a")
    returned: list[str] = []
    start = threading.Barrier(len(callers))

    def return_(caller: Caller) -> None:
        start.wait(30)
        assert service.return_(caller, "ops", "p")["judgment"] is not None
        returned.append(caller.agent.id)

    threads = [threading.Thread(target=return_, args=(c,)) for c in callers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    calls = [spent(store, "w", agent)["calls"] for agent in returned]

    assert len(calls) == len(callers)
    assert sorted(calls)[:-1] == [0] * (len(callers) - 1)
    assert max(calls) > 0


def test_a_return_whose_client_goes_away_while_its_context_is_read_judges_nothing(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It stops between stages, not only at its first verifier call, and records nothing."""
    builtin = make_verifier("builtin")
    verifier = FunctionVerifier(lambda pair: builtin.judge([pair])[0], name=builtin.name)
    service = Service(store, signer=HmacSha256Signer(KEY), verifier=verifier)
    callers = team_away_while_changed(service, "w", "a")
    gone = threading.Event()
    read = store.return_context

    def reading(workspace: str, request: Any) -> Any:
        context = read(workspace, request)
        gone.set()  # the client goes away as the context is read
        return context

    monkeypatch.setattr(store, "return_context", reading)

    with pytest.raises(Abandoned):
        service.return_(callers[0], "ops", "p", cancel=gone)

    assert not verifier.calls
    assert not store.decisions("w")


def _slow_team(store: SqlStore) -> tuple[Service, Caller, Caller]:
    """Two agents whose return has items to judge, a verifier slower than the time budget."""
    team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
    store.create_workspace("w", team)
    service = Service(
        store,
        signer=HmacSha256Signer(KEY),
        verifier=SlowVerifier(seconds=0.05),
        policy=Policy(max_judgment_seconds=0.5),  # 0.1 s: a loaded machine spent it all
        # before the first return's first call
    )
    first, second = (Caller(workspace="w", agent=agent) for agent in team)
    for n in range(3):
        service.record(first, [build_note("a0", n)])
    service.depart(first)
    service.depart(second)
    for n in range(3, 6):
        service.record(first, [build_note("a0", n)])
    return service, first, second


def test_the_wait_for_a_turn_counts_against_the_time_budget(store: SqlStore) -> None:
    """A team returning together with a slow model: the first judges, the next ones decide
    on what it screened instead of each spending the whole budget in turn."""
    service, first, second = _slow_team(store)
    judged: dict[str, Any] = {}

    def return_(caller: Caller) -> None:
        judged[caller.agent.id] = service.return_(caller, "ops", "p")["judgment"]

    with service.turns.take("w"):
        waiting = threading.Thread(target=return_, args=(second,))
        waiting.start()
        _until(lambda: bool(service.turns._lines["w"].waiting))
        time.sleep(0.75)  # longer than the whole budget
    waiting.join(120)
    return_(first)
    logged = {agent: spent(store, "w", agent) for agent in judged}  # what each spent

    assert logged["a1"]["calls"] == 0
    assert logged["a1"]["seconds"] >= 0.75
    assert judged["a1"]["unscreened"] > 0
    assert logged["a0"]["calls"] > 0  # the same return, not kept waiting, judges


def test_a_worker_counts_the_time_its_return_waited_for_a_worker(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``readmit serve --workers N``: the server notes when a return was asked for."""
    service, _, _ = _slow_team(store)
    monkeypatch.setattr(workers, "_SERVICE", [service])
    monkeypatch.setattr(workers, "_FLAGS", [[0]])  # its cancel flag, not set

    answer, error = workers._return("w", ("a1", "org", "r"), "ops", "p", None, 0, elapsed() - 1)

    assert error is None
    judgment = json.loads(answer)["judgment"]
    logged = spent(store, "w", "a1")  # what it spent: only the operator's record says
    assert (logged["calls"], logged["seconds"] >= 1) == (0, True)
    assert judgment["unscreened"] > 0
