"""Two Agents SDK agents with their own sessions; one withdraws a fact while the other is away.

Offline: the SDK's own ``ScriptedModel`` answers, tracing is off, sessions and the
readmit store live in a temporary directory. Run: ``python examples/agents_sdk_team.py``
(needs ``pip install '.[agents]'`` in the readmit checkout).

The application code is plain Agents SDK except for the construction line (marked)
and ``depart()`` when an agent leaves.
"""

# ruff: noqa: T201  (an example prints what happened)

import asyncio
import atexit
import shutil
import tempfile
from pathlib import Path

from agents import Agent, RunConfig, Runner, SQLiteSession, TResponseInputItem
from agents.testing import ScriptedModel, assistant_message

from readmit.integrations.agents_sdk import Learned, ReadmitSession, assistant_messages
from readmit.integrations.team import Member
from readmit.model import Agent as TeamAgent
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

OFFLINE = RunConfig(tracing_disabled=True)


def topical(item: TResponseInputItem) -> Learned | None:
    """Which items are facts: assistant answers ``topic: statement``, keyed by topic."""
    fact = assistant_messages(item)
    if fact is None:
        return None
    topic, sep, _ = fact.text.partition(":")
    return Learned(fact.text, key=topic.strip() if sep else None)


async def main() -> None:
    """Run the two-agent story and print what each step did."""
    directory = Path(tempfile.mkdtemp(prefix="readmit-agents-example-"))
    atexit.register(shutil.rmtree, directory, True)
    store = open_store(f"sqlite:///{directory}/readmit.db")
    team = [TeamAgent(id="planner", principal="team", role="plan")]
    store.create_workspace("trip", [*team, TeamAgent(id="booker", principal="team", role="book")])
    signer = HmacSha256Signer(b"example-signing-key-not-a-secret")
    chats = directory / "chats.db"

    # Plain Agents SDK would be: planner_session = SQLiteSession("planner", chats)
    planner_session = ReadmitSession(
        SQLiteSession("planner", chats), Member(store, "trip", "planner", signer), learned=topical
    )
    booker_session = ReadmitSession(
        SQLiteSession("booker", chats), Member(store, "trip", "booker", signer), learned=topical
    )
    hilton = "hotel: the team stays at the Hilton on 5th Avenue"
    planner = Agent(name="planner", model=ScriptedModel([[assistant_message(hilton)]]))
    booker_model = ScriptedModel([[assistant_message(hilton)], [assistant_message("Which hotel?")]])
    booker = Agent(name="booker", model=booker_model)

    await Runner.run(planner, "Where do we stay?", session=planner_session, run_config=OFFLINE)
    await Runner.run(booker, "Where do we stay?", session=booker_session, run_config=OFFLINE)
    print(f"Both agents answered: {hilton}")

    booker_session.depart()
    print("booker departs.")
    await planner_session.pop_item()
    print("planner withdraws its answer (pop_item): the booking was cancelled.")

    await Runner.run(booker, "Book a late check-in.", session=booker_session, run_config=OFFLINE)
    call = booker_model.last_call
    sent = call.input if call is not None else []
    print("booker returns; the model now sees:")
    for item in sent:
        role, content = item.get("role"), item.get("content")
        print(f"  [{role}] {content}")
    store.close()


if __name__ == "__main__":
    asyncio.run(main())
