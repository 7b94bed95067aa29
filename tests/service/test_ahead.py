"""``readmit serve --judge-ahead``: away agents' returns judged in the background
(`readmit.service.ahead`), giving way to returns."""

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from builders import KEY, build_note, spent
from conftest import store_url
from readmit.admission.invalidation.cache import with_cache
from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier
from readmit.ahead import LEASE, WANTED
from readmit.clock import now
from readmit.decide import decide
from readmit.errors import StoreError
from readmit.events import ReturnRequest
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.service.ahead import AheadJudge
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store
from readmit.testing import FunctionVerifier, UnavailableVerifier

SETTLED_S = 60.0
"""Longest a test waits for the background judge (a loaded machine is slow)."""


def _team(
    store: SqlStore,
    verifier: Verifier,
    said: tuple[str, str] | None = None,
    clock: Callable[[], datetime] = now,
) -> tuple[Service, Caller, Caller]:
    """Two agents; the first has returned once (its task is known; or, if its departure
    ``said`` what it returns to, never) and is away while the second replaces items its
    checkpoint holds."""
    team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
    store.create_workspace("w", team)
    service = Service(store, signer=HmacSha256Signer(KEY), verifier=verifier, clock=clock)
    away, other = (Caller(workspace="w", agent=agent) for agent in team)
    for n in range(6):
        service.record(other, [build_note("a1", n)])
    if said is None:
        service.depart(away)
        service.return_(away, "ops", "p")
    service.depart(away, returning_to=said)
    return service, away, other


def _start(service: Service) -> AheadJudge:
    """The service's judge, 30 s a pass, judging once a workspace is quiet for 10 ms."""
    return service.judge_ahead(30.0, quiet=0.01)


def _changes(service: Service, other: Caller, upto: int = 9) -> None:
    """``other`` replaces items the away agent's checkpoint holds (notes 6 to ``upto`` - 1),
    in one batch: the judge wakes once, however slow the machine."""
    service.record(other, [build_note("a1", n) for n in range(6, upto)])


def _judged_after_changes(service: Service, other: Caller, upto: int = 9) -> AheadJudge:
    """The service's judge, stopped once it has settled after `_changes`."""
    ahead = _start(service)
    try:
        _changes(service, other, upto)
        assert ahead.settle(SETTLED_S)
    finally:
        ahead.close()
    return ahead


def _held() -> tuple[FunctionVerifier, threading.Event, threading.Event]:
    """A verifier whose calls wait for ``release`` (set until the test clears it), and
    ``inside``, set by the first call made after ``release`` is cleared."""
    inside, release = threading.Event(), threading.Event()
    release.set()

    def held(pair: Pair) -> Verdict:
        if not release.is_set():
            inside.set()
        assert release.wait(SETTLED_S)
        return Verdict(invalidates=False, confidence=1.0)

    return FunctionVerifier(held, name="held"), inside, release


def _returning(
    service: Service, away: Caller, asks: Callable[[], bool], release: threading.Event
) -> dict[str, Any]:
    """``away``'s return through ``service`` in a thread; once ``asks()`` says it asks for
    the workspace, ``release`` is set (the pass goes on from where it was held). The
    operator's record of its judgment (`spent`), which says what it spent."""
    answer: list[Any] = []
    returning = threading.Thread(target=lambda: answer.append(service.return_(away, "ops", "p")))
    returning.start()
    _until(asks)
    release.set()
    returning.join(SETTLED_S)
    assert answer, "the return did not end"
    assert answer[0]["judgment"] is not None
    return spent(service.store, away.workspace, away.agent.id)


@pytest.fixture
def judged(store: SqlStore) -> Iterator[tuple[Service, Caller, Caller]]:
    service, away, other = _team(store, make_verifier("builtin"))
    yield service, away, other
    if service.ahead is not None:
        service.ahead.close()


def test_an_away_agents_return_is_judged_ahead_and_judges_nothing(
    judged: tuple[Service, Caller, Caller],
) -> None:
    service, away, other = judged
    ahead = _start(service)

    _changes(service, other)
    assert ahead.settle(SETTLED_S)
    judgment = service.return_(away, "ops", "p")["judgment"]

    assert ahead.passes >= 1
    assert judgment is not None
    assert spent(service.store, "w", "a0")["calls"] == 0
    assert judgment["unscreened"] == 0


def test_a_pass_is_dated_by_the_servers_clock(store: SqlStore) -> None:
    """A server whose clock runs an hour behind the machine's dates its returns by it; its
    judge's screenings bind only returns dated at or after them, so the judge dates its
    passes by it too (dated by the machine's, the return judged everything again)."""
    service, away, other = _team(
        store, make_verifier("builtin"), clock=lambda: now() - timedelta(hours=1)
    )
    ahead = _start(service)
    try:
        _changes(service, other)
        assert ahead.settle(SETTLED_S)
    finally:
        ahead.close()
    service.return_(away, "ops", "p")

    assert ahead.passes >= 1
    assert spent(service.store, "w", "a0")["calls"] == 0


def test_without_judging_ahead_the_same_return_judges(
    judged: tuple[Service, Caller, Caller],
) -> None:
    """The control of the test above: the return would have judged."""
    service, away, other = judged

    _changes(service, other)
    judgment = service.return_(away, "ops", "p")["judgment"]

    assert judgment is not None
    assert spent(service.store, "w", "a0")["calls"] > 0


def test_an_agent_whose_task_is_unknown_is_not_judged_ahead(store: SqlStore) -> None:
    team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
    store.create_workspace("w", team)
    service = Service(store, signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"))
    away, other = (Caller(workspace="w", agent=agent) for agent in team)
    service.record(other, [build_note("a1", 0)])
    service.depart(away)  # it never returned: nothing says what it will return to
    ahead = _start(service)
    try:
        service.record(other, [build_note("a1", 3)])
        assert ahead.settle(SETTLED_S)
    finally:
        ahead.close()

    assert ahead.passes == 0


def test_a_new_process_finds_the_task_in_the_audit_log(
    judged: tuple[Service, Caller, Caller],
) -> None:
    """The judge of a restarted server reads the task from the agent's last issued view."""
    service, _, other = judged
    ahead = _start(service)  # a new judge: no return has told it the task

    service.record(other, [build_note("a1", 6)])
    assert ahead.settle(SETTLED_S)

    assert ahead.passes == 1
    assert ahead._tasks[("w", "a0")] == ("ops", "p")


def test_judging_ahead_gives_way_to_a_return(store: SqlStore) -> None:
    """A return that asks for the turn gets it after the call in progress."""
    verifier, first_call, release = _held()
    service, away, other = _team(store, verifier)
    release.clear()
    ahead = _start(service)
    try:
        _changes(service, other)
        assert first_call.wait(SETTLED_S)  # judging ahead, inside its first call
        calls_ahead = len(verifier.calls)
        judgment = _returning(service, away, lambda: service.turns.contended("w"), release)
    finally:
        ahead.close()

    assert isinstance(judgment, dict)
    assert judgment["calls"] > 0  # the return judged what the judge had not reached
    assert ahead.passes == 0  # the pass stopped after its call, and the return went first
    assert len(verifier.calls) == calls_ahead + judgment["calls"]


def test_judging_ahead_gives_way_between_stages_not_only_after_a_call(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A return that asks for the turn while the pass reads its context (no verifier call
    in sight) gets it once that read is done: the pass makes no call at all."""
    builtin = make_verifier("builtin")
    verifier = FunctionVerifier(lambda pair: builtin.judge([pair])[0], name=builtin.name)
    service, away, other = _team(store, verifier)
    verifier.calls.clear()
    reading, release = threading.Event(), threading.Event()
    read = store.return_context

    def held(workspace: str, request: ReturnRequest) -> Any:
        if threading.current_thread().name == "readmit-ahead":
            reading.set()
            assert release.wait(SETTLED_S)
        return read(workspace, request)

    monkeypatch.setattr(store, "return_context", held)
    ahead = _start(service)
    try:
        _changes(service, other)
        assert reading.wait(SETTLED_S)  # the pass is reading the context
        judgment = _returning(service, away, lambda: service.turns.contended("w"), release)
    finally:
        release.set()
        ahead.close()

    assert judgment["calls"] > 0
    assert ahead.passes == 0
    assert len(verifier.calls) == judgment["calls"]  # every call was the return's


def test_a_returns_wait_behind_the_judge_does_not_count_against_its_time_budget(
    store: SqlStore,
) -> None:
    """The return waits out the judge's call in progress, longer than its whole time
    budget, and still judges: that wait was not its own."""
    verifier, inside, release = _held()
    service, away, other = _team(store, verifier)
    service.policy = replace(service.policy, max_judgment_seconds=2.0)
    release.clear()
    ahead = _start(service)
    try:
        _changes(service, other)
        assert inside.wait(SETTLED_S)
        answer: list[Any] = []
        returning = threading.Thread(
            target=lambda: answer.append(service.return_(away, "ops", "p"))
        )
        returning.start()
        _until(lambda: service.turns.contended("w"))
        time.sleep(2.5)  # longer than the return's budget
        release.set()
        returning.join(SETTLED_S)
    finally:
        ahead.close()

    assert answer, "the return did not end"
    assert spent(service.store, "w", "a0")["calls"] > 0


def test_a_pass_that_keeps_what_the_last_kept_is_not_repeated(store: SqlStore) -> None:
    """A call budget too small for one item: each pass judges the same first pairs."""
    service, _, other = _team(store, make_verifier("builtin"))
    service.policy = Policy(max_judgments=1, batch_size=1)
    ahead = _judged_after_changes(service, other, 12)

    assert ahead.passes <= 2


def test_a_verifier_that_is_down_is_not_asked_again_and_again(store: SqlStore) -> None:
    service, _, other = _team(store, make_verifier("builtin"))
    service.verifier = UnavailableVerifier()
    ahead = _judged_after_changes(service, other)

    assert ahead.passes == 1


def _until(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + SETTLED_S
    while not done():
        assert time.monotonic() < deadline, "the return never asked for its turn"
        time.sleep(0.001)


def test_an_agent_whose_departure_says_its_task_is_judged_ahead_without_a_view(
    store: SqlStore,
) -> None:
    service, away, other = _team(store, make_verifier("builtin"), said=("ops", "p"))
    ahead = _judged_after_changes(service, other)
    judgment = service.return_(away, "ops", "p")["judgment"]

    assert ahead.passes >= 1
    assert judgment is not None
    assert spent(service.store, "w", "a0")["calls"] == 0


def test_an_agent_that_returned_while_the_pass_waited_for_its_turn_is_not_judged(
    store: SqlStore,
) -> None:
    service, _, other = _team(store, make_verifier("builtin"))
    ahead = _start(service)
    try:
        with service.turns.take("w"):  # a return holds the workspace
            _changes(service, other)  # the judge finds a0 away, and waits for the turn
            _until(lambda: service.turns.contended("w"))
            request = ReturnRequest(id="r", at=now(), agent="a0", task="ops", purpose="p")
            decide(
                store,
                "w",
                request,
                policy=service.policy,
                verifier=service.verifier,
                signer=service.signer,
            )
        assert ahead.settle(SETTLED_S)
    finally:
        ahead.close()

    assert ahead.passes == 0


def test_of_two_server_processes_one_judges_a_workspace_ahead_at_a_time(
    backend: str, tmp_path: Path
) -> None:
    """Two stores over one database stand for two processes. The second is told of events
    while the first is inside a verifier call: it leaves the workspace to the first, and
    no pair is judged by both."""
    release, inside = threading.Event(), threading.Event()
    judged: dict[str, list[tuple[str, str]]] = {"first": [], "second": []}

    def verifier(name: str) -> FunctionVerifier:
        def judge(pair: Pair) -> Verdict:
            judged[name].append((pair.later.event_id, pair.earlier.id))
            if name == "first" and not release.is_set():
                inside.set()
            assert release.wait(SETTLED_S)
            return Verdict(invalidates=False, confidence=1.0)

        return FunctionVerifier(judge, name="held")  # one name: one cache

    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        release.set()  # its first return judges too
        first, _, other = _team(stores[0], with_cache(verifier("first"), stores[0]))
        signer = HmacSha256Signer(KEY)
        second = Service(
            stores[1], signer=signer, verifier=with_cache(verifier("second"), stores[1])
        )
        judged["first"].clear()
        release.clear()
        judges = [_start(first), _start(second)]
        try:
            _changes(first, other)
            assert inside.wait(SETTLED_S)  # the first judges, holding the workspace
            judges[1].changed("w")  # as if the second had recorded events
            _until(lambda: judges[1].deferred >= 1)
            assert not judged["second"]
            release.set()
            assert all(judge.settle(SETTLED_S) for judge in judges)
        finally:
            release.set()
            for judge in judges:
                judge.close()
            for store in stores:
                store.close()

    assert judged["first"]
    assert not set(judged["first"]) & set(judged["second"])


def test_a_pass_gives_way_to_a_return_decided_by_another_process(
    backend: str, tmp_path: Path
) -> None:
    """Two stores over one database stand for two processes (as two `readmit mcp`, one per
    agent): a return through the second asks the first's judge, inside a call, to give
    way, and the pass stops after that call instead of running on beside the return."""
    verifier, inside, release = _held()
    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        first, away, other = _team(stores[0], verifier)
        second = Service(stores[1], signer=HmacSha256Signer(KEY), verifier=verifier)
        # The return's verifier calls end once the judge has seen the ask: on a busy
        # machine the return could otherwise end, and withdraw its ask, before the judge's
        # thread ran again to look (it would then run on: no return was left to give way to).
        seen = threading.Event()
        asked = stores[0].leased

        def leased(workspace: str, prefix: str) -> bool:
            found = asked(workspace, prefix)
            if found and threading.current_thread().name == "readmit-ahead":
                seen.set()
            return found

        held = verifier.fn

        def judge(pair: Pair) -> Verdict:
            verdict = held(pair)
            if threading.current_thread().name != "readmit-ahead":
                assert seen.wait(SETTLED_S)
            return verdict

        stores[0].leased = leased  # type: ignore[method-assign]
        verifier.fn = judge
        release.clear()
        ahead = _start(first)
        try:
            _changes(first, other)
            assert inside.wait(SETTLED_S)  # the first process judges ahead, in a call
            calls_ahead = len(verifier.calls)
            # it asks, through the store, while it is decided
            judgment = _returning(second, away, lambda: stores[0].leased("w", WANTED), release)
            assert ahead.settle(SETTLED_S)
        finally:
            release.set()
            ahead.close()
            for store in stores:
                store.close()

    assert judgment["calls"] > 0
    assert ahead.passes == 0  # the pass stopped after its call in progress
    assert len(verifier.calls) == calls_ahead + judgment["calls"]


def test_a_return_asks_nothing_when_no_other_process_judges(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No judge anywhere, or only this process's: a return writes no lease (a write
    transaction each), it only reads who holds the judge-ahead lease."""
    service, away, other = _team(store, make_verifier("builtin"))
    taken: list[str] = []
    take = store.lease

    def lease(workspace: str, name: str, holder: str, seconds: float) -> bool:
        taken.append(name)
        return take(workspace, name, holder, seconds)

    monkeypatch.setattr(store, "lease", lease)
    _changes(service, other)
    service.return_(away, "ops", "p")
    service.depart(away)
    ahead = service.judge_ahead(30.0, quiet=3600.0)  # this process's own judge, idle
    try:
        assert store.lease("w", LEASE, ahead.holder, 30)  # holding the lease, as in a pass
        service.record(other, [build_note("a1", n) for n in range(9, 12)])
        service.return_(away, "ops", "p")
    finally:
        ahead.close()

    assert not [name for name in taken if name.startswith(WANTED)]


def test_a_return_asks_a_judge_that_started_after_it_began(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process takes the judge-ahead lease while a return is being decided: the
    return asks at its next stage or call, not only if the judge was there first."""
    monkeypatch.setattr("readmit.service.ahead.RECHECK_S", 0.0)
    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        seen: list[bool] = []

        def judge(pair: Pair) -> Verdict:  # the return's calls see whether it asked
            seen.append(stores[0].leased("w", WANTED))
            return Verdict(invalidates=False, confidence=1.0)

        service, away, other = _team(stores[1], FunctionVerifier(judge, name="seen"))
        read = stores[1].return_context

        def reading(workspace: str, request: ReturnRequest) -> Any:
            assert stores[0].lease("w", LEASE, "another process", 30)  # it starts judging
            return read(workspace, request)

        monkeypatch.setattr(stores[1], "return_context", reading)
        try:
            _changes(service, other)
            seen.clear()
            service.return_(away, "ops", "p")
            asked_after = stores[0].leased("w", WANTED)
        finally:
            for store in stores:
                store.close()

    assert seen
    assert all(seen)  # asked from its first stage on
    assert not asked_after  # and withdrawn once decided


def test_a_pass_over_many_away_agents_leaves_the_rest_once_its_time_is_spent(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(3)]
    store.create_workspace("w", team)
    service = Service(store, signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"))
    away, other = [Caller(workspace="w", agent=a) for a in team[:2]], Caller("w", team[2])
    service.record(other, [build_note("a2", n) for n in range(3)])
    for caller in away:
        service.depart(caller, returning_to=("ops", "p"))
    ahead = service.judge_ahead(30.0)  # its thread waits: nothing has changed since
    readings = iter(range(0, 10_000, 20))  # each reading of the clock 20 s after the last
    monkeypatch.setattr("readmit.service.ahead.elapsed", lambda: float(next(readings)))
    judged: list[str] = []
    one_pass = ahead._pass

    def watched(workspace: str, agent: str) -> Any:
        judged.append(agent)
        return one_pass(workspace, agent)

    monkeypatch.setattr(ahead, "_pass", watched)

    try:
        ahead._judge("w")  # one round, as the thread would run it
        assert ahead.passes == 1  # the second agent is left for the next round
        assert "w" in ahead._pending
        del ahead._pending["w"]
        ahead._judge("w")  # the next round starts with the agent the first one left
        assert "w" not in ahead._pending  # each has had its pass: wait for new events
    finally:
        ahead.close()

    assert judged == ["a0", "a1"]


def test_judging_ahead_with_the_store_down_logs_one_line_a_failure(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An outage logged a traceback at every pass (a review): the store's error says it."""
    service, _, other = _team(store, make_verifier("builtin"))

    def down(*args: object) -> object:
        raise StoreError("PostgreSQL: connection refused")

    monkeypatch.setattr(store, "away", down)
    _judged_after_changes(service, other)

    failed = [
        r for r in caplog.records if "judging ahead in workspace 'w' failed" in r.getMessage()
    ]
    assert failed
    assert all(r.exc_info is None and r.getMessage().endswith("connection refused") for r in failed)
