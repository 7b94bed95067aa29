"""A PostgreSQL statement the server never answers fails after a deadline, not never."""

import math
import os
import select
import signal
import socket
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
import pytest

from conftest import store_url
from readmit.errors import ConfigError, StoreError
from readmit.model import Agent
from readmit.service.answers import UNAVAILABLE, UNSURE, message_of
from readmit.store import SqlStore, open_store
from readmit.store.connection import Connection
from readmit.store.deadline import ENV, SECONDS, Deadline, seconds_from
from readmit.store.postgres import PostgresConnection

AGENTS = [Agent(id="a", principal="p", role="r")]


class Named(NamedTuple):
    store: SqlStore
    url: str
    """The database's, for an admin connection."""
    name: str
    """The store's connections' ``application_name``."""
    workspace: str
    """A workspace name of its own: the writers' advisory locks are the whole database's,
    so a test holding one under a stopped server would stall another test's writer."""


@contextmanager
def named_store(tmp_path: Path, deadline: str) -> Iterator[Named]:
    """A PostgreSQL store whose connections carry a name of their own (other tests' are
    left alone), with ``deadline`` set."""
    with store_url("postgres", tmp_path) as url:
        name = f"readmit-deadline-{uuid.uuid4().hex}"
        mp = pytest.MonkeyPatch()
        mp.setenv(ENV, "30" if deadline != "0" else "0")  # opened on a loaded machine too
        try:
            store = open_store(f"{url}&application_name={name}")
        finally:
            mp.undo()
        seconds = seconds_from({ENV: deadline})
        store._pool._connect = partial(
            PostgresConnection, f"{url}&application_name={name}", seconds
        )
        for db in (store._pool.first, *store._pool._idle):
            if db.deadline is not None and seconds is not None:
                db.deadline.seconds = seconds
        try:
            yield Named(store, url, name, f"w-{uuid.uuid4().hex}")
        finally:
            store.close()


def backends(url: str, name: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (name,)
        ).fetchall()
    return [pid for (pid,) in rows]


def stop_its_backend(db: Connection, stopped: list[int]) -> None:
    """SIGSTOP the server process of ``db``'s connection, noted in ``stopped`` to resume."""
    (pid,) = db.execute("SELECT pg_backend_pid()").fetchone()
    try:
        os.kill(pid, signal.SIGSTOP)
    except PermissionError:
        pytest.skip("the test cannot signal the database server's processes")
    stopped.append(pid)


def in_thread(call: object) -> tuple[threading.Thread, list[BaseException | object]]:
    """``call`` run in a thread, so that a hang fails the test instead of the suite."""
    got: list[BaseException | object] = []

    def run() -> None:
        try:
            got.append(call())  # type: ignore[operator]
        except BaseException as exc:  # handed to the test
            got.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, got


def test_a_stopped_server_fails_the_statement_and_the_store_recovers(tmp_path: Path) -> None:
    """The server's processes stopped (SIGSTOP): the connection stays open and nothing comes
    back, as with a host or disk that hangs. The read waited for good before."""
    with named_store(tmp_path, "1") as named:
        store = named.store
        store.create_workspace(named.workspace, AGENTS)
        stopped = backends(named.url, named.name)
        try:
            for pid in stopped:
                os.kill(pid, signal.SIGSTOP)
        except PermissionError:
            pytest.skip("the test cannot signal the database server's processes")
        try:
            thread, got = in_thread(lambda: store.agents(named.workspace))
            thread.join(120)
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
        assert not thread.is_alive(), "the read still waits for the stopped server"
        assert isinstance(got[0], StoreError)
        assert "did not answer a statement within 1 s" in str(got[0])
        assert ENV in str(got[0])

        assert list(store.agents(named.workspace)) == ["a"]  # a new connection


def test_a_statement_past_the_deadline_is_cut_and_the_idle_connections_go_with_it(
    tmp_path: Path,
) -> None:
    with named_store(tmp_path, "1") as named:
        store = named.store
        with store._pool.connection() as db:
            db.execute("SELECT 1").fetchone()  # one idle connection besides the first
        assert len(store._pool._idle) == 1

        with pytest.raises(StoreError, match=r"within 1 s"), store._pool.connection() as db:
            db.execute("SELECT pg_sleep(30)")

        assert store._pool._idle == []  # a server that hangs hangs them too
        with store._pool.connection() as db:
            assert db.execute("SELECT 2").fetchone() == (2,)


def test_a_connection_idle_past_the_deadline_is_not_cut(tmp_path: Path) -> None:
    """Only a statement in flight is timed: a reply that came clears its deadline."""
    with named_store(tmp_path, "1") as named:
        store = named.store
        store.create_workspace(named.workspace, AGENTS)
        with store._pool.connection() as db:
            db.execute("SELECT 1").fetchone()
            time.sleep(2.5)  # past the deadline and more than one look of the watcher
            assert db.execute("SELECT 2").fetchone() == (2,)
            assert not db.broken
        with store._pool.connection() as db, db.transaction():  # BEGIN and COMMIT timed too
            time.sleep(2.5)  # the work between statements is not
            assert db.execute("SELECT 3").fetchone() == (3,)
        assert list(store.agents(named.workspace)) == ["a"]


def test_statements_within_the_deadline_run_as_before(tmp_path: Path) -> None:
    with named_store(tmp_path, "30") as named:
        store = named.store
        with store._pool.connection() as db:
            assert db.execute("SELECT pg_sleep(0.3), 1").fetchone() == ("", 1)


def test_the_deadline_is_read_from_the_environment() -> None:
    assert seconds_from({}) == SECONDS == 60
    assert seconds_from({ENV: " "}) == SECONDS
    assert seconds_from({ENV: "2.5"}) == 2.5
    assert seconds_from({ENV: "0"}) is None  # none
    for bad in ("abc", "-1", "inf", "nan", "1e999"):
        with pytest.raises(ConfigError, match=f"{ENV} must be a number of seconds"):
            seconds_from({ENV: bad})
    assert not math.isnan(SECONDS)


def test_a_bad_deadline_is_refused_before_any_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Said as the setting's mistake, not as a server that cannot be reached."""
    monkeypatch.setenv(ENV, "soon")
    with pytest.raises(ConfigError, match=ENV):
        open_store("postgresql://u@127.0.0.1:1/db")


def test_without_a_deadline_statements_are_not_watched(tmp_path: Path) -> None:
    with named_store(tmp_path, "0") as named:
        store = named.store
        with store._pool.connection() as db:
            assert isinstance(db, PostgresConnection)
            assert db.deadline is None
            assert db.execute("SELECT 1").fetchone() == (1,)


def test_a_connection_cut_as_its_answer_came_is_not_handed_out_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher may look after the answer came and before the thread that waited for it
    says so (it waits for the GIL behind the process's busy threads): the statement has its
    rows, and its socket is shut down all the same. Given back to the pool, the connection
    failed the next request, as a statement "not answered within" the deadline."""
    with named_store(tmp_path, "1") as named:
        store = named.store
        execute = psycopg.Connection.execute

        def answered_then_held(self: psycopg.Connection[Any], *args: Any, **kwargs: Any) -> Any:
            cursor = execute(self, *args, **kwargs)
            time.sleep(2.5)  # answered; the thread that waited is not back yet
            return cursor

        with store._pool.connection() as db:  # opened before: its opening runs a statement
            db.execute("SELECT 1").fetchone()
        with monkeypatch.context() as patched:
            patched.setattr(psycopg.Connection, "execute", answered_then_held)
            with store._pool.connection() as db:
                assert db.execute("SELECT 1").fetchone() == (1,)  # its rows came
        with store._pool.connection() as db:
            assert db.execute("SELECT 2").fetchone() == (2,)


def test_a_connection_whose_rollback_was_cut_is_not_handed_out_again(tmp_path: Path) -> None:
    """An error of the caller's own (not the store's) rolls the transaction back; a server that
    stopped answering then has the ROLLBACK cut, which psycopg only logs. The connection went
    back to the pool broken and failed the next request."""
    stopped: list[int] = []

    def stop_its_server_and_fail(db: Connection) -> None:
        stop_its_backend(db, stopped)
        raise LookupError("the caller's own error")

    with named_store(tmp_path, "1") as named:
        store = named.store
        try:
            with pytest.raises(LookupError), store._pool.connection() as db, db.transaction():
                stop_its_server_and_fail(db)
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
        with store._pool.connection() as db:
            assert db.execute("SELECT 2").fetchone() == (2,)


def test_a_cut_leaves_alone_a_socket_that_took_the_connections_number() -> None:
    """libpq closes a connection's socket when the server drops it (before it forgets the
    number), and the next socket or file opened anywhere in the process takes the lowest free
    number: a cut that read the number just then shut that one down, another request's."""
    ours, ours_peer = socket.socketpair()
    number = ours.fileno()
    deadline = Deadline(lambda: number, 3600)
    other, peer = socket.socketpair()
    try:
        deadline.start()
        ours.close()  # the server dropped the connection: libpq closed its socket...
        os.dup2(other.fileno(), number)  # ... and an unrelated socket took its number
        deadline.cut_if_due(time.monotonic() + 7200)  # the watcher looks
        deadline.done()
        other.sendall(b"x")
        assert peer.recv(1) == b"x"  # still open
    finally:
        os.close(number)
        for each in (ours_peer, other, peer):
            each.close()


def test_a_driver_error_in_a_transactions_body_is_a_store_error(tmp_path: Path) -> None:
    """A value psycopg cannot load raises as its row is fetched, in the transaction's body
    rather than in `execute`: said as a `StoreError`, as before the deadline, not as psycopg's."""
    with named_store(tmp_path, "30") as named, named.store._pool.connection() as db:
        with pytest.raises(StoreError, match="PostgreSQL"), db.snapshot():
            db.execute("SELECT 'infinity'::timestamp").fetchone()
        assert db.execute("SELECT 1").fetchone() == (1,)  # rolled back, usable


def advisory_locks(url: str, name: str) -> int:
    with psycopg.connect(url, autocommit=True) as admin:
        (count,) = admin.execute(
            "SELECT count(*) FROM pg_locks JOIN pg_stat_activity USING (pid) "
            "WHERE application_name = %s AND locktype = 'advisory'",
            (name,),
        ).fetchone() or (0,)
    return int(count)


def test_a_cut_statement_stops_on_a_server_that_is_slow_not_stopped(tmp_path: Path) -> None:
    """The server ran a cut statement to its end, holding its transaction's locks: the
    workspace's next writer waited for it, and was cut in turn."""
    with named_store(tmp_path, "1") as named:
        store = named.store
        with (
            pytest.raises(StoreError, match=r"within 1 s"),
            store._pool.connection() as db,
            db.transaction(lock=named.workspace),
        ):
            db.execute("SELECT pg_sleep(600)")  # run to its end, it would outlast the wait
        given_up = time.monotonic() + 60  # the server stops it within 1 s, if not loaded
        while advisory_locks(named.url, named.name) and time.monotonic() < given_up:
            time.sleep(0.1)
        with (
            store._pool.connection() as db,
            db.transaction(lock=named.workspace),
        ):  # the next writer
            assert db.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a system without fork")
def test_a_forked_process_has_its_statements_cut_too(tmp_path: Path) -> None:
    """A process forked after its parent's watcher started (multiprocessing's default start
    on Linux before Python 3.14, a forking server) got no thread of its own: its statements
    waited for good, or it hung at the first if the fork found the watcher's lock held."""
    with named_store(tmp_path, "1") as named:
        with named.store._pool.connection() as db:
            db.execute("SELECT 1").fetchone()  # the watcher thread started in this process
        read, write = os.pipe()
        with warnings.catch_warnings():  # 3.12 and later warn of a fork with threads running
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; it reports through the pipe
            said = b"?"
            try:
                child = PostgresConnection(named.url, 1.0)
                try:
                    child.execute("SELECT pg_sleep(30)")
                    said = b"waited"
                except StoreError:
                    said = b"cut"
            finally:
                os.write(write, said)
                os._exit(0)
        os.close(write)
        ready: list[int] = []
        try:
            ready, _, _ = select.select([read], [], [], 60)  # uncut, it says so after 30 s
            assert ready, "the forked process hangs"
            assert os.read(read, 16) == b"cut"
        finally:
            os.close(read)
            if not ready:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def test_opening_waits_for_another_process_s_migration_as_long_as_it_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process migrating holds the migrations' lock for minutes on a large store:
    an opening meanwhile was cut waiting for it, as if the server had not answered (and a
    migration that long would itself be cut at every opening, and never done)."""
    with store_url("postgres", tmp_path) as url:  # a new store: this opening migrates it
        monkeypatch.setenv(ENV, "1")
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(hashtext('_readmit_migrations'))")
            thread, got = in_thread(lambda: open_store(url))
            thread.join(3.0)  # three deadlines; the opening waits for the lock
            assert thread.is_alive()
            other.execute("SELECT pg_advisory_unlock(hashtext('_readmit_migrations'))")
            thread.join(60)
        assert not thread.is_alive()
        opened = got[0]
        assert isinstance(opened, SqlStore), opened
        with opened._pool.connection() as db:  # its statements have the deadline again
            assert db.deadline is not None
            assert not db.deadline.patient
            with pytest.raises(StoreError, match=r"within 1 s"):
                db.execute("SELECT pg_sleep(30)")
        opened.close()


def test_a_store_up_to_date_opens_by_reads_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a store with migrations to run waits for them: one up to date took their lock
    and waited as long as it took, so a server that stopped answering in that step held
    the opening for good (an operator's probe held the lock to stop it there)."""
    with store_url("postgres", tmp_path) as url:
        open_store(url).close()  # migrated
        monkeypatch.setenv(ENV, "1")
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(hashtext('_readmit_migrations'))")
            try:
                thread, got = in_thread(lambda: open_store(url))
                thread.join(60)
            finally:
                other.execute("SELECT pg_advisory_unlock(hashtext('_readmit_migrations'))")
        assert not thread.is_alive()
        opened = got[0]
        assert isinstance(opened, SqlStore), opened  # the lock was not needed
        opened.close()


def test_a_store_whose_server_does_not_answer_fails_to_open_before_migrating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The migrations wait as long as they take, but not the check before them."""
    monkeypatch.setenv(ENV, "1")
    with store_url("postgres", tmp_path) as url:
        name = f"readmit-deadline-{uuid.uuid4().hex}"
        calls: list[int] = []
        original = PostgresConnection.check

        def stalled_check(conn: PostgresConnection) -> None:
            calls.append(1)
            conn.execute("SELECT pg_sleep(30)")  # as a server that does not answer
            original(conn)

        monkeypatch.setattr(PostgresConnection, "check", stalled_check)
        with pytest.raises(StoreError, match=r"within 1 s"):
            open_store(f"{url}&application_name={name}")
        assert calls == [1]


def test_a_cut_commit_says_that_its_outcome_is_unknown(tmp_path: Path) -> None:
    """The COMMIT reached the server, which was stopped before it answered: once resumed
    it commits. The caller is told it cannot know, not that nothing happened (a batch sent
    again is refused by its event ids if it did commit)."""
    stopped: list[int] = []
    with named_store(tmp_path, "1") as named:
        store = named.store
        with store._pool.connection() as db:
            db.execute("CREATE TABLE probe (x INT)")

        def stop_its_server_before_commit(db: Connection) -> None:
            db.execute("INSERT INTO probe VALUES (1)")
            stop_its_backend(db, stopped)

        try:
            before = store.generation
            lock = f"probe-{uuid.uuid4().hex}"  # advisory locks are the database's: not "w"
            with pytest.raises(StoreError) as cut, store._transaction(lock) as db:
                stop_its_server_before_commit(db)
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
        assert "did not answer a statement within 1 s" in str(cut.value)
        assert "whether the transaction committed is unknown" in str(cut.value)
        assert message_of(cut.value) == f"{UNAVAILABLE}; {UNSURE}"  # no database words
        assert store.generation > before  # what follows the log through it looks again
        with psycopg.connect(named.url, autocommit=True) as admin:  # it did, once resumed
            for _ in range(600):
                if admin.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (stopped[0],)
                ).fetchone() == (0,):
                    break
                time.sleep(0.05)
        with store._pool.connection() as db:
            assert db.execute("SELECT x FROM probe").fetchall() == [(1,)]


def test_writers_queued_behind_a_stalled_one_give_up_after_one_deadline(tmp_path: Path) -> None:
    """Writers of one workspace take turns in the process before the database: behind one
    whose statement stalled, each waited its turn and then a deadline of its own, the k-th
    answered after k deadlines, holding a server thread all along (an operator's probe: 44
    queued writers stalled every route that needed a thread for 42 s)."""
    with named_store(tmp_path, "1") as named:
        store = named.store
        store.create_workspace(named.workspace, AGENTS)
        with psycopg.connect(named.url, autocommit=True) as other:  # the workspace's writers
            other.execute("SELECT pg_advisory_lock(hashtext(%s))", (named.workspace,))
            writers = [
                in_thread(lambda: store.create_workspace(named.workspace, AGENTS)) for _ in range(5)
            ]
            for thread, _ in writers:
                thread.join(120)
            other.execute("SELECT pg_advisory_unlock(hashtext(%s))", (named.workspace,))
        said = [str(got[0]) for _, got in writers]
        assert all(not thread.is_alive() for thread, _ in writers)
        assert all(isinstance(got[0], StoreError) for _, got in writers), said
        cut = [s for s in said if "did not answer a statement within 1 s" in s]
        queued = [s for s in said if "has not finished in 1 s" in s]
        assert len(cut) + len(queued) == 5, said
        assert queued, said  # the old way: every writer waited for the database in turn


def test_a_role_that_may_only_use_rows_opens_a_store_up_to_date(tmp_path: Path) -> None:
    """Opening took the migrations' lock and ran CREATE TABLE IF NOT EXISTS each time: a
    role without CREATE on the schema could not open even a store up to date (a review)."""
    role = f"readmit_rows_{uuid.uuid4().hex[:12]}"
    with store_url("postgres", tmp_path) as url:
        open_store(url).close()  # migrated by its owner
        with psycopg.connect(url, autocommit=True) as owner:
            schema = owner.execute("SELECT current_schema()").fetchone()
            assert schema is not None
            owner.execute(f"CREATE ROLE {role} LOGIN")
            try:
                owner.execute(f'GRANT USAGE ON SCHEMA "{schema[0]}" TO {role}')
                owner.execute(
                    f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "{schema[0]}" '
                    f"TO {role}"
                )
                owner.execute(f'GRANT USAGE ON ALL SEQUENCES IN SCHEMA "{schema[0]}" TO {role}')
                as_role = url.replace("postgres@", f"{role}@", 1)
                assert as_role != url
                opened = open_store(as_role)
                opened.close()
            finally:
                owner.execute(f'REVOKE ALL ON ALL TABLES IN SCHEMA "{schema[0]}" FROM {role}')
                owner.execute(f'REVOKE ALL ON ALL SEQUENCES IN SCHEMA "{schema[0]}" FROM {role}')
                owner.execute(f'REVOKE ALL ON SCHEMA "{schema[0]}" FROM {role}')
                owner.execute(f"DROP ROLE {role}")
