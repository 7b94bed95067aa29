"""``GET /health``: the store's check, made once for every caller within a few seconds.

The check reads the whole SQLite file (``PRAGMA quick_check``: 0.2 s at 350 MB), and
``/health`` needs no key and counts against no agent's rate, so each caller running its
own let anyone without a key fill the threads every route shares: a probe's 60
connections polling it held agents' requests for up to 26 s. Now one check runs at a
time, in a thread of its own; callers meanwhile wait for it on the event loop, and its
answer serves every caller for `FRESH_S` seconds after, or, when fine, ten times as long
as the check took, if longer (a check of minutes would otherwise run most of the time).
A caller waits `HANG_S` at most.
"""

import threading
import time
from collections.abc import Callable

import anyio

from readmit.errors import StoreError

FRESH_S = 2.0
"""How long one check's answer serves every caller, at least: a load balancer polling
every few seconds still sees each failure, and a flood costs one check in this long."""
PER_CHECK_S = 10
"""A fine answer serves at least this many times as long as its check took (a failed one
serves `FRESH_S`: the store may be back soon)."""
HANG_S = 30.0
"""A caller that has waited this long for the check under way answers ``store_error``
(the check runs on; a database that stopped answering may hold it for good)."""
_WAIT_S = 0.01
"""How often a caller looks whether the check under way has answered."""


class SharedCheck:
    """``check`` run for all callers together: at most one at a time, its answer reused.

    Its answer, fine or an exception (a refusal of a damaged or unreachable store, or a
    bug), is given to every caller until it is no longer fresh. The check runs in a thread
    of its own, not a caller's: a caller cancelled while it waits leaves it running, and
    no second check starts beside it.
    """

    def __init__(self, check: Callable[[], None], fresh_s: float | None = None) -> None:
        self._check = check
        self._fresh_s = fresh_s
        """Seconds an answer serves at least; `FRESH_S` (as it is at each call) if not given."""
        self._lock = threading.Lock()
        self._checking = False
        self._until = -float("inf")
        """Until when (monotonic seconds) the last answer serves."""
        self._failed: BaseException | None = None
        self._done = 0
        """How many checks have answered: a caller takes the answer of one that ended
        while it waited, however briefly that answer serves."""

    async def __call__(self) -> None:
        """Return if the store is fine, by the last check's answer while it is fresh.

        Else by the next check's, the one that ends while this caller waits.

        Raises:
            Exception: what the check raised, to every caller its answer serves.
        """
        asked, since = self._done, time.monotonic()
        while time.monotonic() >= self._until and self._done == asked:
            if time.monotonic() - since >= HANG_S:
                raise StoreError(f"the store's check has not answered in {HANG_S:g} s")
            with self._lock:
                if not self._checking and time.monotonic() >= self._until:
                    self._checking = True
                    threading.Thread(target=self._run, name="readmit-health", daemon=True).start()
            await anyio.sleep(_WAIT_S)  # the check under way answers for this caller too
        if self._failed is not None:  # its traceback not grown by every caller's raise
            raise self._failed.with_traceback(None)

    def _run(self) -> None:
        start = time.monotonic()
        failed: BaseException | None = StoreError("the store's check ended without an answer")
        try:
            self._check()
            failed = None
        except Exception as exc:  # an answer too: a bug raised to every caller in its window
            failed = exc
        finally:  # whatever ends the check (even what no `except` takes) ends the wait
            took = time.monotonic() - start
            fresh = FRESH_S if self._fresh_s is None else self._fresh_s
            with self._lock:
                self._failed = failed
                serves = fresh if failed else max(fresh, PER_CHECK_S * took)
                self._until = time.monotonic() + serves
                self._checking = False
                self._done += 1
