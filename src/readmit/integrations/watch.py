"""When a memory layer reads the workspace's log again, between returns.

A read does not read the log every time (`Watch`): a memory layer's own read can take
a microsecond, the log's a few. It reads it after any write through the same store
object (at once), and else at most every `FOLLOW_EVERY` seconds, so a write from
another process shows within that long (`readmit.integrations.following`, the LangGraph
store's lens).
"""

import math
import time
from dataclasses import dataclass

from readmit.store import WorkStateStore

FOLLOW_EVERY = 0.05
"""Seconds a read may go on the log as last read, unless this process wrote since."""


@dataclass(slots=True)
class Watch:
    """When a reader reads the workspace's log again.

    `due` says whether to read it; `read` notes that it was read, once what was read is
    applied: a reader that checks in between reads it too (it waits on the reader's
    lock, then finds nothing due), never going on with what was there before.
    """

    store: WorkStateStore
    generation: int = -1
    """The store's ``generation`` when the log was last read (-1: never, or it has none)."""
    due_at: float = -math.inf
    """When the log is read again though nothing was written through the store object."""

    def due(self) -> tuple[int, float] | None:
        """What to note once the log is read now, or None if it need not be.

        Yes after a write through the store object (its ``generation``: a store without
        one is read every time), and `FOLLOW_EVERY` seconds after the last read.
        """
        generation = getattr(self.store, "generation", None)  # read before the log
        now = time.monotonic()
        if generation == self.generation and now < self.due_at:
            return None
        return (-1 if generation is None else generation), now + FOLLOW_EVERY

    def read(self, noted: tuple[int, float]) -> None:
        """Note the log as read (what `due` answered), its news applied."""
        self.generation, self.due_at = noted

    def moved(self) -> bool:
        """Whether a write was recorded through the store object since the log was last read.

        Asked after a read of the memory layer: a teammate's write recorded meanwhile may
        have reached it too (readmit records first), so the read is filtered or made again
        once the log is followed. A store with no ``generation`` says no.
        """
        generation = getattr(self.store, "generation", None)
        return generation is not None and generation != self.generation
