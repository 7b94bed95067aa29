"""``Limits(shared=True)``: a workspace's returns take turns across the processes over one store,
as one process's do (`SharedThrottle.turn`). Two services over one database stand for two
processes."""

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import store_url
from readmit.errors import Abandoned
from readmit.service import shared_limits
from readmit.service.limits import Limits
from readmit.service.operations import Service
from readmit.service.shared_limits import SharedThrottle
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store
from readmit.testing import SlowVerifier
from servicekit import team_away_while_changed

KEY = b"shared-turns-signing-key-0123456789"


@dataclass
class Process:
    """One server process: its service, and the verifier it judges with."""

    service: Service
    verifier: SlowVerifier


@pytest.fixture
def processes(backend: str, tmp_path: Path) -> Iterator[list[Process]]:
    with store_url(backend, tmp_path) as url:
        made = []
        for _ in range(2):
            verifier = SlowVerifier(seconds=0.01)
            service = Service(
                open_store(url),
                signer=HmacSha256Signer(KEY),
                verifier=verifier,
                limits=Limits(shared=True, concurrent_returns=8),
            )
            made.append(Process(service, verifier))
        try:
            yield made
        finally:
            for process in made:
                process.service.close()
                process.service.store.close()


def _together(processes: list[Process], workspace: str) -> int:
    """Verifier calls of a team of four returning at once in ``workspace``, agent ``n``
    through process ``n % len(processes)``."""
    callers = team_away_while_changed(processes[0].service, workspace, workspace)
    before = sum(p.verifier.calls for p in processes)
    threads = [
        threading.Thread(
            target=processes[n % len(processes)].service.return_, args=(caller, "ops", "p")
        )
        for n, caller in enumerate(callers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    return sum(p.verifier.calls for p in processes) - before


def test_a_team_returning_through_two_processes_judges_as_much_as_through_one(
    processes: list[Process],
) -> None:
    """Each process judged the same pairs again: 40 calls where one process made 20."""
    one = _together(processes[:1], "one")

    two = _together(processes, "two")

    assert one > 0
    assert two == one


@dataclass
class Two:
    """Two processes' throttles over one store."""

    first: SharedThrottle
    second: SharedThrottle
    store: SqlStore


@pytest.fixture
def two(backend: str, tmp_path: Path) -> Iterator[Two]:
    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        made = [SharedThrottle(Limits(shared=True), s) for s in stores]
        try:
            yield Two(made[0], made[1], stores[0])
        finally:
            for throttle, store in zip(made, stores, strict=True):
                throttle.close()
                store.close()


def test_a_return_waiting_for_another_process_stops_when_its_client_goes_away(two: Two) -> None:
    gone = threading.Event()
    gone.set()

    with two.first.turn("w"), pytest.raises(Abandoned), two.second.turn("w", gone):
        pass

    assert two.store.lease_holder("w", shared_limits.NEXT) is None  # it left the line
    with two.second.turn("w"):  # and the turn is free once the first gives it back
        assert two.store.lease_holder("w", shared_limits.TURN) is not None


def test_the_first_waiting_elsewhere_has_the_turn_before_the_holders_process_again(
    two: Two,
) -> None:
    """The holder's process would take it back at once, before the other looked again."""
    order: list[str] = []
    first = two.first.turn("w")
    first.__enter__()

    def elsewhere() -> None:
        with two.second.turn("w"):
            order.append("second")

    waiting = threading.Thread(target=elsewhere)
    waiting.start()
    for _ in range(3000):  # until it is first in line (at most 300 s)
        if two.store.lease_holder("w", shared_limits.NEXT) is not None:
            break
        threading.Event().wait(0.1)
    first.__exit__(None, None, None)
    with two.first.turn("w"):  # at once: the line's first goes before it
        order.append("first again")
    waiting.join(300)

    assert order == ["second", "first again"]


def test_different_workspaces_do_not_wait_for_each_other(two: Two) -> None:
    with two.first.turn("w"), two.second.turn("v"):
        held = [two.store.lease_holder(w, shared_limits.TURN) for w in ("w", "v")]

    assert None not in held
    assert held[0] != held[1]
