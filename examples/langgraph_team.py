# ruff: noqa: T201  (an example: it prints its story)
"""Two LangGraph agents share one memory store; one changes the plan while the other is away.

Run it offline: ``python examples/langgraph_team.py`` (needs ``pip install '.[langgraph]'``
in the readmit checkout).
The agents are LangChain ``create_agent`` agents driven by LangChain's own scripted
fake chat model, so the example needs no network and no API key.

The application (its tools and how it calls the agents) is plain LangGraph. Adopting
readmit changes only the line that builds each agent's store and agent; see
``build_agent``.
"""

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from readmit.integrations.langgraph import ReadmitMiddleware, ReadmitStore
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

# --- the application: plain LangGraph tools over the store --------------------------


def memory(runtime: ToolRuntime) -> BaseStore:
    """The store the agent was built with."""
    if runtime.store is None:
        raise RuntimeError("the agent was built without a store")
    return runtime.store


@tool
def remember(namespace: list[str], key: str, text: str, runtime: ToolRuntime) -> str:
    """Write a fact to the team's memory."""
    memory(runtime).put(tuple(namespace), key, {"text": text})
    return f"remembered {'/'.join([*namespace, key])}"


@tool
def forget(namespace: list[str], key: str, runtime: ToolRuntime) -> str:
    """Delete a fact from the team's memory."""
    memory(runtime).delete(tuple(namespace), key)
    return f"forgot {'/'.join([*namespace, key])}"


@tool
def recall(namespace: list[str], key: str, runtime: ToolRuntime) -> str:
    """Read a fact from the team's memory."""
    found = memory(runtime).get(tuple(namespace), key)
    return "(nothing)" if found is None else str(found.value["text"])


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model: it replays a script, so it ignores the tools it is given."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def call(tool_name: str, **args: Any) -> AIMessage:
    """A scripted model turn that calls ``tool_name``."""
    return AIMessage(content="", tool_calls=[{"name": tool_name, "args": args, "id": tool_name}])


def run(agent: Any, who: str) -> dict[str, Any]:
    """One agent run; prints each tool result."""
    out = dict(agent.invoke({"messages": [{"role": "user", "content": "carry on"}]}))
    for message in out["messages"]:
        if message.type == "tool":
            print(f"  {who} {message.name}: {message.content}")
    return out


# --- the one place readmit appears --------------------------------------------------


def build_agent(shared: BaseStore, member: Member, script: Sequence[AIMessage]) -> Any:
    """An agent over the shared store, acting as ``member``."""
    model = ScriptedModel(messages=iter([*script, AIMessage(content="done")]))
    # plain LangGraph: create_agent(model, tools=[...], store=shared)
    return create_agent(
        model,
        tools=[remember, forget, recall],
        store=ReadmitStore(shared, member),
        middleware=[ReadmitMiddleware(member)],
    )


def main() -> None:
    """Run the story on a shared in-memory store and a throwaway readmit store."""
    shared = InMemoryStore()
    with tempfile.TemporaryDirectory() as tmp:
        readmit = open_store(f"sqlite:///{Path(tmp) / 'readmit.db'}")
        readmit.create_workspace(
            "trip",
            [
                Agent(id="planner", principal="family", role="itinerary"),
                Agent(id="booker", principal="family", role="booking"),
            ],
        )
        signer = HmacSha256Signer(b"example-signing-key-0123456789ab")
        planner, booker = (Member(readmit, "trip", a, signer) for a in ("planner", "booker"))
        story(shared, planner, booker)
        readmit.close()


def story(shared: BaseStore, planner: Member, booker: Member) -> None:
    """Book, note the pickup and leave, change the plan while away, come back."""
    trip, notes = ["trip"], ["notes", "planner"]
    print("1. The booker books a hotel and a train.")
    run(
        build_agent(
            shared,
            booker,
            [
                call(
                    "remember",
                    namespace=trip,
                    key="hotel",
                    text="Sunrise Hotel is booked, refundable.",
                ),
                call(
                    "remember",
                    namespace=trip,
                    key="train",
                    text="The 9:00 train to Kyoto is booked.",
                ),
            ],
        ),
        "booker",
    )
    print("2. The planner notes the pickup from the hotel, then goes offline.")
    run(
        build_agent(
            shared,
            planner,
            [
                call(
                    "remember",
                    namespace=notes,
                    key="pickup",
                    text="Pickup at 8:00 from Sunrise Hotel.",
                ),
            ],
        ),
        "planner",
    )
    print("3. While the planner is away, Sunrise cancels: the booker rebooks and drops the train.")
    run(
        build_agent(
            shared,
            booker,
            [
                call(
                    "remember",
                    namespace=trip,
                    key="hotel",
                    text="Sunrise cancelled the booking; Riverside Hotel is booked.",
                ),
                call("forget", namespace=trip, key="train"),
            ],
        ),
        "booker",
    )
    print("4. The planner comes back and reads its memory.")
    out = run(
        build_agent(
            shared,
            planner,
            [
                call("recall", namespace=notes, key="pickup"),
                call("recall", namespace=trip, key="hotel"),
                call("recall", namespace=trip, key="train"),
            ],
        ),
        "planner",
    )
    stale = shared.get(tuple(notes), "pickup")
    print(f"  the shared store still holds the old note: {stale.value['text'] if stale else None}")
    print(
        f"  readmit decision {out['readmit']['decision']}: {out['readmit']['outcome']}; "
        "kept out of the planner's view:"
    )
    for excluded in out["readmit"]["excluded"]:
        path = "/".join([*excluded["namespace"], excluded["key"]])
        detail = excluded.get("detail", "")
        for named in excluded.get("evidence_paths", []):  # an item id, read as its path
            detail = detail.replace(named["item"], "/".join([*named["namespace"], named["key"]]))
        print(f"    {path}: {excluded['reason']} ({detail})")


if __name__ == "__main__":
    main()
