"""readmit for LangGraph (``pip install '.[langgraph]'``).

A store that admits what a returning agent may read, and the hooks that depart and
return the agent.

Adopting it changes one construction line::

    store = ReadmitStore(InMemoryStore(), member)   # was: store = InMemoryStore()

and adds the departure/return hooks: `ReadmitMiddleware` for ``create_agent``, or
`return_node`/`depart_node` as a `StateGraph`'s entry and exit.
"""

from readmit.integrations.team import missing_extra

try:
    import langgraph.store.base  # noqa: F401  (what every module below needs)
except ImportError as exc:  # the extra is not installed
    raise ImportError(missing_extra("LangGraph", "langgraph")) from exc

from readmit.integrations.langgraph.keys import item_key
from readmit.integrations.langgraph.middleware import (
    ReadmitMiddleware,
    ReadmitState,
    arrive,
    depart_node,
    return_node,
)
from readmit.integrations.langgraph.notice import notice
from readmit.integrations.langgraph.store import ReadmitStore
from readmit.integrations.withheld import ViewExpired, ViewWithheld

__all__ = [
    "ReadmitMiddleware",
    "ReadmitState",
    "ReadmitStore",
    "ViewExpired",
    "ViewWithheld",
    "arrive",
    "depart_node",
    "item_key",
    "notice",
    "return_node",
]
