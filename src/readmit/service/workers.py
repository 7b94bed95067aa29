"""``readmit serve --workers N``: returns decided in N processes, everything else in one.

A return is CPU work in Python, and one process runs Python on one core at a time:
with more agents returning at once than one process can serve, every return waits
for all the others. With ``--workers N`` the server process still answers every
request (authentication, the per-agent limits, events, reads), but hands each return
to a pool of N processes, each with its own `Service` over the same store, and awaits
the answer. The pool takes returns first come, first served, so a return waits only
for those ahead of it, on whichever process is free first; the limits stay in the one
server process and mean what they mean without workers. The store already serialises
writers across processes (SQLite's file lock, PostgreSQL's advisory locks).

Returns of one workspace take turns across the workers as they do in one process: the
server process waits for the workspace's turn (`readmit.service.turns`) before it hands
a return to the pool, so the next return reads what the last one screened and judged.

A return whose client goes away is stopped as without workers: the server sets the
return's flag in memory the pool shares, which the return checks before each verifier
call and before recording.
"""

import asyncio
import json
import multiprocessing
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from readmit.clock import elapsed
from readmit.collector import tune_for_server
from readmit.errors import ConfigError, RateLimited, ReadmitError, WorkerLost
from readmit.model import Agent
from readmit.service.answers import message_of
from readmit.service.copies import decision_json
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.service.settings import limits_from_flags, load_policy
from readmit.service.turns import Turns

SLOTS = 4096
"""Returns the pool can hold at once, running or queued (each has a cancel flag)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """What ``readmit serve`` was started with, as every worker needs it."""

    db: str
    verifier: str
    embeddings: str | None
    policy_file: str | None
    limits: Mapping[str, Any]
    """``readmit serve``'s limit flags (`readmit.service.settings.limits_from_flags`)."""

    def service(self, env: Mapping[str, str] = os.environ) -> Service:
        """A `Service` built from these flags and ``READMIT_*`` settings."""
        return Service.from_env(
            self.db,
            self.verifier,
            env,
            embeddings=self.embeddings,
            policy=load_policy(self.policy_file),
            limits=limits_from_flags(**self.limits),
        )


class ReturnPool:
    """N processes deciding returns for the server process, first come, first served."""

    def __init__(self, config: ServerConfig, workers: int, turns: Turns | None = None) -> None:
        """Start ``workers`` processes (they build their services as they start).

        ``turns``: the server process's workspace turns (its `Service.turns`), which its
        returns take before they go to a worker.

        Raises:
            ConfigError: for fewer than two workers (one is the server's own threads).
        """
        if workers < 2:
            raise ConfigError("a return pool needs 2 or more workers")
        self._workers = workers
        self._turns = turns or Turns()
        self._config = json.dumps(asdict(config))
        self._context = multiprocessing.get_context("spawn")
        self._flags = self._context.RawArray("b", SLOTS)
        self._free = list(range(SLOTS))
        self._lock = threading.Lock()
        self._executor = self._started()

    def _started(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self._workers,
            mp_context=self._context,
            initializer=_start,
            initargs=(self._config, self._flags),
        )

    async def return_(
        self,
        caller: Caller,
        task: str | None,
        purpose: str | None,
        at: datetime | None,
        cancel: threading.Event,
    ) -> bytes:
        """`Service.return_` in a worker, as JSON (`decision_json`); ``cancel`` stops it.

        Raises:
            ReadmitError: what the return raised in the worker (`Abandoned` once cancelled).
            WorkerLost: if a worker died before answering (the pool is then started again).
        """
        asked = elapsed()  # time queued for its turn and a worker counts against the budget
        async with self._turns.awaited(caller.workspace, cancel) as turn:
            # Its wait on the background judge (`readmit.service.ahead`) is not counted.
            return await self._decided(caller, task, purpose, at, cancel, asked + turn.excused)

    async def _decided(
        self,
        caller: Caller,
        task: str | None,
        purpose: str | None,
        at: datetime | None,
        cancel: threading.Event,
        asked: float,
    ) -> bytes:
        slot = self._take()
        self._flags[slot] = int(cancel.is_set())
        agent = (caller.agent.id, caller.agent.principal, caller.agent.role)
        executor = self._executor
        try:
            future: Future[tuple[bytes, _Error | None]] = executor.submit(
                _return, caller.workspace, agent, task, purpose, at, slot, asked
            )
        except BrokenProcessPool:
            self._give(slot)
            raise self._lost(executor) from None
        future.add_done_callback(lambda _: self._give(slot))  # never reused while it runs
        waiter = asyncio.wrap_future(future)
        try:
            while True:
                if cancel.is_set():
                    self._flags[slot] = 1
                if (await asyncio.wait({waiter}, timeout=0.05))[0]:
                    break
        except asyncio.CancelledError:
            # The worker decides on until it sees its flag: the turn is held until it stops,
            # or the next return of the workspace would be decided beside it.
            self._flags[slot] = 1
            await asyncio.wait({waiter})
            raise
        try:
            answer, error = waiter.result()
        except BrokenProcessPool:
            raise self._lost(executor) from None
        if error is not None:
            raise _rebuilt(*error)
        return answer

    def _lost(self, broken: ProcessPoolExecutor) -> WorkerLost:
        """Start a new pool in place of ``broken`` (once, however many returns saw it break)."""
        with self._lock:
            if self._executor is broken:
                self._executor = self._started()
        broken.shutdown(wait=False, cancel_futures=True)
        return WorkerLost("a return worker stopped before it answered; nothing was recorded")

    def wait_ready(self) -> None:
        """Wait until the workers have built their services.

        Raises:
            ConfigError: if a worker cannot build its service (the pool is then closed).
        """
        probes = [self._executor.submit(_ready) for _ in range(self._workers)]
        try:
            for probe in probes:
                probe.result()
        except Exception as exc:
            self.close()
            raise ConfigError(f"a return worker could not start: {exc}") from exc

    def _take(self) -> int:
        with self._lock:
            if not self._free:
                raise RateLimited("too many returns are waiting for the return workers", 1)
            return self._free.pop()

    def _give(self, slot: int) -> None:
        with self._lock:
            self._free.append(slot)

    def close(self) -> None:
        """Stop the workers (after the returns they are deciding)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


_SERVICE: list[Service] = []
_FLAGS: list[Any] = []


def _start(config: str, flags: Any) -> None:
    """Build this worker's service (runs once in each worker process)."""
    _SERVICE.append(ServerConfig(**json.loads(config)).service())
    _FLAGS.append(flags)
    tune_for_server()  # each worker decides returns, as the server process does without them
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()


def _exit_with(parent: int) -> None:
    """End this worker when the server process is gone (killed before it could close the pool)."""
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


@dataclass(frozen=True, slots=True)
class _Flag:
    """A return's cancel flag in the memory the pool shares (``is_set`` as `threading.Event`)."""

    slot: int

    def is_set(self) -> bool:
        return bool(_FLAGS[0][self.slot])


_Error = tuple[type[ReadmitError], str, dict[str, Any]]


def _return(
    workspace: str,
    agent: tuple[str, str, str],
    task: str | None,
    purpose: str | None,
    at: datetime | None,
    slot: int,
    asked: float,
) -> tuple[bytes, _Error | None]:
    """Decide one return in this worker: its JSON, or the `ReadmitError` it raised."""
    caller = Caller(workspace, Agent(id=agent[0], principal=agent[1], role=agent[2]))
    try:
        # The monotonic clock is the machine's: the server's reading holds in a worker.
        decided = _SERVICE[0].return_(caller, task, purpose, at, _Flag(slot), asked)
    except ReadmitError as exc:  # its class, message and attributes: some take more arguments
        # As the server would answer it: a database's own words are logged here, not sent
        # (they reached the agent, host, port and statement, with nothing logged).
        return b"", (type(exc), message_of(exc), dict(vars(exc)))
    return decision_json(decided), None


def _rebuilt(kind: type[ReadmitError], message: str, attributes: dict[str, Any]) -> ReadmitError:
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    vars(error).update(attributes)
    return error


def _ready() -> None:
    """Nothing: a worker runs it once its service is built."""
