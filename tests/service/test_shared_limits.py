"""``Limits(shared=True)``: every server process over one store takes from the same per-agent
buckets and return slots (`readmit.service.shared_limits`). Two store objects over one
database stand for two processes; the clock is the test's."""

import logging
import sqlite3
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
from readmit.store import SqlStore, open_store, sqlite

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

    assert "at most 2 returns and departures at a time per agent" in str(third.value)
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
    monkeypatch.setattr(shared_limits, "SLOT_S", 3600.0)  # renewed every RENEW_S all the same
    looked, renewed = threading.Event(), threading.Event()
    original = two.store.renew_lease

    def renew(*args: object) -> bool:
        after = looked.is_set()  # a renewal begun after `taken` was read
        found = original(*args)  # type: ignore[arg-type]
        if found and after:
            renewed.set()
        return found

    monkeypatch.setattr(two.first.store, "renew_lease", renew)
    lease = ("w", f"{shared_limits.SLOT}A1 0")
    with two.first.return_slot(A1):
        # On a loaded machine the first renewal may come before this read: `taken` is then
        # its `until`, and only a renewal begun after the read is waited for.
        (taken,) = two.store.conn.execute(
            "SELECT until FROM leases WHERE workspace = ? AND name = ?", lease
        ).fetchone()
        looked.set()
        assert renewed.wait(60)  # a renewal that found the slot still held by this return
        (until,) = two.store.conn.execute(
            "SELECT until FROM leases WHERE workspace = ? AND name = ?", lease
        ).fetchone()
        assert until > taken  # held SLOT_S from the renewal, later than from the claim
    (holders,) = two.store.conn.execute(
        "SELECT COUNT(*) FROM leases WHERE workspace = 'w' AND name <> 'judge-ahead'"
    ).fetchone()
    assert holders == 0  # given back when the return ended


def test_without_sharing_each_process_keeps_its_own_buckets(two: Two) -> None:
    own = [Throttle(two.first.limits, monotonic=lambda: 0.0) for _ in range(2)]

    takes = [admitted(t.admit_request, A1) for t in own * 3]

    assert takes == [True] * 6  # the default: N processes give an agent N times the burst


def test_a_slot_run_out_and_taken_again_here_is_given_back_by_its_own_return(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A return's slot ran out while it ran (its renewals failed: the store was down), and
    another return of the same process took it: each gives back only its own."""
    monkeypatch.setattr(shared_limits, "RENEW_S", 3600.0)  # no renewal keeps the first's
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
    # read while the store is down: once it is back, the thread gives the slot back within
    # GIVE_BACK_S and ends, and reading after that raced it (None on a loaded machine)
    renewing = two.first._renewing
    outage.down = False
    assert renewing is not None
    renewing.join(60)  # it ends once it has nothing left to give back or renew

    assert refused
    assert not renewing.is_alive()
    with two.second.return_slot(A1):
        pass


def test_a_clock_behind_takes_what_is_there_and_never_moves_the_bucket_back(two: Two) -> None:
    """A process whose clock is behind the last take neither loses tokens to it nor refills
    the bucket from its earlier time when the clocks agree again."""
    two.first.admit_request(A1)
    two.clock.t -= 60.0  # another machine, its clock a minute behind
    behind = [admitted(two.second.admit_request, A1) for _ in range(2)]
    two.clock.t += 60.0

    assert behind == [True, True]  # the two tokens left, not less for the clock
    assert not admitted(two.first.admit_request, A1)  # no refill for the minute behind


def test_renewing_a_slot_holds_it_longer_and_one_run_out_is_not_taken_again(two: Two) -> None:
    held, lapsed = ("w", f"{shared_limits.SLOT}A1 0"), ("w", f"{shared_limits.SLOT}A1 1")
    # `held` for a minute, not nearly out: a renewal 50 ms late on a loaded machine found it
    # run out. That the renewal holds it longer is read in its row instead.
    assert two.store.lease(*held, "me", 60)
    assert two.store.lease(*lapsed, "me", 0.05)  # nearly out
    before = _until(two.store, held)
    kept = two.store.renew_lease(*held, "me", 3600)
    after = _until(two.store, held)

    threading.Event().wait(0.1)  # waits at least that long, however slow the machine

    assert kept
    assert after - before > 3000  # renewed for 3600 s from now, not left at 60
    assert two.store.lease_holder(*held) == "me"
    assert not two.store.renew_lease(*lapsed, "me", 30)  # ran out: gone, if no one took it
    assert two.store.lease_holder(*lapsed) is None


def _until(store: SqlStore, lease: tuple[str, str]) -> float:
    (until,) = store.conn.execute(
        "SELECT until FROM leases WHERE workspace = ? AND name = ?", lease
    ).fetchone()
    return float(until)


def _renewing_threads() -> int:
    return sum(t.name == "readmit-return-slots" for t in threading.enumerate())


def test_one_thread_renews_every_slot_a_process_holds(two: Two) -> None:
    before = _renewing_threads()

    with two.first.return_slot(A1), two.first.return_slot(A2):
        during = _renewing_threads()

    assert during - before == 1


def test_renewals_start_again_for_a_slot_taken_after_the_last_one_ended(
    two: Two, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_limits, "RENEW_S", 0.01)
    with two.first.return_slot(A1):
        renewing = two.first._renewing
    assert renewing is not None
    renewing.join(60)  # it ends once it finds no slot held
    assert not renewing.is_alive()

    with two.first.return_slot(A1):
        again = two.first._renewing
        running = again is not None and again.is_alive()

    assert running


@dataclass
class Locked:
    """A throttle over a SQLite store whose writes give up at once while ``other`` (another
    process) holds the file's write lock."""

    throttle: SharedThrottle
    store: SqlStore
    other: sqlite3.Connection
    warned: list[str]

    def lock(self) -> None:
        self.other.execute("BEGIN IMMEDIATE")

    def unlock(self) -> None:
        self.other.execute("COMMIT")


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Locked]:
    monkeypatch.setattr(sqlite, "BUSY_TIMEOUT_S", 0.01)
    path = tmp_path / "readmit.db"
    store = open_store(f"sqlite:///{path}")
    store.create_workspace("w", [Agent(id="A1", principal="org", role="r")])
    throttle = SharedThrottle(Limits(shared=True), store)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    warned: list[str] = []

    class Heard(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warned.append(record.getMessage())

    heard = Heard(logging.WARNING)
    logging.getLogger(shared_limits.__name__).addHandler(heard)
    try:
        yield Locked(throttle, store, other, warned)
    finally:
        logging.getLogger(shared_limits.__name__).removeHandler(heard)
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()
        throttle.close()
        store.close()


def test_a_slot_that_cannot_be_given_back_leaves_the_returns_answer_standing(
    locked: Locked,
) -> None:
    with locked.throttle.return_slot(A1):
        locked.lock()  # the store cannot be written as the return ends
    try:
        # read while the store is still locked: once it answers, the slot is given back
        # in the background (the next test), so reading after unlock() raced that
        held = locked.store.lease_holder("w", f"{shared_limits.SLOT}A1 0")
    finally:
        locked.unlock()

    assert [m for m in locked.warned if "could not give back the return slot" in m]
    assert held is not None


def test_a_renewal_that_fails_is_tried_again(
    locked: Locked, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_limits, "RENEW_S", 0.01)
    failed, renewed = threading.Event(), threading.Event()
    original = locked.store.renew_lease

    def renew(*args: object) -> bool:
        try:
            found = original(*args)  # type: ignore[arg-type]
        except Exception:
            failed.set()
            raise
        if failed.is_set():
            renewed.set()
        return found

    monkeypatch.setattr(locked.store, "renew_lease", renew)
    with locked.throttle.return_slot(A1):
        locked.lock()
        assert failed.wait(60)
        locked.unlock()
        assert renewed.wait(60)  # the renewals went on after the one that failed

    assert [m for m in locked.warned if "could not renew the return slot" in m]


def test_a_charge_after_the_fact_the_store_cannot_take_is_let_go_with_a_warning(
    locked: Locked,
) -> None:
    """A departure recorded is not answered as failed for its charge (a review)."""
    locked.lock()
    locked.throttle.charge_bytes(A1, 500)
    with pytest.raises(StoreError):  # a request not yet served is refused
        locked.throttle.admit_bytes(A1, 10)
    locked.unlock()

    assert [m for m in locked.warned if "could not charge 500 bytes to ('w', 'A1')" in m]


def test_the_store_unreachable_is_logged_in_one_line(
    locked: Locked, caplog: pytest.LogCaptureFixture
) -> None:
    with locked.throttle.return_slot(A1):
        locked.lock()
    locked.unlock()

    gave_back = [r for r in caplog.records if "could not give back" in r.getMessage()]
    assert gave_back
    assert not any(r.exc_info for r in gave_back)
    assert "database is locked" in gave_back[0].getMessage()
