"""What an integration's reads raise while no view is served, and what they tell the agent.

An issued view is served until its ``expires_at``; a read refused because no view is
served raises `ViewWithheld` (`ViewExpired` once an issued view has expired), carrying
what HTTP and MCP would show the agent of the decision (`agent_notice`).
"""

from datetime import datetime
from typing import Any

from readmit.clock import format_time
from readmit.decide import Decided
from readmit.errors import ReadmitError
from readmit.report import agent_copy


def agent_notice(decided: Decided) -> dict[str, Any]:
    """What the agent is shown of a decision: what HTTP and MCP show it (`agent_copy`).

    Outcome, coverage, what is missing, the signed view, the reasons for what went
    stale (only those it may see), under the agent's own number for the decision
    (``decision``, `Decided.number`: ``readmit explain --agent AGENT N`` explains it).
    """
    return {"decision": decided.number, **agent_copy(decided.record)}


class ViewWithheld(ReadmitError):
    """The agent's latest return was withheld (blocked or reset): its reads are refused.

    Raised by an integration's reads (where it is set to raise) until the agent's next
    return. ``notice`` carries the coverage and the exclusion reasons (`agent_notice`,
    or what the integration adds to it).
    """

    code = "view_withheld"

    def __init__(
        self,
        decided: Decided,
        message: str | None = None,
        *,
        notice: dict[str, Any] | None = None,
    ) -> None:
        self.notice = agent_notice(decided) if notice is None else notice
        coverage = self.notice["coverage"]
        lacking = [m["requirement"] for m in self.notice.get("missing", [])]
        needs = f"; nothing supports {', '.join(lacking)}" if lacking else ""
        super().__init__(
            message
            or f"the return view was not issued ({self.notice['outcome']}: obligation coverage "
            f"{coverage['obligations']}, critical {coverage['critical']}{needs}); reads are "
            "refused until the agent's next return (`Member.return_`, as the LangGraph "
            "middleware's next run or the Mem0 wrapper's next read after a departure decides)"
        )
        self.outcome: str = self.notice["outcome"]
        self.excluded: list[dict[str, Any]] = self.notice["excluded"]


class ViewExpired(ViewWithheld):
    """The agent's latest view was issued but has expired: reads are refused like a withheld one's.

    A view is served until its ``expires_at`` (`expiry`); after that an integration
    treats it as withheld until the agent's next return.
    """

    code = "view_expired"

    def __init__(
        self, decided: Decided, expired_at: datetime, *, notice: dict[str, Any] | None = None
    ) -> None:
        super().__init__(
            decided,
            f"the return view expired at {format_time(expired_at)}; "
            "reads are refused until the next return",
            notice=notice,
        )
        self.expired_at = expired_at
