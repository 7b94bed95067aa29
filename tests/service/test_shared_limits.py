"""``Limits(shared=True)``: every server process over one store takes from the same per-agent
buckets and return slots (`readmit.service.shared_limits`). Two store objects over one
database stand for two processes; the clock is the test's."""

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from conftest import store_url
from readmit.errors import RateLimited, StoreError
from readmit.model import Agent
from readmit.service import shared_limits
from readmit.service.limits import BYTES, EVENTS, REQUESTS, Limits, Throttle
from readmit.service.shared_limits import SharedThrottle
from readmit.store import SqlStore, open_store

A1, A2 = ("w", "A1"), ("w", "A2")


@dataclass
class Clock:
    t: float = 1_000.0

    def __call__(self) -> float:
        return self.t


@dataclass
class Two:
    """Two processes' throttles over one store, on one clock."""

    first: SharedThrottle
    second: SharedThrottle
    clock: Clock
    store: SqlStore


@pytest.fixture
def two(backend: str, tmp_path: Path) -> Iterator[Two]:
    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        stores[0].create_workspace(
            "w", [Agent(id=a, principal="org", role="r") for a in ("A1", "A2")]
        )
        clock = Clock()
        limits = Limits(rate=0.5, burst=3, event_rate=10.0, max_events=20, byte_rate=100.0,
                        max_body_bytes=1000, concurrent_returns=2, shared=True)  # fmt: skip
        made = [SharedThrottle(limits, s, clock=clock) for s in stores]
        try:
            yield Two(made[0], made[1], clock, stores[0])
        finally:
            for throttle, store in zip(made, stores, strict=True):
                throttle.close()
                store.close()


def admitted(attempt: object, *args: object) -> bool:
    try:
        attempt(*args)  # type: ignore[operator]
    except RateLimited:
        return False
    return True


def test_requests_through_two_processes_share_one_burst(two: Two) -> None:
    takes = [admitted(t.admit_request, A1) for t in (two.first, two.second) * 3]

    assert takes == [True, True, True, False, False, False]
    assert admitted(two.first.admit_request, A2)  # another agent's bucket is its own


def test_a_refusal_says_when_to_come_back_and_the_bucket_refills_with_time(two: Two) -> None:
    for _ in range(3):
        two.first.admit_request(A1)

    with pytest.raises(RateLimited) as refused:
        two.second.admit_request(A1)
    two.clock.t += 1.9  # 0.95 of a token at 0.5/s
    still = admitted(two.second.admit_request, A1)
    two.clock.t += 0.1
    back = admitted(two.first.admit_request, A1)

    assert refused.value.retry_after == 2
    assert "more than 0.5 requests per second" in str(refused.value)
    assert (still, back) == (False, True)


def test_a_refused_take_takes_nothing(two: Two) -> None:
    two.first.admit_events(A1, 15)

    refused = admitted(two.second.admit_events, A1, 10)  # 5 left: refused whole
    five = admitted(two.second.admit_events, A1, 5)

    assert (refused, five) == (False, True)


def test_events_and_bytes_have_buckets_of_their_own(two: Two) -> None:
    two.first.admit_events(A1, 20)
    two.first.admit_bytes(A1, 1000)

    assert admitted(two.second.admit_request, A1)
    assert not admitted(two.second.admit_events, A1, 1)
    assert not admitted(two.second.admit_bytes, A1, 1)
    rows = two.store.conn.execute(
        "SELECT kind FROM rate_buckets WHERE workspace = 'w' AND agent = 'A1' ORDER BY kind"
    ).fetchall()
    assert [r[0] for r in rows] == sorted([BYTES, EVENTS, REQUESTS])


def test_a_charge_after_the_fact_holds_back_the_next_body_in_every_process(two: Two) -> None:
    two.first.charge_bytes(A1, 1500)  # a departure's checkpoint, over the whole bucket

    refused = admitted(two.second.admit_bytes, A1, 0)
    two.clock.t += 4.0  # 400 bytes back: still below empty
    still = admitted(two.first.admit_bytes, A1, 0)
    two.clock.t += 1.0
    paid = admitted(two.second.admit_bytes, A1, 0)

    assert (refused, still, paid) == (False, False, True)


def test_a_clock_behind_the_last_take_refills_nothing(two: Two) -> None:
    for _ in range(3):
        two.first.admit_request(A1)
    two.clock.t -= 60.0  # another machine, its clock a minute behind

    assert not admitted(two.second.admit_request, A1)


def test_returns_running_in_two_processes_count_against_one_limit(two: Two) -> None:
    with two.first.return_slot(A1), two.second.return_slot(A1):
        with pytest.raises(RateLimited) as third, two.first.return_slot(A1):
            pass
        other = admitted(lambda: two.second.return_slot(A2).__enter__())
    after = admitted(lambda: two.second.return_slot(A1).__enter__())

    assert "at most 2 returns at a time per agent" in str(third.value)
    assert other
    assert after


def test_a_slot_left_by_a_process_that_died_runs_out(two: Two) -> None:
    for slot in range(2):  # a process that died holding both, its leases nearly out
        assert two.store.lease("w", f"{shared_limits.SLOT}A1 {slot}", "dead", 0.05)

    threading.Event().wait(0.1)  # waits at least that long, however slow the machine

    with two.first.return_slot(A1):
        pass


def test_renewing_a_slot_given_back_does_not_take_it_again(two: Two) -> None:
    lease = ("w", f"{shared_limits.SLOT}A1 0")
    assert two.store.lease(*lease, "me", 30)

    kept = two.store.renew_lease(*lease, "me", 30)
    two.store.lease(*lease, "me", 0)  # given back
    renewed_late = two.store.renew_lease(*lease, "me", 30)
    assert two.store.lease(*lease, "another", 30)
    taken_from_another = two.store.renew_lease(*lease, "me", 30)

    assert (kept, renewed_late, taken_from_another) == (True, False, False)
    assert two.store.lease_holder(*lease) == "another"


def test_a_held_slot_is_renewed_while_its_return_runs(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_limits, "RENEW_S", 0.01)
    renewed = threading.Event()
    original = two.store.renew_lease

    def renew(*args: object) -> bool:
        found = original(*args)  # type: ignore[arg-type]
        renewed.set()
        return found

    monkeypatch.setattr(two.first.store, "renew_lease", renew)
    with two.first.return_slot(A1):
        assert renewed.wait(60)
    (holders,) = two.store.conn.execute(
        "SELECT COUNT(*) FROM leases WHERE workspace = 'w' AND name <> 'judge-ahead'"
    ).fetchone()
    assert holders == 0  # given back when the return ended


def test_without_sharing_each_process_keeps_its_own_buckets(two: Two) -> None:
    own = [Throttle(two.first.limits, monotonic=lambda: 0.0) for _ in range(2)]

    takes = [admitted(t.admit_request, A1) for t in own * 3]

    assert takes == [True] * 6  # the default: N processes give an agent N times the burst


def test_a_slot_run_out_and_taken_again_here_is_given_back_by_its_own_return(two: Two) -> None:
    """A return's slot ran out while it ran (its renewals failed: the store was down), and
    another return of the same process took it: each gives back only its own."""
    lease = ("w", f"{shared_limits.SLOT}A1 0")
    first = two.first.return_slot(A1)
    first.__enter__()
    holder = two.store.lease_holder(*lease)
    assert holder is not None
    assert two.store.lease(*lease, holder, 0.05)  # now nearly out, as unrenewed
    threading.Event().wait(0.1)  # waits at least that long, however slow the machine
    second = two.first.return_slot(A1)
    second.__enter__()
    taken = two.store.lease_holder(*lease)

    first.__exit__(None, None, None)
    kept = two.store.lease_holder(*lease)
    second.__exit__(None, None, None)

    assert taken not in (None, holder)
    assert kept == taken  # the first return gave back none of the second's
    assert two.store.lease_holder(*lease) is None


def test_closing_stops_the_renewals_before_the_store_is_closed(two: Two) -> None:
    """`Service.close` closes the store right after the throttle: no renewal may still run."""
    with two.first.return_slot(A1):
        renewing = two.first._renewing
        assert renewing is not None
        two.first.close()
        alive = renewing.is_alive()

    assert not alive


def test_without_a_clock_of_its_own_a_bucket_keeps_the_databases_time(two: Two) -> None:
    """PostgreSQL's clock, which processes on several machines share (SQLite's machine's)."""
    throttle = SharedThrottle(two.first.limits, two.store)
    throttle.admit_request(A1)

    (kept,) = two.store.conn.execute(
        "SELECT at FROM rate_buckets WHERE workspace = 'w' AND agent = 'A1'"
    ).fetchone()
    if two.store.conn.dialect == "postgres":
        (now,) = two.store.conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()
    else:
        now = time.time()
    assert 0 <= float(now) - kept < 60


@dataclass
class Outage:
    """The store refuses to give a slot back while ``down`` is set, as one gone away does."""

    store: SqlStore
    down: bool = True

    def lease(self, workspace: str, name: str, holder: str, seconds: float) -> bool:
        if self.down and seconds <= 0:
            raise StoreError("PostgreSQL: terminating connection due to administrator command")
        return SqlStore.lease(self.store, workspace, name, holder, seconds)


def test_a_slot_not_given_back_while_the_store_was_down_is_given_back_on_the_next_claim(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not left held until it runs out (30 s of 429s for an agent with nothing running)."""
    outage = Outage(two.first.store)
    monkeypatch.setattr(two.first.store, "lease", outage.lease)
    two.first.limits = replace(two.first.limits, concurrent_returns=1)
    with two.first.return_slot(A1):
        pass  # its give-back failed: the store was down
    outage.down = False

    with two.first.return_slot(A1):  # the store is back: this process's next return
        pass


def test_a_slot_not_given_back_while_the_store_was_down_is_given_back_in_the_background(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's return gets it once the store is back, long before it runs out."""
    monkeypatch.setattr(shared_limits, "GIVE_BACK_S", 0.01, raising=False)
    outage = Outage(two.first.store)
    monkeypatch.setattr(two.first.store, "lease", outage.lease)
    for throttle in (two.first, two.second):
        throttle.limits = replace(throttle.limits, concurrent_returns=1)
    with two.first.return_slot(A1):
        pass
    refused = not admitted(lambda: two.second.return_slot(A1).__enter__())
    outage.down = False
    renewing = two.first._renewing
    assert renewing is not None
    renewing.join(60)  # it ends once it has nothing left to give back or renew

    assert refused
    assert not renewing.is_alive()
    with two.second.return_slot(A1):
        pass
