"""``GET /health``: the store's check, made once for every caller within a few seconds.

The check reads the whole SQLite file (``PRAGMA quick_check``: 0.2 s at 350 MB), and
``/health`` needs no key and counts against no agent's rate, so each caller running its
own let anyone without a key fill the threads every route shares: a probe's 60
connections polling it held agents' requests for up to 8.5 s. Now one check runs at a
time, in one thread; callers meanwhile wait for it on the event loop, and its answer
serves every caller for `FRESH_S` seconds after.
"""

import threading
import time
from collections.abc import Callable

import anyio
import anyio.to_thread

from readmit.errors import ReadmitError

FRESH_S = 2.0
"""How long one check's answer serves every caller: a load balancer polling every few
seconds still sees each failure, and a flood costs one check in this long."""
_WAIT_S = 0.01
"""How often a caller looks whether the check under way has answered."""


class SharedCheck:
    """``check`` run for all callers together: at most one at a time, its answer reused.

    A refusal (`ReadmitError`: a damaged or unreachable store) is an answer, reused as
    the store's fine state is; any other exception is a bug, raised to its caller alone.
    """

    def __init__(self, check: Callable[[], None], fresh_s: float | None = None) -> None:
        self._check = check
        self._fresh_s = fresh_s
        """Seconds an answer serves; `FRESH_S` (as it is at each call) if not given."""
        self._running = threading.Lock()  # not an asyncio lock: no loop of its own to bind
        self._at = -float("inf")
        self._refused: ReadmitError | None = None

    async def __call__(self) -> None:
        """Return if the store is fine, as last checked at most `FRESH_S` ago.

        Raises:
            ReadmitError: what the check raised, to every caller it answers.
        """
        fresh_s = FRESH_S if self._fresh_s is None else self._fresh_s
        while time.monotonic() - self._at >= fresh_s:
            if self._running.acquire(blocking=False):
                try:
                    await self._run()
                finally:
                    self._running.release()
                break
            await anyio.sleep(_WAIT_S)  # another caller's check is under way: its answer
        if self._refused is not None:  # its traceback not grown by every caller's raise
            raise self._refused.with_traceback(None)

    async def _run(self) -> None:
        try:
            await anyio.to_thread.run_sync(self._check)
        except ReadmitError as refused:
            self._refused = refused
        else:
            self._refused = None
        self._at = time.monotonic()
