"""The operations agents call over HTTP and MCP, each acting as one authenticated agent.

An agent acts only as itself: every event it records names it as author, it
departs and returns only itself, and it sees only its own decisions and its
own private bank, with exclusions of items it may not read removed entirely.
"""

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from readmit.admission.decision import Issued
from readmit.admission.invalidation.cache import with_cache
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verifier
from readmit.admission.view import verify_view
from readmit.clock import elapsed, format_time, now
from readmit.config import signer_from_env
from readmit.decide import decide
from readmit.errors import (
    Abandoned,
    ConfigError,
    InvalidEvent,
    InvalidInput,
    Unauthenticated,
    ViewRejected,
)
from readmit.events import RecordExperience, ReturnRequest
from readmit.plugins import make_embedder, make_verifier
from readmit.policy import Policy
from readmit.service.ahead import QUIET_S, AheadJudge, asking
from readmit.service.batch import check_sizes, own_batch, own_hint
from readmit.service.copies import answer
from readmit.service.ids import own, ref
from readmit.service.keys import PREFIX, key_hash
from readmit.service.limits import CHECKPOINT_ROW_BYTES, Limits, Throttle, check_strings
from readmit.service.readers_check import left_out
from readmit.service.reading import Caller, Reading
from readmit.service.schemas import (
    DepartureOut,
    RecordedOut,
    VerifyOut,
    departure_out,
)
from readmit.service.shared_limits import SharedThrottle
from readmit.service.times import not_ahead, return_time
from readmit.service.turns import Cancel, Turns
from readmit.signing import Signer
from readmit.store import SqlStore, open_store
from readmit.store.base import Returning
from readmit.wire.outbound import (
    AgentDecisionOut,
    MemoryOut,
    memory_out,
)

Clock = Callable[[], datetime]


class Service(Reading):
    """readmit's operations over one store, for authenticated agents."""

    def __init__(
        self,
        store: SqlStore,
        *,
        signer: Signer,
        verifier: Verifier | None,
        policy: Policy | None = None,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.signer = signer
        self.verifier = verifier
        self.embedder = embedder
        self.policy = policy or Policy()
        self.clock = clock or store.now
        """What the server dates by: by default the store's clock (`readmit.store.clock`)."""
        self._verifying = clock or now
        """What a view's expiry is checked by: verifying needs no store, so not the store's
        clock (a database that hung held `/v1/verify` for its timeout, a review)."""
        self.limits = limits or Limits()
        self.throttle = (
            SharedThrottle(self.limits, store) if self.limits.shared else Throttle(self.limits)
        )
        self.turns = Turns()
        self.ahead: AheadJudge | None = None
        """Judges away agents' returns in the background (`judge_ahead`), if started."""
        if self.policy.view_ttl > self.limits.max_view_ttl:
            ttl, cap = self.policy.view_ttl, self.limits.max_view_ttl
            raise ConfigError(
                f"the policy's view_ttl_seconds ({ttl.total_seconds():g}) is over the server's "
                f"cap of {cap.total_seconds():g} s: lower it, or raise the cap (--max-view-ttl)"
            )

    @classmethod
    def from_env(
        cls,
        db: str,
        verifier: str,
        env: Mapping[str, str] = os.environ,
        embeddings: str | None = None,
        policy: Policy | None = None,
        limits: Limits | None = None,
        opener: Callable[[str], SqlStore] = open_store,
    ) -> "Service":
        """Build the service from flags and ``READMIT_*`` settings; ``opener`` opens ``db``.

        Raises:
            ConfigError: if the signing key is missing (a server never signs with a throwaway key).
        """
        signer = signer_from_env(env, allow_ephemeral=False).signer
        embedder = make_embedder(embeddings, env) if embeddings else None
        store = opener(db)
        return cls(
            store,
            signer=signer,
            verifier=with_cache(make_verifier(verifier, env), store),
            embedder=embedder,
            policy=policy,
            limits=limits,
        )

    def authenticate(self, key: str | None) -> Caller:
        """The agent an API key belongs to.

        Raises:
            Unauthenticated: if the key is missing or unknown.
        """
        if not key:
            raise Unauthenticated("send your agent key as 'Authorization: Bearer <key>'")
        found = self.store.agent_for_key(key_hash(key))
        if found is None:
            shape = "" if key.startswith(PREFIX) else f"; an agent key starts with {PREFIX}"
            raise Unauthenticated(
                "that agent key is not known to this store (an operator makes one with "
                "'readmit keys create WORKSPACE AGENT' against this same store: its --db or "
                f"READMIT_DB{shape})"
            )
        return Caller(workspace=found[0], agent=found[1])

    def admit_request(self, caller: Caller) -> None:
        """Count one request against the caller's rate.

        Raises:
            RateLimited: if the caller is over its rate.
        """
        self.throttle.admit_request((caller.workspace, caller.agent.id))

    def admit_bytes(self, caller: Caller, count: int) -> None:
        """Charge ``count`` request-body bytes to the caller's byte budget.

        Raises:
            RateLimited: if the caller has sent more than its byte rate allows.
        """
        self.throttle.admit_bytes((caller.workspace, caller.agent.id), count)

    def record(self, caller: Caller, raw_events: Sequence[object]) -> RecordedOut:
        """Validate every event, then record them all atomically (or none).

        A refused event is named by its position in the batch (see `readmit.service.batch`);
        an item its writer may not read itself is recorded with a warning (`readers_check`).
        """
        limits = self.limits
        limits.check_events(len(raw_events))
        check_sizes(caller.agent.id, raw_events, limits.max_text_chars, limits.max_labels)
        self.throttle.admit_events((caller.workspace, caller.agent.id), len(raw_events))
        batch = own_batch(caller.agent.id, raw_events, self.clock, limits)
        # Without client times the server keeps time at commit, so concurrent agents
        # never see "time goes backwards" for events they did not date themselves.
        clock = None if batch.timed else self.clock
        try:
            most = self.limits.max_open_obligations
            recorded = self.store.append(caller.workspace, batch.events, clock=clock, max_open=most)
        except InvalidEvent as exc:
            raise batch.locate(own_hint(exc, caller.agent.id)) from None
        if self.ahead is not None:
            self.ahead.changed(caller.workspace)
        out: RecordedOut = {"recorded": [{"id": r.event.id, "epoch": r.epoch} for r in recorded]}
        if warnings := left_out(caller.agent, batch.events):
            out["warnings"] = warnings
        return out

    def remember(
        self, caller: Caller, memory_id: str, text: str, source: str, at: datetime | None = None
    ) -> MemoryOut:
        """Add a private memory to the caller's own bank (ids as for events: `ids`)."""
        said = {"id": memory_id, "text": text, "source": source}
        check_strings(said, self.limits.max_text_chars, "memory")
        try:
            stored = own(caller.agent.id, memory_id)
        except InvalidInput as exc:
            raise InvalidInput(f"memory {memory_id!r}: {exc}") from None
        step = RecordExperience(
            id=f"memory {stored}",
            at=self._not_ahead(at, "memory"),
            agent=caller.agent.id,
            experience_id=stored,
            text=text,
            source=ref(caller.agent.id, source),
        )
        try:
            return memory_out(self.store.record_experience(caller.workspace, step))
        except InvalidEvent as exc:  # a memory is no event: named as the memory it is
            problem = own_hint(exc, caller.agent.id).problem
            raise InvalidInput(f"memory {memory_id!r}: {problem}") from None

    def depart(
        self, caller: Caller, at: datetime | None = None, returning_to: Returning | None = None
    ) -> DepartureOut:
        """Checkpoint what the caller can see now (and what it says it returns to)."""
        when = self._not_ahead(at, "departure")
        agent = (caller.workspace, caller.agent.id)
        # In a return's slot: 41 of 45 departures at once passed the byte budget before
        # any was charged (4.1M checkpoint rows, the workspace's lock held for 18 s).
        with self.throttle.return_slot(agent):
            self.throttle.admit_bytes(agent, 0)  # refused while its last checkpoint is unpaid
            try:
                made = self.store.depart(caller.workspace, caller.agent.id, when, returning_to)
            except InvalidEvent as exc:  # named by the server's id for it, not the caller's
                hint = ": leave `at` out to depart now" if at is not None else ""
                raise InvalidInput(exc.problem + hint) from None
            rows = len(made.item_ids) + made.left_out
            self.throttle.charge_bytes(agent, CHECKPOINT_ROW_BYTES * rows)
        return departure_out(made)

    def _not_ahead(self, at: datetime | None, what: str) -> datetime:
        server = self.clock()
        return server if at is None else not_ahead(at, server, self.limits.clock_skew, what)

    def returning_to(
        self, caller: Caller, task: str | None, purpose: str | None, at: datetime | None = None
    ) -> tuple[str, str]:
        """The task and purpose of a return at ``at`` (now): given, or its departure's.

        Its departure is the one it is decided against: the caller's latest by ``at``.

        Raises:
            InvalidInput: if neither is given and that departure named none, or there is none.
        """
        if task is not None and purpose is not None:
            return task, purpose
        at = at or self.clock()
        named = self.store.departed_for(caller.workspace, caller.agent.id, at)
        if named is not None:
            return named
        if not self.store.has_departed(caller.workspace, caller.agent.id, at):
            raise InvalidInput(f"agent {caller.agent.id!r} has not departed: depart first")
        raise InvalidInput('give task and purpose ("*" for any): your latest departure named none')

    def return_(
        self,
        caller: Caller,
        task: str | None,
        purpose: str | None,
        at: datetime | None = None,
        cancel: Cancel | None = None,
        asked: float | None = None,
    ) -> AgentDecisionOut:
        """Run the pipeline for the caller and answer with what it may see of the decision.

        The return happens at the server's time (``at`` is only checked against it), under
        the server's policy, once it is its workspace's turn (`readmit.service.turns`).
        Setting ``cancel`` (the client went away) stops it at its next stage or
        verifier call, and before anything is recorded. The time since ``asked`` (when
        the return was asked for, on `readmit.clock.elapsed`'s clock; by default now), its
        turn included, counts against the policy's time budget.

        Without ``task`` and ``purpose``, the return is to those of the departure it is
        decided against, found in its turn (`returning_to`).

        Raises:
            Abandoned: if ``cancel`` was set.
        """
        asked = elapsed() if asked is None else asked
        with (
            self.returning(caller, task, purpose),
            self.turns.take(caller.workspace, cancel) as turn,
        ):
            # Counts against the policy's time budget, less its wait on the background judge.
            waited = max(0.0, elapsed() - asked - turn.excused)
            when = return_time(at, self.clock(), self.limits.clock_skew)

            def request() -> ReturnRequest:  # for each try: to the latest departure's task
                to, why = self.returning_to(caller, task, purpose, when)
                named = f"return@{format_time(when)}"
                return ReturnRequest(id=named, at=when, agent=caller.agent.id, task=to, purpose=why)

            stop = _stopper(cancel)
            try:
                with asking(self.store, caller.workspace, self.ahead) as ask:

                    def step(calls: int = 0, allowed: int = 0) -> None:
                        stop(calls, allowed)
                        ask()  # another process's judge that started since gives way too

                    decided = decide(
                        self.store,
                        caller.workspace,
                        request,
                        policy=self.policy,
                        verifier=self.verifier,
                        signer=self.signer,
                        embedder=self.embedder,
                        on_progress=step,
                        before_record=lambda: stop(0, 0),
                        between=step,
                        waited=waited,
                    )
            except InvalidEvent as exc:  # the request's id is the server's, not the caller's
                if exc.event_id != f"return@{format_time(when)}":
                    raise
                raise InvalidInput(f"{exc.problem}: depart first") from None
        readmitted = decided.decision.readmitted if isinstance(decided.decision, Issued) else ()
        # Store ids count every agent's decisions: showing them would tell an agent how
        # often the others return. It sees its own count: 1, 2, 3…
        number = self.store.own_number(caller.workspace, caller.agent.id, decided.id)
        return answer(decided.record, number, [memory_out(e) for e in readmitted])

    def judge_ahead(self, seconds: float, quiet: float = QUIET_S) -> AheadJudge:
        """Start judging away agents' returns in the background (`AheadJudge`)."""
        if self.verifier is None:
            raise ConfigError("judging ahead needs a verifier")
        self.ahead = AheadJudge(
            self.store,
            self.turns,
            policy=self.policy,
            verifier=self.verifier,
            signer=self.signer,
            seconds=seconds,
            embedder=self.embedder,
            quiet=quiet,
            clock=self.clock,
        )
        return self.ahead

    @contextmanager
    def returning(self, caller: Caller, task: str | None, purpose: str | None) -> Iterator[None]:
        """Note what the caller returns to, if it named it (before its turn).

        It is judged ahead for it. A return that raises may have recorded no decision: what
        it noted then stands only until the caller's next decision (`AheadJudge.stopped`).
        """
        ahead = self.ahead
        if ahead is None or task is None or purpose is None:
            yield
            return
        ahead.returning(caller.workspace, caller.agent.id, task, purpose)
        try:
            yield
        except BaseException:
            ahead.stopped(caller.workspace, caller.agent.id)
            raise

    def verify(self, view: Mapping[str, Any], at: datetime | None = None) -> VerifyOut:
        """Check a view's signature, digests and expiry (never raises for a bad view)."""
        try:
            verified = verify_view(view, self.signer, at or self._verifying())
        except ViewRejected as exc:
            return {"valid": False, "problem": exc.problem}
        return {"valid": True, "items": list(verified.item_ids)}

    def close(self) -> None:
        if self.ahead is not None:
            self.ahead.close()
        self.throttle.close()
        self.store.close()


def _stopper(cancel: Cancel | None) -> Callable[[int, int], None]:
    def stop(calls: int, allowed: int) -> None:
        if cancel is not None and cancel.is_set():
            raise Abandoned("the client went away; the return stopped and recorded nothing")

    return stop
