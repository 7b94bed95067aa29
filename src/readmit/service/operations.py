"""The operations agents call over HTTP and MCP, each acting as one authenticated agent.

An agent acts only as itself: every event it records names it as author, it
departs and returns only itself, and it sees only its own decisions and its
own private bank, with exclusions of items it may not read removed entirely.
"""

import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from readmit.admission.decision import Issued
from readmit.admission.invalidation.cache import with_cache
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Verifier
from readmit.admission.view import verify_view
from readmit.clock import format_time, now
from readmit.config import signer_from_env
from readmit.decide import decide
from readmit.errors import (
    Abandoned,
    ConfigError,
    Forbidden,
    InvalidEvent,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    Unauthenticated,
    ViewRejected,
)
from readmit.events import Depart, Event, RecordExperience, ReturnRequest, Step
from readmit.model import Agent, Experience, Item
from readmit.plugins import make_embedder, make_verifier
from readmit.policy import Policy
from readmit.report import agent_copy
from readmit.service.ids import namespaced, own, ref
from readmit.service.keys import key_hash
from readmit.service.limits import Limits, Throttle, check_strings
from readmit.service.times import in_calendar, not_ahead, return_time
from readmit.signing import Signer
from readmit.store import SqlStore, open_store
from readmit.wire import parse_step

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated agent a request acts as."""

    workspace: str
    agent: Agent


class Service:
    """readmit's operations over one store, for authenticated agents."""

    def __init__(
        self,
        store: SqlStore,
        *,
        signer: Signer,
        verifier: Verifier | None,
        policy: Policy | None = None,
        clock: Clock = now,
        embedder: Embedder | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.signer = signer
        self.verifier = verifier
        self.embedder = embedder
        self.policy = policy or Policy()
        self.clock = clock
        self.limits = limits or Limits()
        self.throttle = Throttle(self.limits)
        if self.policy.view_ttl > self.limits.max_view_ttl:
            raise ConfigError(
                f"the policy's view TTL ({self.policy.view_ttl}) is over the server's "
                f"cap ({self.limits.max_view_ttl})"
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
    ) -> "Service":
        """Build the service from flags and ``READMIT_*`` settings.

        Raises:
            ConfigError: if the signing key is missing (a server never signs with a throwaway key).
        """
        signer = signer_from_env(env, allow_ephemeral=False).signer
        embedder = make_embedder(embeddings, env) if embeddings else None
        store = open_store(db)
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
        found = self.store.agent_for_key(key_hash(key)) if key else None
        if found is None:
            raise Unauthenticated("send your agent key as 'Authorization: Bearer <key>'")
        return Caller(workspace=found[0], agent=found[1])

    def admit_request(self, caller: Caller) -> None:
        """Count one request against the caller's rate.

        Raises:
            RateLimited: if the caller is over its rate.
        """
        self.throttle.admit_request((caller.workspace, caller.agent.id))

    def record(self, caller: Caller, raw_events: Sequence[object]) -> list[dict[str, Any]]:
        """Validate every event, then record them all atomically (or none)."""
        if len(raw_events) > self.limits.max_events:
            raise PayloadTooLarge(f"at most {self.limits.max_events} events per request")
        check_strings(list(raw_events), self.limits.max_text_chars, "events")
        self.throttle.admit_events((caller.workspace, caller.agent.id), len(raw_events))
        timed = [isinstance(raw, dict) and "at" in raw for raw in raw_events]
        if any(timed) and not all(timed):
            raise InvalidEvent("request", "give `at` on every event or on none")
        at = self.clock()
        events = [self._own_event(caller, raw, index, at) for index, raw in enumerate(raw_events)]
        for event in events:
            not_ahead(event.at, at, self.limits.clock_skew, f"event {event.id!r}")
            validity = getattr(getattr(event, "item", None), "validity", None)
            if validity is not None:
                in_calendar(validity.valid_from, f"event {event.id!r}")
                in_calendar(validity.valid_to, f"event {event.id!r}")
        # Without client times the server keeps time at commit, so concurrent agents
        # never see "time goes backwards" for events they did not date themselves.
        clock = None if any(timed) else self.clock
        recorded = self.store.append(caller.workspace, events, clock=clock)
        return [{"id": r.event.id, "epoch": r.epoch} for r in recorded]

    def _own_event(self, caller: Caller, raw: object, index: int, at: datetime) -> Event:
        id_given = isinstance(raw, dict) and "id" in raw
        if isinstance(raw, dict):
            # Ids and times are the server's to give when the agent leaves them out: a
            # per-request index would collide with the events of earlier requests.
            raw = {"id": f"ev-{uuid.uuid4().hex[:16]}", "at": format_time(at), **raw}
        step: Step = parse_step(raw, index)
        if isinstance(step, RecordExperience | Depart | ReturnRequest):
            raise InvalidEvent(step.id, f"op {step.op!r} has its own endpoint")
        if step.author != caller.agent.id:
            raise Forbidden(
                f"event {step.id!r}: agent {caller.agent.id!r} may only record events it authors"
            )
        return namespaced(step, caller.agent.id, id_given=id_given)

    def remember(
        self, caller: Caller, memory_id: str, text: str, source: str, at: datetime | None = None
    ) -> dict[str, Any]:
        """Add a private experience to the caller's own bank.

        ``memory_id`` is stored as ``<agent>/<memory_id>`` and ``source`` is a reference,
        as for events (see `readmit.service.ids`).
        """
        check_strings([memory_id, text, source], self.limits.max_text_chars, "memory")
        try:
            stored = own(caller.agent.id, memory_id)
        except InvalidInput as exc:
            raise InvalidEvent(f"memory {memory_id}", str(exc)) from None
        step = RecordExperience(
            id=f"memory {stored}",
            at=self._not_ahead(at, "memory"),
            agent=caller.agent.id,
            experience_id=stored,
            text=text,
            source=ref(caller.agent.id, source),
        )
        return _memory_json(self.store.record_experience(caller.workspace, step))

    def depart(self, caller: Caller, at: datetime | None = None) -> dict[str, Any]:
        """Checkpoint what the caller can see now."""
        when = self._not_ahead(at, "departure")
        checkpoint = self.store.depart(caller.workspace, caller.agent.id, when)
        return {
            "agent": caller.agent.id,
            "epoch": checkpoint.epoch,
            "at": format_time(checkpoint.at),
            "items": len(checkpoint.item_ids),
            "digest": checkpoint.digest,
        }

    def _not_ahead(self, at: datetime | None, what: str) -> datetime:
        server = self.clock()
        return server if at is None else not_ahead(at, server, self.limits.clock_skew, what)

    def return_(
        self,
        caller: Caller,
        task: str,
        purpose: str,
        at: datetime | None = None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Run the pipeline for the caller and answer with what it may see of the decision.

        The return happens at the server's time (``at`` is only checked against it), under
        the server's policy. Setting ``cancel`` (the client went away) stops it before its
        next verifier call and before anything is recorded.

        Raises:
            Abandoned: if ``cancel`` was set.
        """
        when = return_time(at, self.clock(), self.limits.clock_skew)
        request = ReturnRequest(
            id=f"return@{format_time(when)}",
            at=when,
            agent=caller.agent.id,
            task=task,
            purpose=purpose,
        )
        stop = _stopper(cancel)
        decided = decide(
            self.store,
            caller.workspace,
            request,
            policy=self.policy,
            verifier=self.verifier,
            signer=self.signer,
            embedder=self.embedder,
            on_progress=stop,
            before_record=lambda: stop(0, 0),
        )
        shown = agent_copy(decided.record)
        shown["decision"] = self._own_ids(caller)[decided.id]
        if isinstance(decided.decision, Issued):
            shown["readmitted"] = [_memory_json(e) for e in decided.decision.readmitted]
        return shown

    def verify(self, view: Mapping[str, Any], at: datetime | None = None) -> dict[str, Any]:
        """Check a view's signature, digests and expiry (never raises for a bad view)."""
        try:
            verified = verify_view(view, self.signer, at or self.clock())
        except ViewRejected as exc:
            return {"valid": False, "problem": exc.problem}
        return {"valid": True, "items": list(verified.item_ids)}

    def _own_ids(self, caller: Caller) -> dict[int, int]:
        """The caller's decisions' store ids to the numbers it sees: 1, 2, 3… (its own count).

        Store ids count every agent's decisions, so showing them would tell an agent how
        often the others return.
        """
        rows = self.store.decisions(caller.workspace, caller.agent.id)
        return {r.id: n for n, r in enumerate(rows, start=1)}

    def decisions(self, caller: Caller) -> list[dict[str, Any]]:
        """The caller's own decisions, oldest first, numbered from 1 for the caller."""
        rows = self.store.decisions(caller.workspace, caller.agent.id)
        return [
            {"id": n, "at": format_time(r.at), "epoch": r.epoch, "outcome": r.outcome}
            for n, r in enumerate(rows, start=1)
        ]

    def explain(self, caller: Caller, decision_id: int) -> dict[str, Any]:
        """The caller's decision number ``decision_id``, as the caller may see it.

        Raises:
            NotFound: if the caller has no decision with that number.
        """
        rows = self.store.decisions(caller.workspace, caller.agent.id)
        if not 1 <= decision_id <= len(rows):
            raise NotFound(f"you have no decision {decision_id}")
        shown = agent_copy(self.store.decision(rows[decision_id - 1].id, caller.workspace))
        shown["decision"] = decision_id
        return shown

    def state(self, caller: Caller) -> list[dict[str, Any]]:
        """The active items the caller may read now."""
        return [_item_json(i) for i in self.store.visible_state(caller.workspace, caller.agent.id)]

    def memories(self, caller: Caller) -> list[dict[str, Any]]:
        """The caller's own private bank."""
        return [_memory_json(e) for e in self.store.experiences(caller.workspace, caller.agent.id)]

    def close(self) -> None:
        self.store.close()


def _stopper(cancel: threading.Event | None) -> Callable[[int, int], None]:
    def stop(calls: int, allowed: int) -> None:
        if cancel is not None and cancel.is_set():
            raise Abandoned("the client went away; the return stopped and recorded nothing")

    return stop


def _item_json(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "text": item.text,
        "kind": str(item.kind),
        "epoch": item.epoch,
        "author": item.author,
        "key": item.key,
        "supports": sorted(item.supports),
    }


def _memory_json(e: Experience) -> dict[str, Any]:
    return {"id": e.id, "text": e.text, "source": e.source_item_id, "epoch": e.epoch}


def require_key(env: Mapping[str, str], name: str) -> str:
    """An agent key from the environment.

    Raises:
        ConfigError: if it is unset.
    """
    key = env.get(name)
    if not key:
        raise ConfigError(f"set {name} to the agent's key (create one with `readmit keys create`)")
    return key
