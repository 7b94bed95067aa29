"""What an agent may read of its workspace now: the active items, all or a page at a time.

``GET /v1/state`` and the MCP ``state`` tool answer a page (`readmit.service.operations`):
a workspace of 100k items answered whole was tens of megabytes of JSON per request, made
again at every call, by any agent.
"""

from contextlib import AbstractContextManager

from readmit.model import Agent, Item
from readmit.store.bodies import readable_page
from readmit.store.connection import Connection
from readmit.store.decoded import BodyCache


class State:
    """The part of `readmit.store.SqlStore` that reads an agent's visible state."""

    _decoded: BodyCache[str, Item]

    def _read(self) -> AbstractContextManager[Connection]:
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
            return readable_page(db, self._decoded, workspace, who, after, limit)

    def page(
        self, workspace: str, agent: str, after: str | None, limit: int
    ) -> tuple[list[Item], str | None]:
        """``limit`` of the items ``agent`` may read after ``after``, and the next page's cursor.

        The cursor is the page's last id, to pass as the next page's ``after``; ``None`` on
        the last page.
        """
        found = self.visible_state(workspace, agent, after, limit + 1)
        return found[:limit], found[limit - 1].id if len(found) > limit else None
