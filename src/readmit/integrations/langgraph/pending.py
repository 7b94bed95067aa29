"""The agent's writes a LangGraph lens must not show yet: recorded in readmit, not landed.

A write is recorded in readmit first, then sent to the inner store. Until it lands, its
events are pending: a lens that meets one in the log (`Lens.apply`) does not show its
path as the agent's own, since the path still holds what was there (maybe another
principal's value). A write that failed stays pending for as long as a lens may still
meet its events: lenses are kept weakly, and a lens meets only the events after its
epoch, so the ids go once every lens still held has followed past them.
"""

import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Protocol


class Seen(Protocol):
    """A lens, as far as the pending writes concern it."""

    epoch: int
    pending: set[str]


class Pending:
    """One store's pending writes: the event ids its lenses share, and when to drop them."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        """The events recorded whose inner write has not landed, or failed. Shared by the
        store's lenses (the set itself), so a lens made meanwhile sees every write."""
        self._at: dict[str, int] = {}
        """The epoch each pending event was recorded at, until its write lands or fails."""
        self._failed: dict[str, int] = {}
        """The same, of the pending events whose write failed."""
        self._lenses: weakref.WeakSet[Seen] = weakref.WeakSet()
        self._lock = threading.Lock()
        """Held while ``_at``, ``_failed`` and ``_lenses`` change (a lens's own lock
        guards what it shows)."""

    def recorded(self, epochs: Mapping[str, int]) -> None:
        """Note the epochs the log gave pending events."""
        with self._lock:
            self._at.update((i, at) for i, at in epochs.items() if i in self.ids)

    def answered(self, ids: Iterable[str], landed: bool) -> None:
        """The inner store answered the writes of ``ids``: landed, or failed (kept)."""
        with self._lock:
            for i in ids:
                at = self._at.pop(i, None)
                if not landed and at is not None:
                    self._failed[i] = at

    def failed_recording(self, ids: set[str], logged: Mapping[str, int] | None) -> None:
        """Recording ``ids`` raised: of those, the ones the log holds failed.

        The rest were never recorded: nothing will meet them. ``logged`` is ``None`` when
        the log could not be read: then all stay pending, to be safe.
        """
        if logged is None:
            return
        with self._lock:
            self._failed.update(logged)
        self.ids -= ids - logged.keys()

    def settled(self, lens: Seen) -> set[str]:
        """The pending ids for ``lens`` (new), less the failed writes' no lens will meet."""
        with self._lock:
            self._lenses.add(lens)
            floor = min((live.epoch for live in list(self._lenses)), default=lens.epoch)
            done = {i for i, at in self._failed.items() if at <= floor}
            for i in done:
                del self._failed[i]
        self.ids -= done
        return self.ids
