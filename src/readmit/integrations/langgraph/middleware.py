"""Departure and return for LangGraph agents: a LangChain agent middleware and graph nodes.

An agent returns when a run starts and departs when it ends. The return is decided by
`readmit.decide.decide` (through `Member.return_`), so it is in the audit log like any
other, and its notice (outcome, signed view, the reasons for what went stale) is put
in the graph state under ``readmit``, where the application and its prompts can read
it. An agent that never departed has nothing to readmit: its first run records no
return and its reads stay unfiltered.
"""

import asyncio
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import OmitFromInput
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.runtime import Runtime

from readmit.decide import Decided
from readmit.errors import InvalidEvent
from readmit.integrations.langgraph.notice import notice
from readmit.integrations.team import Member
from readmit.wire import check_returning

STATE_KEY = "readmit"
"""The state key the notice of the latest return is put under."""


def arrive(member: Member, task: str | None = None, purpose: str | None = None) -> Decided | None:
    """Return ``member`` to ``task`` for ``purpose``: its decision, or None if it never departed.

    Without them, to what its departure named, else to every task and purpose
    (`Member.return_`).

    Raises:
        InvalidEvent: for any other reason the return cannot be decided.
    """
    try:
        return member.return_(task, purpose)
    except InvalidEvent as exc:
        if exc.problem.endswith("has not departed"):
            return None
        raise


def _update(member: Member, task: str | None, purpose: str | None, key: str) -> dict[str, Any]:
    decided = arrive(member, task, purpose)
    return {key: notice(decided) if decided is not None else None}


class ReadmitState(AgentState[Any]):
    """Agent state with the notice of the agent's latest return."""

    readmit: NotRequired[Annotated[dict[str, Any] | None, OmitFromInput]]


class ReadmitMiddleware(AgentMiddleware[ReadmitState, Any]):
    """Return ``member`` before each agent run (``before_agent``), depart after (``after_agent``).

    Args:
        member: The agent the runs belong to (the one its `ReadmitStore` was built for).
        task: The task it returns to (with ``purpose``; else what its last departure named,
            or every task). Its departures after each run name it too.
        purpose: The purpose it returns for.
    """

    state_schema = ReadmitState

    def __init__(
        self, member: Member, *, task: str | None = None, purpose: str | None = None
    ) -> None:
        check_returning(task, purpose)  # both or neither, refused here rather than at a run
        self.member, self.task, self.purpose = member, task, purpose

    def before_agent(self, state: ReadmitState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return _update(self.member, self.task, self.purpose, STATE_KEY)

    async def abefore_agent(
        self, state: ReadmitState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await asyncio.to_thread(_update, self.member, self.task, self.purpose, STATE_KEY)

    def after_agent(self, state: ReadmitState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._depart()
        return None

    async def aafter_agent(
        self, state: ReadmitState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        await asyncio.to_thread(self._depart)
        return None

    def _depart(self) -> None:
        # Saying what it returns to lets judging ahead screen that return while it is away.
        self.member.depart(self.task, self.purpose)


def return_node(
    member: Member,
    *,
    task: str | None = None,
    purpose: str | None = None,
    key: str = STATE_KEY,
) -> Runnable[Any, dict[str, Any]]:
    """A `StateGraph` node that returns ``member``: add it as the graph's entry.

    It puts the return's notice (None on a first arrival) in the state under ``key``,
    so the graph's state schema needs that key.
    """
    check_returning(task, purpose)  # both or neither, refused here rather than at a run

    def readmit_return(state: Any) -> dict[str, Any]:
        return _update(member, task, purpose, key)

    return RunnableLambda(readmit_return, name="readmit_return")


def depart_node(
    member: Member, *, task: str | None = None, purpose: str | None = None
) -> Runnable[Any, dict[str, Any]]:
    """A `StateGraph` node that departs ``member``: add it before the graph's end.

    ``task`` and ``purpose`` (together): what it will return to (`Member.depart`).
    """
    check_returning(task, purpose)

    def readmit_depart(state: Any) -> dict[str, Any]:
        member.depart(task, purpose)
        return {}

    return RunnableLambda(readmit_depart, name="readmit_depart")
