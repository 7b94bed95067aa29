"""``readmit serve --workers N``: returns decided in worker processes answer, log and refuse
exactly as the server's own would, and a cancelled one records nothing."""

import asyncio
import gc
import json
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from datetime import timedelta
from pathlib import Path

import pytest

from builders import KEY, spent
from readmit.clock import now
from readmit.collector import YOUNG
from readmit.errors import Abandoned, ClockSkew, ReadmitError
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.service.answers import UNAVAILABLE, message_of
from readmit.service.copies import decision_json
from readmit.service.keys import key_hash, new_key
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.service.turns import Turns
from readmit.service.workers import ReturnPool, ServerConfig
from readmit.signing import HmacSha256Signer
from readmit.store import open_store
from servicekit import team_away_while_changed

pytestmark = pytest.mark.slow  # starts two worker processes


def note(n: int) -> dict[str, object]:
    return {
        "op": "assert",
        "author": "A1",
        "item": {"id": f"n{n}", "text": f"Note {n}.", "key": "k"},
    }


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Service, ReturnPool, Caller]]:
    """The server's own service, a pool of two workers over the same store, and an agent."""
    url = f"sqlite:///{Path(tmp_path_factory.mktemp('pool')) / 'readmit.db'}"
    front, pool, caller = away_with_workers(url)
    front.record(caller, [note(1)])
    yield front, pool, caller
    pool.close()
    front.close()


def away_with_workers(url: str) -> tuple[Service, ReturnPool, Caller]:
    """A store at ``url`` whose agent A1 of trip noted one thing and departed, the server's
    own service over it, a pool of two workers over the same store, and the agent."""
    store = open_store(url)
    store.create_workspace("trip", [Agent(id="A1", principal="org", role="planner")])
    key = new_key()
    store.add_agent_key("trip", "A1", key_hash(key), now())
    front = Service(store, signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"))
    caller = front.authenticate(key)
    front.record(caller, [note(0)])
    front.depart(caller)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("READMIT_SIGNING_KEY", KEY.decode())
        pool = ReturnPool(ServerConfig(url, "builtin", None, None, {}), 2)
        pool.wait_ready()
    return front, pool, caller


def in_pool(pool: ReturnPool, caller: Caller, cancel: threading.Event, **kw: object) -> bytes:
    return asyncio.run(pool.return_(caller, "t", "p", kw.get("at"), cancel))  # type: ignore[arg-type]


def test_a_return_decided_in_a_worker_is_logged_and_shown_again_byte_for_byte(
    served: tuple[Service, ReturnPool, Caller],
) -> None:
    front, pool, caller = served

    answer = in_pool(pool, caller, threading.Event())

    shown = json.loads(answer)
    assert shown["outcome"] == "issued"
    assert decision_json(front.explain(caller, shown["decision"])) == answer
    assert front.verify(shown["view"])["valid"] is True


def test_a_workers_refusal_is_the_servers_own(served: tuple[Service, ReturnPool, Caller]) -> None:
    front, pool, caller = served
    ahead = now() + timedelta(hours=1)

    with pytest.raises(ClockSkew) as remote:
        in_pool(pool, caller, threading.Event(), at=ahead)
    with pytest.raises(ClockSkew) as local:
        front.return_(caller, "t", "p", ahead)

    assert remote.value.code == local.value.code == "clock_skew"
    assert str(remote.value).split(" (")[0] == str(local.value).split(" (")[0]


def test_a_cancelled_return_records_nothing(served: tuple[Service, ReturnPool, Caller]) -> None:
    front, pool, caller = served
    before = len(front.decisions(caller)[0])
    cancel = threading.Event()
    cancel.set()  # the client went away

    with pytest.raises(Abandoned):
        in_pool(pool, caller, cancel)

    assert len(front.decisions(caller)[0]) == before


def test_a_team_returning_together_through_the_workers_judges_once(
    served: tuple[Service, ReturnPool, Caller],
) -> None:
    """Returns of one workspace take turns across the workers, as in one process: the
    first judges what changed and the others read what it screened. They used to go to
    the two workers side by side, each judging the same pairs."""
    front, pool, _ = served
    callers = team_away_while_changed(front, "team", "b")

    async def together() -> list[bytes]:
        returns = (pool.return_(c, "ops", "p", None, threading.Event()) for c in callers)
        return await asyncio.gather(*returns)

    answers = asyncio.run(together())
    calls = sorted(spent(front.store, "team", c.agent.id)["calls"] for c in callers)

    assert all(json.loads(answer)["judgment"] is not None for answer in answers)
    assert calls[:-1] == [0] * (len(callers) - 1)
    assert calls[-1] > 0


def test_each_worker_tunes_its_collector_as_the_server_does(
    served: tuple[Service, ReturnPool, Caller],
) -> None:
    _, pool, _ = served

    thresholds = [pool._executor.submit(gc.get_threshold).result() for _ in range(4)]

    assert all(t[0] == YOUNG for t in thresholds)


class _Held:
    """An executor whose returns run until the test ends them (the pool's stand-in)."""

    def __init__(self) -> None:
        self.running: list[Future[tuple[bytes, None]]] = []

    def submit(self, fn: object, *args: object) -> "Future[tuple[bytes, None]]":
        future: Future[tuple[bytes, None]] = Future()
        future.set_running_or_notify_cancel()
        self.running.append(future)
        return future


def test_a_return_cancelled_while_a_worker_decides_it_holds_the_turn_until_it_stops() -> None:
    """Cancelled (its server shutting down, its request's task group cancelled), a
    return's worker is told to stop, and the workspace's next return waits for it: two
    returns of one workspace are never decided side by side."""
    pool = ReturnPool.__new__(ReturnPool)  # no processes: a stand-in executor
    pool._turns, pool._flags, pool._free = Turns(), bytearray(8), list(range(8))
    pool._lock, held = threading.Lock(), _Held()
    pool._executor = held  # type: ignore[assignment]
    caller = Caller("w", Agent(id="a0", principal="org", role="r"))

    async def scenario() -> tuple[int, int]:
        first = asyncio.create_task(pool.return_(caller, "t", "p", None, threading.Event()))
        while not held.running:
            await asyncio.sleep(0.001)
        first.cancel()
        second = asyncio.create_task(pool.return_(caller, "t", "p", None, threading.Event()))
        await asyncio.sleep(0.2)
        submitted, flag = len(held.running), pool._flags[7]
        held.running[0].set_result((b"{}", None))
        while len(held.running) < 2:
            await asyncio.sleep(0.001)
        held.running[1].set_result((b"{}", None))
        await asyncio.gather(first, second, return_exceptions=True)
        return submitted, flag

    submitted, flag = asyncio.run(scenario())

    assert submitted == 1  # the second waited for the first's worker to stop
    assert flag == 1  # and the first's worker was told to stop


def test_a_database_failure_in_a_worker_is_answered_in_the_servers_words(tmp_path: Path) -> None:
    """A worker sent back the error's own text: the database's words (its host and port, the
    statement) reached the agent, and nothing was logged, where the server's own threads
    answer "the store's database failed" and log why (a probe with --workers 2)."""
    front, pool, caller = away_with_workers(f"sqlite:///{tmp_path / 'readmit.db'}")
    try:
        with sqlite3.connect(tmp_path / "readmit.db") as db:  # what the return records into
            db.execute("DROP TABLE decisions")
        with pytest.raises(ReadmitError) as remote:
            in_pool(pool, caller, threading.Event())
        with pytest.raises(ReadmitError) as local:
            front.return_(caller, "t", "p", None)
    finally:
        pool.close()
        front.close()

    assert message_of(local.value) == UNAVAILABLE  # the server's own threads, as before
    assert message_of(remote.value) == UNAVAILABLE  # as its HTTP answer will say it
    assert "decisions" not in str(remote.value)
    assert remote.value.code == local.value.code == "store_error"
