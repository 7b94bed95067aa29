"""Per-agent limits kept in the store, for several server processes over one database.

`readmit.service.limits.Throttle` keeps each agent's token buckets and running returns in
its process: an agent whose requests reach N processes gets N times each. With
``readmit serve --shared-limits`` (`Limits.shared`) every process takes from the same
buckets, rows of the store (`readmit.store.buckets`), and a return holds one of its
agent's ``concurrent_returns`` slots as a lease in the store (`readmit.store.leases`),
renewed while it runs and given back when it ends; one left by a process that died runs
out within `SLOT_S`. One this process could not give back (the store was down) is given
back once the store answers again, by its next claim or in the background within
`GIVE_BACK_S`, rather than refusing its agent's returns until it runs out. Each request
then costs a short write transaction or two (measured by `bench/shared_limits.py`).
"""

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from readmit.errors import StoreError
from readmit.service.limits import Limits, Throttle, busy
from readmit.store import SqlStore

SLOT_S = 30.0
"""How long a return's slot stands in the store without being renewed."""
RENEW_S = 10.0
"""How often the slots this process holds are renewed."""
GIVE_BACK_S = 1.0
"""How often a slot this process could not give back is tried again."""
SLOT = "return-slot "
"""The leases' names: this, the agent's id and the slot's number."""

_log = logging.getLogger(__name__)


class SharedThrottle(Throttle):
    """`Throttle`, its buckets and return slots kept in ``store`` for every process over it."""

    stored = True

    def __init__(
        self, limits: Limits, store: SqlStore, clock: Callable[[], float] | None = None
    ) -> None:
        super().__init__(limits)
        self.store = store
        self.clock = clock
        """Seconds since the epoch for the buckets; by default the store's clock (the
        database's on PostgreSQL: processes on several machines share it)."""
        self.me = f"{uuid.uuid4().hex} "
        self._held: dict[str, tuple[str, str]] = {}  # holder -> lease (workspace, name)
        """The slots this process holds, by holder: one run out and taken again here by
        another return has two holders in turn, each giving back only its own."""
        self._unreturned: dict[str, tuple[str, str]] = {}  # holder -> lease
        """Slots whose return ended but whose give-back failed (the store was down)."""
        self._renewing: threading.Thread | None = None
        self._closed = threading.Event()
        self._stir = threading.Event()
        """Wakes the renewing thread: to close, or to give back a slot at once."""

    def _take(
        self, kind: str, agent: tuple[str, str], cost: int, rate: float, size: float, force: bool
    ) -> float:
        now = None if self.clock is None else self.clock()
        try:
            return self.store.take_tokens((*agent, kind), cost, (rate, size), now, force)
        except StoreError as exc:
            if not force:  # a request not yet served: refused as the store is unreachable
                raise
            # Charged after the fact (a departure's checkpoint, recorded): failing it would
            # tell the agent its departure failed (a review). Unpaid, the bytes are let go.
            _log.warning("could not charge %s bytes to %s's budget: %s", cost, agent, exc)
            return 0.0

    @contextmanager
    def return_slot(self, agent: tuple[str, str]) -> Iterator[threading.Event]:
        """This process's slot (its cancel flag), and one of the agent's in the store.

        Raises:
            RateLimited: if every one of the agent's slots is held, here or elsewhere.
        """
        with super().return_slot(agent) as cancel:
            holder = self._claim(agent)
            try:
                yield cancel
            finally:
                self._give_back(holder)

    def close(self) -> None:
        """Stop renewing, waiting for a renewal under way (the slots still held run out).

        Waited for: `Service.close` closes the store next, which a renewal still uses.
        """
        self._closed.set()
        self._stir.set()
        with self._lock:
            renewing = self._renewing
        if renewing is not None and renewing is not threading.current_thread():
            renewing.join()

    def _claim(self, agent: tuple[str, str]) -> str:
        """Hold a free slot of ``agent``'s in the store; its holder (this return's name)."""
        workspace, who = agent
        holder = self.me + uuid.uuid4().hex
        self._give_back_unreturned()
        for slot in range(self.limits.concurrent_returns):
            lease = (workspace, f"{SLOT}{who} {slot}")
            if self.store.lease(*lease, holder, SLOT_S):
                with self._lock:
                    self._held[holder] = lease
                    self._keep_renewing()
                return holder
        raise busy(self.limits)

    def _keep_renewing(self) -> None:
        """Start the renewing thread if it is not running (called under ``_lock``)."""
        if self._renewing is None and not self._closed.is_set():
            self._renewing = threading.Thread(
                target=self._renew, name="readmit-return-slots", daemon=True
            )
            self._renewing.start()

    def _give_back(self, holder: str) -> None:
        with self._lock:
            lease = self._held.pop(holder)
        if not self._gave_back(holder, lease, logged=False):  # tried again until it answers
            with self._lock:
                self._unreturned[holder] = lease
                self._keep_renewing()
            self._stir.set()  # the renewing thread may be waiting out RENEW_S

    def _give_back_unreturned(self) -> None:
        """Give back the slots whose give-back failed; those that fail again stay listed."""
        with self._lock:
            unreturned = list(self._unreturned.items())
        for holder, lease in unreturned:
            if self._gave_back(holder, lease, logged=True):
                with self._lock:
                    self._unreturned.pop(holder, None)

    def _gave_back(self, holder: str, lease: tuple[str, str], logged: bool) -> bool:
        """Whether the store took back ``holder``'s slot (a failure leaves the answer be).

        A failure is logged as a warning the first time, then quietly (``logged``).
        """
        try:
            self.store.lease(*lease, holder, 0)
        except Exception as exc:
            log = _log.debug if logged else _log.warning
            log("could not give back the return slot %s: %s", lease, exc, exc_info=unforeseen(exc))
            return False
        return True

    def _renew(self) -> None:
        """Renew the held slots every `RENEW_S`, and try the unreturned every `GIVE_BACK_S`."""
        due = time.monotonic() + RENEW_S
        while True:
            with self._lock:
                pause = due - time.monotonic()
                if self._unreturned:
                    pause = min(pause, GIVE_BACK_S)
            self._stir.wait(max(0.0, pause))
            self._stir.clear()
            if self._closed.is_set():
                return
            self._give_back_unreturned()
            with self._lock:
                held = list(self._held.items())
                if not held and not self._unreturned:
                    self._renewing = None
                    return
            if time.monotonic() < due:
                continue
            due = time.monotonic() + RENEW_S
            for holder, lease in held:
                try:
                    self.store.renew_lease(*lease, holder, SLOT_S)
                except Exception as exc:
                    _log.warning(
                        "could not renew the return slot %s: %s",
                        lease,
                        exc,
                        exc_info=unforeseen(exc),
                    )


def unforeseen(error: Exception) -> bool:
    """Whether ``error`` is worth its traceback in the log: not the store unreachable."""
    return not isinstance(error, StoreError)
