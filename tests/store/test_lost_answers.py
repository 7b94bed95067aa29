"""A write committed whose answer was lost: said to be unknown, and safe to send again.

A batch sent again whole (the same ids, saying the same) is answered with the epochs it
was recorded at instead of being refused as ids already used; a decision's own number
is known to the store that recorded it without reading it back; a COMMIT whose answer
never comes says that whether it committed is unknown (a review of the service through
PostgreSQL restarts and connection losses).
"""

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from builders import KEY
from conftest import fresh_postgres_schema, postgres_url
from readmit.decide import decide
from readmit.errors import InvalidEvent, StoreError
from readmit.events import Assert, Event, ItemDraft, ReturnRequest, Revoke
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, audit, open_store, resent
from readmit.store.deadline import ENV, UNKNOWN
from readmit.store.postgres import _lost
from readmit.store.sql import SqlStore

T0 = datetime(2026, 5, 1, 8, tzinfo=UTC)


def batch(n: int = 3, text: str = "The hotel is the Hilton.") -> list[Event]:
    events: list[Event] = [
        Assert(
            id=f"e{i}",
            at=T0 + timedelta(seconds=i),
            author="a",
            item=ItemDraft(id=f"i{i}", text=text),
        )
        for i in range(n - 1)
    ]
    return [
        *events,
        Revoke(id=f"e{n - 1}", at=T0 + timedelta(seconds=n), author="a", target="i0", why="off"),
    ]


@pytest.fixture
def trip(store: WorkStateStore) -> WorkStateStore:
    store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
    store.append(
        "trip", [Assert(id="first", at=T0, author="a", item=ItemDraft(id="x", text="Hello."))]
    )
    return store


def test_a_batch_sent_again_whole_is_answered_with_what_was_recorded(trip: WorkStateStore) -> None:
    recorded = trip.append("trip", batch())
    assert trip.append("trip", batch()) == recorded
    assert [r.epoch for r in recorded] == [2, 3, 4]
    assert len(trip.events("trip")) == 4


def test_a_batch_the_server_timed_sent_again_is_answered_whatever_its_times(
    trip: WorkStateStore,
) -> None:
    recorded = trip.append("trip", batch(), clock=lambda: T0 + timedelta(hours=1))
    again = trip.append("trip", batch(), clock=lambda: T0 + timedelta(hours=2))
    assert again == recorded
    assert {r.event.at for r in again} == {T0 + timedelta(hours=1)}


def test_part_of_a_batch_sent_again_is_answered_as_it_was_recorded(trip: WorkStateStore) -> None:
    recorded = trip.append("trip", batch())
    assert trip.append("trip", batch()[1:]) == recorded[1:]


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(batch(text="The hotel is the Ritz."), id="other-words"),
        pytest.param(batch(4), id="more"),
        pytest.param(batch()[1:] + batch()[:1], id="other-order"),
    ],
)
def test_a_batch_that_is_not_the_one_recorded_is_refused(
    trip: WorkStateStore, sent: list[Event]
) -> None:
    trip.append("trip", batch())
    with pytest.raises(InvalidEvent):
        trip.append("trip", sent)
    assert len(trip.events("trip")) == 4


def test_a_batch_the_server_did_not_time_is_refused_with_other_times(trip: WorkStateStore) -> None:
    trip.append("trip", batch())
    later = [replace(e, at=e.at + timedelta(minutes=1)) for e in batch()]
    with pytest.raises(InvalidEvent):
        trip.append("trip", later)


def test_a_decision_is_found_logged_only_by_its_row_and_everything_sent_with_it(
    tmp_path: Path,
) -> None:
    """`audit.decided_anyway`, on a log holding a's decisions 1 and 3 and b's 2."""
    store = open_store(f"sqlite:///{tmp_path}/r.db")
    assert isinstance(store, SqlStore)
    store.create_workspace("trip", [Agent(id=a, principal="p", role="r") for a in ("a", "b")])
    members = {a: Member(store, "trip", a, HmacSha256Signer(KEY)) for a in ("a", "b")}
    for agent in ("a", "b", "a"):
        members[agent].depart()
        members[agent].return_()
    with store._read() as db:
        rows = db.execute("SELECT agent, at, epoch, outcome, body FROM decisions").fetchall()
    third = (rows[2][0], datetime.fromisoformat(rows[2][1]), *rows[2][2:])
    unknown = StoreError(f"PostgreSQL: server closed the connection; {UNKNOWN}")
    look = partial(audit.decided_anyway, store._transaction, "trip")

    assert look((3, 3), third, unknown) == 2
    assert look((2, 2), third, unknown) is None  # another decision holds that row
    assert look((4, 4), third, unknown) is None  # none does
    assert look((4, 3), third, unknown) is None  # its number given again to another row
    assert look((3, 3), ("b", *third[1:]), unknown) is None
    assert look((3, 3), (*third[:4], rows[0][4]), unknown) is None  # a's first decision's body
    refused = StoreError("PostgreSQL: could not serialize access")  # rolled back: not looked for
    assert look((3, 3), third, refused) is None
    store.close()


def test_a_return_decided_again_whose_record_was_rolled_back_is_not_taken_for_the_first(
    tmp_path: Path,
) -> None:
    """The same request decided twice, nothing between: two records alike in every column
    but their numbers. The second's COMMIT failed, its outcome unknown, and it was rolled
    back: it was answered with the first's number, as if recorded (a review)."""
    store = open_store(f"sqlite:///{tmp_path}/r.db")
    assert isinstance(store, SqlStore)
    store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
    store.depart("trip", "a", T0)
    request = ReturnRequest(id="return@T0", at=T0, agent="a", task="*", purpose="*")
    signer = HmacSha256Signer(KEY)
    assert decide(store, "trip", request, policy=Policy(), verifier=None, signer=signer).id == 1
    writing = store._transaction

    @contextlib.contextmanager
    def lost(lock: str, wait: float | None = None) -> Iterator[Any]:
        setattr(store, "_transaction", writing)  # noqa: B010  (the look-up's is the real one)
        with writing(lock, wait) as db:
            yield db
            raise StoreError(f"PostgreSQL: server closed the connection; {UNKNOWN}")

    setattr(store, "_transaction", lost)  # noqa: B010
    with pytest.raises(StoreError, match=UNKNOWN):
        decide(store, "trip", request, policy=Policy(), verifier=None, signer=signer)
    assert [d.id for d in store.decisions("trip")] == [1]
    store.close()


def test_a_decisions_own_number_is_known_without_reading_it_back(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/r.db")
    store.create_workspace("trip", [Agent(id=a, principal="p", role="r") for a in ("a", "b")])
    members = {a: Member(store, "trip", a, HmacSha256Signer(KEY)) for a in ("a", "b")}
    numbers = []
    for agent in ("a", "b", "a"):
        members[agent].depart()
        numbers.append(members[agent].return_().id)

    def down(*args: Any) -> Any:
        raise StoreError("PostgreSQL: server closed the connection unexpectedly")

    setattr(store, "_reading", down)  # noqa: B010
    assert [store.own_number("trip", a, n) for a, n in zip("aba", numbers, strict=True)] == [
        1,
        1,
        2,
    ]
    with pytest.raises(StoreError):  # another agent's number for it is not made up
        store.own_number("trip", "b", numbers[2])
    store.close()


def test_a_commit_without_an_answer_is_told_apart_from_one_the_server_refused() -> None:
    assert _lost(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert not _lost(psycopg.errors.SerializationFailure("could not serialize access"))
    assert _lost(psycopg.errors.AdminShutdown("terminating connection"))  # maybe committed
    assert not _lost(psycopg.errors.UniqueViolation("duplicate key"))
    assert not _lost(None)


COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"
"""The COMMIT psycopg sends: a simple query message (``READ COMMITTED`` is not one)."""


class CutCommit:
    """A loopback TCP proxy to PostgreSQL that, once ``armed``, forwards the next COMMIT and
    drops its answer, closing the client's connection: the server committed, unanswered.

    With ``hold`` (seconds), it holds the COMMIT back instead until the client gives up on
    it (the statement deadline), then that long more, and forwards it: a slow COMMIT the
    server finishes after the client stopped waiting.
    """

    def __init__(
        self, upstream: tuple[str, int], hold: float | None = None, lose: bool = False
    ) -> None:
        self.upstream, self.armed, self.cut = upstream, False, threading.Event()
        self.hold, self.lose = hold, lose
        """``lose``: the COMMIT itself is dropped, and both connections closed: the server
        rolls back."""
        self.ends: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            self.ends += [client, server]
            committing = threading.Event()
            threading.Thread(
                target=self._up, args=(client, server, committing), daemon=True
            ).start()
            threading.Thread(
                target=self._down, args=(server, client, committing), daemon=True
            ).start()

    def _up(
        self, client: socket.socket, server: socket.socket, committing: threading.Event
    ) -> None:
        while data := _recv(client):
            if self.armed and COMMIT in data:
                self.armed = False
                committing.set()
                if self.lose:
                    self.cut.set()
                    for end in (client, server):
                        _shut(end)
                    return
                if self.hold is not None:
                    while _recv(client):  # until the client gives up on it
                        pass
                    self.cut.set()
                    time.sleep(self.hold)
            if not _send(server, data):
                return

    def _down(
        self, server: socket.socket, client: socket.socket, committing: threading.Event
    ) -> None:
        while data := _recv(server):
            if committing.is_set() and self.hold is None:  # the COMMIT's answer: committed
                self.cut.set()  # before the client can see it
                for end in (client, server):
                    _shut(end)
                return
            if not _send(client, data):
                return

    def close(self) -> None:
        self.listener.close()
        for end in self.ends:
            _shut(end)
            end.close()


def _send(end: socket.socket, data: bytes) -> bool:
    """Whether ``data`` went out (not: the proxy or the other end closed ``end``)."""
    try:
        end.sendall(data)
    except OSError:
        return False
    return True


def _shut(end: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already
        end.shutdown(socket.SHUT_RDWR)


def _recv(end: socket.socket) -> bytes:
    try:
        return end.recv(65536)
    except OSError:
        return b""


@contextlib.contextmanager
def proxied(**options: Any) -> Iterator[tuple[CutCommit, str]]:
    """A `CutCommit` in front of a fresh schema, and the URL through it."""
    with fresh_postgres_schema() as url:
        parts = urlsplit(url)
        proxy = CutCommit((parts.hostname or "127.0.0.1", parts.port or 5432), **options)
        netloc = (
            f"{parts.username}@127.0.0.1:{proxy.port}"
            if parts.username
            else f"127.0.0.1:{proxy.port}"
        )
        yield proxy, urlunsplit(parts._replace(netloc=netloc))
        proxy.close()


@pytest.mark.postgres
def test_a_batch_whose_commit_went_unanswered_is_answered_as_recorded() -> None:
    """It was answered 503, its outcome unknown, and sent again to find out (stop 74)."""
    with proxied() as (proxy, url):
        store = open_store(url)
        store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
        proxy.armed = True
        recorded = store.append("trip", batch())
        assert proxy.cut.is_set()
        assert [r.event.id for r in recorded] == ["e0", "e1", "e2"]
        assert store.events("trip") == recorded
        assert store.append("trip", batch()) == recorded  # sent again all the same
        store.close()


@pytest.mark.postgres
def test_a_batch_whose_commit_never_reached_the_server_says_its_outcome_is_unknown() -> None:
    with proxied(lose=True) as (proxy, url):
        store = open_store(url)
        store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
        proxy.armed = True
        with pytest.raises(StoreError, match="whether the transaction committed is unknown"):
            store.append("trip", batch())
        assert proxy.cut.is_set()
        assert store.events("trip") == []
        recorded = store.append("trip", batch())
        assert [r.event.id for r in recorded] == ["e0", "e1", "e2"]
        store.close()


@pytest.mark.postgres
def test_a_health_check_after_the_server_dropped_its_connections_is_made_on_a_new_one() -> None:
    """``/health`` answered 503 while every route answered 200 (a review)."""
    with fresh_postgres_schema() as url:
        name = f"readmit-health-{uuid.uuid4().hex}"
        store = open_store(f"{url}&application_name={name}")
        store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
        store.events("trip")  # a connection left idle in the pool
        with psycopg.connect(postgres_url(), autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (name,),
            )
        store.check()
        store.close()


@pytest.mark.postgres
def test_a_batch_whose_slow_commit_the_deadline_cut_is_read_back_once_it_lands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read back at once, the batch was not there yet; then the server committed it, and
    the memory layer had undone its write (a review). The read waits for the lock."""
    monkeypatch.setenv(ENV, "5")  # a loaded machine answers in time; the COMMIT is held past it
    with proxied(hold=0.5) as (proxy, url):
        store = open_store(url)
        store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
        member = Member(store, "trip", "a", HmacSha256Signer(KEY))
        proxy.armed = True
        recorded = member.record(batch())
        assert proxy.cut.is_set()
        assert [r.event.id for r in recorded] == ["e0", "e1", "e2"]
        assert store.events("trip") == recorded
        store.close()


def _arm_at_decision(store: WorkStateStore, proxy: CutCommit) -> None:
    """Arm ``proxy`` for the COMMIT of the next decision ``store`` records, not a read's."""
    writing, recording = getattr(store, "_transaction"), store.record_decision  # noqa: B009

    def armed(lock: str) -> Any:
        setattr(store, "_transaction", writing)  # noqa: B010
        proxy.armed = True
        return writing(lock)

    def recorded(*args: Any, **kwargs: Any) -> int:
        setattr(store, "_transaction", armed)  # noqa: B010
        return recording(*args, **kwargs)

    setattr(store, "record_decision", recorded)  # noqa: B010


@pytest.mark.postgres
@pytest.mark.parametrize("lose", [False, True], ids=["answer lost", "commit lost"])
def test_a_return_whose_commit_went_unanswered_is_answered_as_logged(lose: bool) -> None:
    """It was answered as of unknown outcome; sent again, it was decided again and
    numbered after the first (stop 74). A COMMIT that never reached the server still is."""
    with proxied(lose=lose) as (proxy, url):
        store = open_store(url)
        store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
        member = Member(store, "trip", "a", HmacSha256Signer(KEY))
        member.record(batch())
        member.depart()
        _arm_at_decision(store, proxy)
        if lose:
            with pytest.raises(StoreError, match="whether the transaction committed is unknown"):
                member.return_()
            assert store.decisions("trip") == []
        else:
            decided = member.return_()
            assert (decided.id, decided.own) == (1, 1)
            [logged] = store.decisions("trip")
            assert (logged.id, logged.agent, logged.outcome) == (1, "a", "issued")
        assert proxy.cut.is_set()
        store.close()


@pytest.mark.postgres
def test_a_decision_rolled_back_is_not_taken_for_one_given_its_number_since(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same request decided twice: the first's COMMIT never reached the server, and
    before it was looked for, the second was recorded, numbered as the first had been and
    alike in every other column. The first was answered as recorded (a review)."""
    request = ReturnRequest(id="return@T0", at=T0, agent="a", task="*", purpose="*")
    signer = HmacSha256Signer(KEY)
    with proxied(lose=True) as (proxy, url):
        store, direct = open_store(url), open_store(url)  # the proxy cuts one COMMIT only
        store.create_workspace("trip", [Agent(id="a", principal="p", role="r")])
        store.depart("trip", "a", T0)
        looking = audit.decided_anyway

        def second_first(*args: Any) -> int | None:
            decide(direct, "trip", request, policy=Policy(), verifier=None, signer=signer)
            return looking(*args)

        monkeypatch.setattr(audit, "decided_anyway", second_first)
        _arm_at_decision(store, proxy)
        with pytest.raises(StoreError, match=UNKNOWN):
            decide(store, "trip", request, policy=Policy(), verifier=None, signer=signer)
        assert [(d.id, d.agent) for d in store.decisions("trip")] == [(1, "a")]
        direct.close()
        store.close()


@pytest.mark.postgres
def test_a_look_up_waits_only_so_long_for_a_lock_a_lost_session_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server session whose client is gone keeps the workspace's lock until the server
    notices (its keepalive: hours). With no statement deadline, append then looked for its
    batch that long, where it had failed at once before it looked (a review's half-open
    proxy); a decision's look-up too. Each now gives up as a lock wait, and does not queue
    behind another writer of this process waiting for the same lock (a review)."""
    monkeypatch.setenv(ENV, "0")
    monkeypatch.setattr(resent, "LOOK_UP_WAIT", 0.5)
    monkeypatch.setattr(audit, "LOOK_UP_WAIT", 0.5)
    workspace = f"trip-{uuid.uuid4().hex}"  # the lock's key is the name, in every schema
    with fresh_postgres_schema() as url, psycopg.connect(postgres_url()) as lost:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        store.create_workspace(workspace, [Agent(id="a", principal="p", role="r")])
        lost.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (workspace,))
        writer = threading.Thread(target=store.append, args=(workspace, batch()))
        writer.start()  # this process's turn taken, the lock waited for
        time.sleep(0.2)
        started = time.monotonic()
        unknown = StoreError(f"PostgreSQL: server closed the connection; {UNKNOWN}")
        row = ("a", T0, 1, "issued", "{}")

        assert resent.answered(store, workspace, batch(), None, unknown) == []
        assert audit.decided_anyway(store._transaction, workspace, (1, 1), row, unknown) is None
        assert time.monotonic() - started < 30  # two waits of 0.5 s, on a loaded machine
        notes = unknown.__notes__
        assert len(notes) == 2
        assert all("could not be read" in n and "lock timeout" in n for n in notes)
        lost.rollback()  # the server noticed at last
        writer.join(30)
        assert store.logged(workspace, ["e0", "e1", "e2"]) == {"e0": 1, "e1": 2, "e2": 3}
        store.close()


@pytest.mark.postgres
def test_a_batch_sent_again_waits_its_turn_behind_a_long_write_of_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its look-up was bounded as one for a write of unknown outcome is, and the batch,
    recorded, was refused as ids already used behind a write that held the lock longer
    (a review)."""
    monkeypatch.setattr(resent, "LOOK_UP_WAIT", 0.2)
    monkeypatch.setattr(audit, "LOOK_UP_WAIT", 0.2)
    with fresh_postgres_schema() as url:
        store = open_store(url)
        assert isinstance(store, SqlStore)
        workspace = f"trip-{uuid.uuid4().hex}"  # the lock's key is the name, in every schema
        store.create_workspace(workspace, [Agent(id="a", principal="p", role="r")])
        recorded = store.append(workspace, batch())
        holding, looking = threading.Event(), store.logged

        def long_write() -> None:
            with store._transaction(lock=workspace):
                holding.set()
                time.sleep(1.5)

        def behind_a_long_write(*args: Any) -> dict[str, int]:
            threading.Thread(target=long_write).start()
            assert holding.wait(30)
            return looking(*args)

        monkeypatch.setattr(store, "logged", behind_a_long_write)
        assert store.append(workspace, batch()) == recorded
        store.close()
