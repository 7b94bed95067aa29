"""``readmit serve --judge-ahead SECONDS``: judge what away agents' returns will need.

Once events recorded in a workspace have been followed by `QUIET_S` of quiet, a thread
of the server process judges ahead (`readmit.ahead`) for each agent of the workspace
that departed and has not returned: the return it would make now, to the task and
purpose it returns to (below). Each pass runs under the server's policy with ``SECONDS``
as its time budget; a pass whose budget ran out after it kept something (items left
unscreened) is followed by another once the other workspaces due have had theirs, and
one that kept nothing waits for new events. A return then
finds its items screened and its stale ones found, and waits only on what came after.

A pass takes the workspace's turn as a return does (`readmit.service.turns`), and gives
it back as soon as a return asks for it: after each verifier call it stops if one
waits (the verdicts of the calls it made stay in the verifier's cache), and it comes
back once the workspace is quiet again. A return's wait is at most one verifier call.

An agent is judged ahead only once its task is known: from its latest departure, if
that said (``task`` and ``purpose`` on ``POST /v1/depart``), else from a return this
process served, or from the latest of its last four decisions in the audit log that
issued a view (read again once the agent has a decision since, in any process). With
several server processes over one database, each judges ahead after the
events it recorded, one at a time for a workspace: a pass holds the workspace's lease
(`readmit.store.leases`), and a process that finds another holding it tries again once it
is quiet, when what the other judged is in the store (verdicts, watermarks, the
verifier's cache) and only what came after is judged. A pass gives way to a return of
its own process, which asks for the workspace's turn, and to one of another process, which
holds a lease of its own in the store while it is decided (`asking`).
"""

import logging
import math
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime

from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verifier
from readmit.admission.invalidation.judgment import Judgment
from readmit.ahead import LEASE, LEASE_MARGIN_S, WANTED, judge_ahead, returned_to
from readmit.clock import elapsed
from readmit.errors import StoreError, VerifierUnavailable
from readmit.policy import Policy
from readmit.service.turns import Turns
from readmit.signing import Signer
from readmit.store import SqlStore

QUIET_S = 1.0
"""Seconds without a new event in a workspace before it is judged ahead: a team recording
a burst of events is judged once, after the burst."""

log = logging.getLogger("readmit.service.ahead")


ASK_S = 120.0
"""Seconds a return's ask stands unless renewed (it is, at the return's stages and calls,
once half is gone): a process that dies asking holds no judge off longer."""
RECHECK_S = 0.5
"""Seconds between a return's looks at whether another process has started judging its
workspace: a judge that starts during a return is asked within about this (and a stage)."""


@contextmanager
def asking(
    store: SqlStore, workspace: str, judge: "AheadJudge | None"
) -> Iterator[Callable[[], None]]:
    """Ask the judge of another process, while one judges ``workspace`` ahead, to give way.

    For the block (a return's decision) a lease of its own stands in the store, named
    `WANTED` and an id, once another process holds the workspace's judge-ahead lease; the
    judge of this process (``judge``) is asked by the turns instead. The block calls what
    it is given at its stages and calls: it looks again at most every `RECHECK_S`, for a
    judge that started after it, and renews its ask. The ask is withdrawn after, or runs
    out if this process dies first.
    """
    ask = _Ask(store, workspace, None if judge is None else judge.holder)
    ask()
    try:
        yield ask
    finally:
        ask.withdraw()


class _Ask:
    """A return's ask (`asking`): made once another process judges, renewed while needed."""

    def __init__(self, store: SqlStore, workspace: str, own: str | None) -> None:
        self.store, self.workspace, self.own = store, workspace, own
        self.name = WANTED + uuid.uuid4().hex
        self.made: float | None = None
        self.looked = -math.inf

    def __call__(self) -> None:
        at = elapsed()
        if self.made is not None:
            if at - self.made >= ASK_S / 2:  # renewed well before it runs out
                self.store.lease(self.workspace, self.name, self.name, ASK_S)
                self.made = at
            return
        if at - self.looked < RECHECK_S:
            return
        self.looked = at
        judging = self.store.lease_holder(self.workspace, LEASE)
        if judging is not None and judging != self.own:
            self.store.lease(self.workspace, self.name, self.name, ASK_S)
            self.made = at

    def withdraw(self) -> None:
        if self.made is not None:
            self.store.lease(self.workspace, self.name, self.name, 0)


class _Yielded(Exception):
    """A return asked for the workspace's turn."""


class AheadJudge:
    """The background judge of one server process (see the module docstring)."""

    def __init__(
        self,
        store: SqlStore,
        turns: Turns,
        *,
        policy: Policy,
        verifier: Verifier,
        signer: Signer,
        seconds: float,
        embedder: Embedder | None = None,
        quiet: float = QUIET_S,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store, self.turns, self.verifier, self.signer = store, turns, verifier, signer
        self.clock = clock or store.now
        """The server's clock (by default the store's): a pass is dated as the server dates
        returns (its screenings bind only returns dated at or after them, `verdicts`)."""
        self.policy = replace(policy, max_judgment_seconds=seconds)
        self.embedder, self.quiet = embedder, quiet
        self.passes = 0
        """Passes completed (each one `judge_ahead`), for tests and logs."""
        self.holder = uuid.uuid4().hex
        """Who this judge is, in the store's leases."""
        self.deferred = 0
        """Times it found another process judging a workspace ahead, and left it to it."""
        self._lease_s = seconds + LEASE_MARGIN_S
        self._seconds = seconds
        self._resume: dict[str, str] = {}
        """The agent each workspace's next round starts with (the first one left)."""
        self._cycle: dict[str, set[str]] = {}
        """The away agents of each workspace that have had a pass since every one last had."""
        self._tasks: dict[tuple[str, str], tuple[str, str]] = {}
        self._noted: dict[tuple[str, str], int] = {}
        """The agent's decisions counted (`SqlStore.decision_count`) up to which its entry
        of ``_tasks`` stands: a later decision, maybe another process's, says anew."""
        self._unknown: dict[tuple[str, str], int] = {}
        self._kept: dict[tuple[str, str], tuple[dict[str, int], tuple[str, ...]]] = {}
        self._pending: dict[str, float] = {}
        self._busy = False
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="readmit-ahead", daemon=True)
        self._thread.start()

    def returning(self, workspace: str, agent: str, task: str, purpose: str) -> None:
        """Note what ``agent`` returns to: the task and purpose it is judged ahead for.

        It stands until a decision after the one this return makes is recorded.
        """
        self._tasks[(workspace, agent)] = (task, purpose)
        self._noted[(workspace, agent)] = self.store.decision_count(workspace, agent) + 1

    def stopped(self, workspace: str, agent: str) -> None:
        """The return `returning` noted raised, maybe before making its decision.

        What it noted then stands only until the agent's next decision, in any process.
        """
        if (workspace, agent) in self._noted:
            self._noted[(workspace, agent)] = self.store.decision_count(workspace, agent)

    def changed(self, workspace: str) -> None:
        """Events were recorded in ``workspace``: judge it ahead once it has been quiet."""
        with self._cond:
            self._pending[workspace] = elapsed()
            self._cond.notify_all()

    def settle(self, timeout: float) -> bool:
        """Wait until nothing is pending nor being judged; ``False`` after ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: not (self._pending or self._busy), timeout)

    def close(self) -> None:
        """Stop the thread (after the pass it is in, which stops at its next verifier call)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while (workspace := self._next()) is not None:
            try:
                self._judge(workspace)
            except Exception as exc:  # a store or verifier failure must not end the thread
                _failed(exc, "judging ahead in workspace %r failed", workspace)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _next(self) -> str | None:
        """The next workspace quiet for `quiet` seconds (``None`` once closed)."""
        with self._cond:
            while not self._closed:
                now = elapsed()
                due = min(self._pending.items(), key=lambda p: p[1], default=None)
                if due is not None and now - due[1] >= self.quiet:
                    del self._pending[due[0]]
                    self._busy = True
                    return due[0]
                self._cond.wait(None if due is None else self.quiet - (now - due[1]))
            return None

    def _judge(self, workspace: str) -> None:
        """Judge ``workspace`` ahead while it holds its lease; later if another process does."""
        if not self.store.lease(workspace, LEASE, self.holder, self._lease_s):
            self.deferred += 1
            self.changed(workspace)  # again once quiet: by then the other may be done
            return
        try:
            self._passes(workspace)
        finally:
            self.store.lease(workspace, LEASE, self.holder, 0)

    def _passes(self, workspace: str) -> None:
        """One pass for each away agent whose task is known; again later if one was cut short.

        The budget bounds the calls of each agent's pass; the agents after the budget's
        time has passed, whatever it went on, wait for the next round (after the other
        workspaces due), so a workspace of many away agents cannot keep the judge, nor
        its returns' turn, for a pass per agent in a row. The next round starts with the
        first agent this one left, so none is left behind round after round; once every
        away agent has had its pass, a round cut short waits for new events like one that
        ran to its end (a pass slower than the budget is not paid for again and again).
        """
        again = False
        started = elapsed()
        away = self.store.away(workspace)
        resume = self._resume.pop(workspace, None)
        if resume in away:
            at = away.index(resume)
            away = away[at:] + away[:at]
        had = self._cycle.setdefault(workspace, set())
        for agent in away:
            if elapsed() - started > self._seconds:
                if agent not in had:  # its pass is still to come in this cycle
                    self._resume[workspace] = agent
                    again = True
                else:
                    had.clear()
                break
            had.add(agent)
            if not self.store.lease(workspace, LEASE, self.holder, self._lease_s):
                self.changed(workspace)  # it ran out and another process took it over
                return
            try:
                judgment = self._pass(workspace, agent)
            except _Yielded:
                had.discard(agent)
                self._resume[workspace] = agent
                self.changed(workspace)  # again once the returns are done
                return
            except Exception as exc:  # one agent's failure must not keep the others unjudged
                _failed(exc, "judging ahead for %r in workspace %r failed", agent, workspace)
                continue
            if judgment is None:
                continue
            self.passes += 1
            log.info(
                "judged ahead for %r in %r: %d calls, %d screened, %d invalidated, %d left",
                agent,
                workspace,
                judgment.calls,
                len(judgment.screened),
                len(judgment.confirmed),
                judgment.unscreened,
            )
            # Its budget ran out after it kept something new: go on after the other
            # workspaces due. A pass that kept what the last one did (a verifier down or
            # slower than the budget, a budget too small for one item) would keep it
            # again: wait for new events.
            kept = (dict(judgment.screened), tuple(e.item for e in judgment.confirmed))
            new = kept != self._kept.get((workspace, agent))
            self._kept[(workspace, agent)] = kept
            again |= bool(judgment.unscreened and new)
        else:  # every agent of this round had its pass
            had.clear()
        if again:
            with self._cond:
                self._pending.setdefault(workspace, elapsed() - self.quiet)

    def _pass(self, workspace: str, agent: str) -> Judgment | None:
        """Judge ``agent``'s return ahead once (``None`` if its task is unknown)."""
        known = self._task(workspace, agent)
        if known is None:
            return None
        self._give_way(workspace)
        with self.turns.take(workspace, background=True):
            if agent not in self.store.away(workspace):  # it returned while the pass waited
                return None
            return judge_ahead(
                self.store,
                workspace,
                agent,
                task=known[0],
                purpose=known[1],
                policy=self.policy,
                verifier=self.verifier,
                signer=self.signer,
                embedder=self.embedder,
                at=self.clock(),
                on_progress=lambda _, __: self._give_way(workspace),
                between=lambda: self._give_way(workspace),
            )

    def _give_way(self, workspace: str) -> None:
        """Stop the pass if a return asks for ``workspace``, here or in another process."""
        if self.turns.contended(workspace) or self._closed:
            raise _Yielded
        if self.store.leased(workspace, WANTED):
            raise _Yielded

    def _task(self, workspace: str, agent: str) -> tuple[str, str] | None:
        """What ``agent`` returns to, if known (see the module docstring)."""
        said = self.store.departed_for(workspace, agent, self.clock())  # as a return now would
        if said is not None:
            return said
        key = (workspace, agent)
        decided = self.store.decision_count(workspace, agent)
        if key in self._tasks and decided <= self._noted.get(key, -1):
            return self._tasks[key]  # no decision since, in any process
        if self._unknown.get(key) == decided:
            return None  # nothing new in the audit log since it was read
        known = returned_to(self.store, workspace, agent)
        if known is None:
            self._unknown[key] = decided
        else:
            self._tasks[key], self._noted[key] = known, decided
        return known


def _failed(error: Exception, message: str, *args: object) -> None:
    """Log a failure of judging ahead, with its traceback unless the store or verifier is down.

    An outage logged a traceback at every pass (a review); one line says it.
    """
    if isinstance(error, StoreError | VerifierUnavailable):
        log.warning(f"{message}: %s", *args, error)
    else:
        log.error(message, *args, exc_info=error)
