"""What an agent may read of its workspace now: the active items, all or a page at a time.

``GET /v1/state`` and the MCP ``state`` tool answer a page (`readmit.service.operations`):
a workspace of 100k items answered whole was tens of megabytes of JSON per request, made
again at every call, by any agent.
"""

from bisect import bisect_right
from contextlib import AbstractContextManager
from operator import attrgetter

from readmit.admission.memo import keep
from readmit.model import Agent, Item
from readmit.store.bodies import readable_items
from readmit.store.connection import Connection
from readmit.store.decoded import BodyCache

_ID = attrgetter("id")


class State:
    """The part of `readmit.store.SqlStore` that reads an agent's visible state."""

    _decoded: BodyCache[str, Item]
    _readable: dict[tuple[str, str, str, int], list[Item]]
    """What a reader (workspace, principal, role) may read at an epoch, by id: every change
    to the active items is an event, so following the pages reads them once."""

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _epoch(self, db: Connection, workspace: str) -> int:
        raise NotImplementedError

    def _agent(self, workspace: str, agent: str, step_id: str) -> Agent:
        raise NotImplementedError

    def visible_state(
        self, workspace: str, agent: str, after: str | None = None, limit: int | None = None
    ) -> list[Item]:
        """The active items ``agent`` may read now, by id (code point order).

        With ``after``, those whose ids follow it; with ``limit``, at most that many.

        Raises:
            InvalidEvent: if the workspace has no such agent.
        """
        with self._read() as db:
            who = self._agent(workspace, agent, f"state of {agent}")
            reader = (workspace, who.principal, who.role, self._epoch(db, workspace))
            readable = self._readable.get(reader)
            if readable is None:
                made = readable_items(db, self._decoded, workspace, who)
                readable = keep(self._readable, reader, made, 16)
        # A page is cut from all the reader may read, so that what it costs does not depend
        # on where the items it may not read lie among the ids: decoding until a page was
        # full took 3 ms more for each 1,000 unreadable ids after ``after``, and a helper
        # read another principal's ids off that, a letter at a time (stop 59).
        start = 0 if after is None else bisect_right(readable, after, key=_ID)
        return readable[start:] if limit is None else readable[start : start + limit]

    def page(
        self, workspace: str, agent: str, after: str | None, limit: int
    ) -> tuple[list[Item], str | None]:
        """``limit`` of the items ``agent`` may read after ``after``, and the next page's cursor.

        The cursor is the page's last id, to pass as the next page's ``after``; ``None`` on
        the last page.
        """
        found = self.visible_state(workspace, agent, after, limit + 1)
        return found[:limit], found[limit - 1].id if len(found) > limit else None
