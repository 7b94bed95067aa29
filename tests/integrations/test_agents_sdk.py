"""readmit over real OpenAI Agents SDK sessions (``SQLiteSession``), offline."""

import asyncio
import contextlib
import runpy
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from agents import Agent as SdkAgent
from agents import RunConfig, Runner, Session, SQLiteSession, TResponseInputItem
from agents.testing import ScriptedModel, assistant_message

from builders import KEY, Ticking, member_states, member_supersedes
from integrations.watch import deciding_threads
from readmit.errors import InvalidEvent, InvalidInput, StoreError
from readmit.events import Assert, ItemDraft, ObligationDraft, OpenObligation
from readmit.integrations.agents_sdk import (
    PREAMBLE,
    Learned,
    ReadmitSession,
    assistant_messages,
    message_text,
)
from readmit.integrations.team import Member, new_id
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store

EXAMPLES = Path(__file__).parents[2] / "examples"
OFFLINE = RunConfig(tracing_disabled=True)
T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Member, Member]]:
    store: WorkStateStore = open_store(f"sqlite:///{tmp_path}/readmit.db")
    agents = [
        Agent(id="a", principal="team", role="planner"),
        Agent(id="b", principal="team", role="booker"),
    ]
    store.create_workspace("trip", agents)
    signer = HmacSha256Signer(KEY)
    yield Member(store, "trip", "a", signer), Member(store, "trip", "b", signer)
    store.close()


def topical(item: TResponseInputItem) -> Learned | None:
    """The application's choice: assistant messages ``topic: statement`` are keyed facts."""
    fact = assistant_messages(item)
    if fact is None:
        return None
    topic, sep, _ = fact.text.partition(":")
    return Learned(fact.text, key=topic.strip() if sep else None)


def said(text: str) -> TResponseInputItem:
    return {"role": "assistant", "content": text}


def asked(text: str) -> TResponseInputItem:
    return {"role": "user", "content": text}


def texts(items: list[TResponseInputItem]) -> list[str]:
    return [message_text(item) for item in items]


def sessions(team: tuple[Member, Member], tmp_path: Path) -> tuple[ReadmitSession, ReadmitSession]:
    db = tmp_path / "sessions.db"
    a = ReadmitSession(SQLiteSession("a", db), team[0], learned=topical)
    b = ReadmitSession(SQLiteSession("b", db), team[1], learned=topical)
    return a, b


def test_a_fact_replaced_while_away_leaves_the_returning_agents_history_with_the_reason(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([asked("Where do we stay?"), said("hotel: the Hilton")])
        b.depart()
        await a.add_items([said("hotel: the Marriott, the Hilton was cancelled")])
        return await b.get_items()

    items = run(scenario())

    assert texts(items)[1:] == ["Where do we stay?"]
    assert items[0]["role"] == "developer"  # type: ignore[typeddict-item]
    note = texts(items)[0]
    assert note.startswith(PREAMBLE)
    assert "- hotel: the Marriott, the Hilton was cancelled" in note
    assert "hotel: the Hilton (stale_or_superseded" in note
    assert '"signature"' in note


def test_a_session_opened_after_a_departure_or_a_return_still_leaves_out_the_stale_fact(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """What a departure and a return decided is the store's, not the process's."""
    a, b = sessions(team, tmp_path)

    def restarted() -> ReadmitSession:  # a new process: a new member over the same store
        inner = SQLiteSession("b", tmp_path / "sessions.db")
        return ReadmitSession(inner, replace(team[1], latest=None), learned=topical)

    async def scenario() -> tuple[list[TResponseInputItem], list[TResponseInputItem]]:
        await b.add_items([asked("Where do we stay?"), said("hotel: the Hilton")])
        b.depart()
        await a.add_items([said("hotel: the Marriott, the Hilton was cancelled")])
        return await restarted().get_items(), await restarted().get_items()

    for items in run(scenario()):
        assert texts(items)[1:] == ["Where do we stay?"]
        assert "hotel: the Hilton (stale_or_superseded" in texts(items)[0]


def test_popping_an_outdated_keyed_fact_leaves_a_teammates_newer_one_under_the_key(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: the Hilton")])
        await a.add_items([asked("Where do we stay?"), said("hotel: the Marriott (rebooked)")])
        a.depart()
        await b.pop_item()
        return await a.get_items()

    items = run(scenario())

    assert texts(items)[1:] == ["Where do we stay?", "hotel: the Marriott (rebooked)"]
    assert "- hotel: the Marriott (rebooked)" in texts(items)[0]


def test_a_pop_readmit_cannot_record_puts_the_item_back(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session lost the item and readmit kept its fact, which the next return
    admitted (a probe): the two agree again, and the error says so."""
    _, b = sessions(team, tmp_path)

    def locked(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("database is locked")

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: the Hilton")])
        with monkeypatch.context() as patched:
            patched.setattr(team[1].store, "append", locked)
            with pytest.raises(StoreError, match="database is locked") as raised:
                await b.pop_item()
        assert raised.value.__notes__ == ["readmit could not record the pop: the item is back"]
        held: list[TResponseInputItem] = await b.inner.get_items()
        return held

    assert texts(run(scenario())) == ["hotel: the Hilton"]
    assert [i.text for i in team[1].visible()] == ["hotel: the Hilton"]


def test_a_return_is_decided_off_the_event_loop(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, b = sessions(team, tmp_path)
    decided_on = deciding_threads(team[1], monkeypatch)

    async def scenario() -> tuple[threading.Thread, list[TResponseInputItem]]:
        await b.add_items([said("hotel: the Hilton")])
        await b.adepart("trip", "booking")
        return threading.current_thread(), await b.get_items()

    loop_thread, items = run(scenario())

    assert "- hotel: the Hilton" in texts(items)[0]
    assert len(decided_on) == 1
    assert decided_on[0] is not loop_thread
    assert team[1].store.departed_for("trip", "b") == ("trip", "booking")


def test_another_principals_facts_are_never_named_to_the_returning_agent(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/readmit.db")
    agents = [
        Agent(id="a", principal="team", role="r"),
        Agent(id="x", principal="agency", role="r"),
    ]
    store.create_workspace("trip", agents)
    a, x = (Member(store, "trip", agent, HmacSha256Signer(KEY)) for agent in ("a", "x"))
    session = ReadmitSession(SQLiteSession("a", tmp_path / "sessions.db"), a)

    async def scenario() -> list[TResponseInputItem]:
        await session.adepart()
        secret = ItemDraft(id="s", text="Agency secret: the client list is in vault 7.")
        x.record([Assert(id=new_id("x"), at=x.clock(), author="x", item=secret)])
        return await session.get_items()

    note = texts(run(scenario()))[0]
    store.close()

    assert note.startswith(PREAMBLE)
    assert "vault 7" not in note
    assert "Left out of your history" not in note


def test_a_fact_withdrawn_by_a_teammate_is_left_out_as_revoked(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = sessions(team, tmp_path)

    async def scenario() -> tuple[TResponseInputItem | None, list[TResponseInputItem]]:
        await a.add_items([said("hotel: the Hilton")])
        await b.add_items([said("hotel: the Hilton")])
        b.depart()
        popped = await a.pop_item()
        return popped, await b.get_items()

    popped, items = run(scenario())

    assert popped == said("hotel: the Hilton")
    assert texts(items)[1:] == []
    assert "hotel: the Hilton (revoked: a withdrew it from its session)" in texts(items)[0]


def test_a_fact_resting_on_one_a_teammate_withdraws_while_present_is_left_out_with_it(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """The return would exclude the pickup as premise_invalidated; the session served it."""

    def resting(item: TResponseInputItem) -> Learned | None:
        fact = topical(item)
        if fact is None or fact.key != "pickup":
            return fact
        return replace(fact, annotations={"depends_on": [{"key": "hotel"}]})

    b = ReadmitSession(SQLiteSession("b", tmp_path / "s.db"), team[1], learned=resting)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: the Hilton"), said("dinner: at eight")])
        await b.add_items([said("pickup: at 8:00 from the Hilton")])
        b.depart()
        await b.get_items()
        [hilton] = [i.id for i in team[0].visible() if i.text == "hotel: the Hilton"]
        team[0].revoke([hilton], "The Hilton cancelled our booking.")
        return await b.get_items()

    items = run(scenario())

    assert texts(items)[1:] == ["dinner: at eight"]
    assert "- pickup: at 8:00 from the Hilton (premise_invalidated: depends on" in texts(items)[0]
    assert "- hotel: the Hilton (revoked: The Hilton cancelled our booking.)" in texts(items)[0]


def test_a_fact_revoked_while_away_stays_left_out_after_the_next_return(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Revoked before b's second departure, it is in neither that checkpoint nor C: the
    session served it again at the second return (a probe)."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> tuple[list[TResponseInputItem], list[TResponseInputItem]]:
        await b.add_items([said("hotel: the Hilton"), said("dinner: at eight")])
        b.depart()
        [hilton] = [i.id for i in team[0].visible() if i.text == "hotel: the Hilton"]
        team[0].revoke([hilton], "The Hilton cancelled our booking.")
        first = await b.get_items()
        b.depart()
        return first, await b.get_items()

    first, second = run(scenario())

    assert texts(first)[1:] == texts(second)[1:] == ["dinner: at eight"]
    for note in texts(first)[0], texts(second)[0]:
        assert "- hotel: the Hilton (revoked: The Hilton cancelled our booking.)" in note


def test_the_message_lists_neither_a_teammates_old_facts_nor_an_admitted_one_as_left_out(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """A teammate's superseded facts, never in b's history, were each listed, and a fact
    b stated twice was listed both as admitted and as left out (a review)."""
    a, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        for n in range(5):
            await a.add_items([said(f"weather: day {n} is sunny")])
        await b.add_items([said("hotel: the Hilton")])
        await b.add_items([said("hotel: the Hilton")])
        b.depart()
        return await b.get_items()

    note = texts(run(scenario()))[0]

    message = note.split("Signed view:")[0]
    assert "weather: day 0" not in message
    assert "- weather: day 4 is sunny\n" in message  # admitted: a's newest, shared
    assert "- hotel: the Hilton\n" in message
    assert "Left out of your history" not in message


def test_a_fact_withdrawn_before_the_first_return_is_listed_and_one_replaced_by_itself_not(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """No message is shown before a first return: a fact a teammate revoked then was left
    out and said nowhere (a review); the agent's own replaced fact is its own doing."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: the Hilton"), said("dinner: at seven")])
        await b.add_items([said("dinner: at eight")])
        [hilton] = [i.id for i in team[0].visible() if i.text == "hotel: the Hilton"]
        team[0].revoke([hilton], "The Hilton cancelled our booking.")
        b.depart()
        return await b.get_items()

    items = run(scenario())

    assert texts(items)[1:] == ["dinner: at eight"]
    assert "- hotel: the Hilton (revoked: The Hilton cancelled our booking.)" in texts(items)[0]
    assert "dinner: at seven" not in texts(items)[0]


def test_a_fact_the_departure_left_out_is_listed_and_the_history_read(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Its premise fell before the departure: it is no item of the return's C, and every
    read of the session raised ``KeyError`` (a probe)."""
    a_session, _ = sessions(team, tmp_path)
    b = team[1]
    member_states(b, "p", "The hotel is the Ritz.")
    on_p = ItemDraft(id="x", text="Dinner at the Ritz at eight.", depends_on=frozenset({"p"}))
    b.record([Assert(id=new_id("e"), at=b.clock(), author="b", item=on_p)])
    b.revoke({"p"}, "the Ritz is full")
    a_session.depart()

    items = run(a_session.get_items())

    fell = "a premise it rests on fell before the departure"
    assert f"- Dinner at the Ritz at eight. (premise_invalidated: {fell})" in texts(items)[0]


def test_a_fact_the_agent_said_for_another_roles_eyes_only_stays_out_of_its_history(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """A return holds it unreadable to the agent: it was shown until a teammate revoked
    it, then hidden, then shown again after the next return (a review)."""
    db = tmp_path / "sessions.db"

    def booker_only(item: TResponseInputItem) -> Learned | None:
        fact = assistant_messages(item)
        if fact is None or not fact.text.startswith("code:"):
            return fact
        return Learned(fact.text, annotations={"readers": {"principals": "*", "roles": ["booker"]}})

    a = ReadmitSession(SQLiteSession("a", db), team[0], learned=booker_only)

    async def reads() -> list[list[str]]:
        a.depart()
        await a.get_items()
        await a.add_items([said("code: the door code is 42"), said("dinner: at eight")])
        seen = [texts(await a.get_items())[1:]]
        team[1].revoke([i.id for i in team[1].visible() if i.text.startswith("code:")], "wrong")
        seen.append(texts(await a.get_items())[1:])
        a.depart()
        seen.append(texts(await a.get_items())[1:])
        return seen

    assert run(reads()) == [["dinner: at eight"]] * 3


def test_facts_the_agent_popped_itself_before_departing_are_not_listed(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Each draft it took back was listed in every message (a review)."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        for n in range(5):
            await b.add_items([said(f"draft {n}: maybe")])
            await b.pop_item()
        await b.add_items([said("hotel: the Hilton")])
        b.depart()
        return await b.get_items()

    items = run(scenario())

    assert texts(items)[1:] == ["hotel: the Hilton"]
    assert "draft" not in texts(items)[0]


def test_a_fact_the_agent_states_again_after_its_return_is_shown(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Its own fresh statement: the text was hidden as the revoked fact's (a probe)."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("train: the 9:00 is booked")])
        b.depart()
        [train] = [i.id for i in team[0].visible()]
        team[0].revoke([train], "The 9:00 was cancelled.")
        await b.get_items()
        await b.add_items([asked("I rebooked it. Confirm?"), said("train: the 9:00 is booked")])
        return await b.get_items()

    items = run(scenario())

    assert texts(items)[1:] == [
        "train: the 9:00 is booked",
        "I rebooked it. Confirm?",
        "train: the 9:00 is booked",
    ]
    assert "Left out of your history" not in texts(items)[0]
    assert [i.text for i in team[1].visible()] == ["train: the 9:00 is booked"]


def test_a_fact_withdrawn_by_a_teammate_while_present_is_left_out_at_the_next_read(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """b has returned and works on; a revokes b's fact through readmit (over HTTP, say)."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> tuple[list[TResponseInputItem], list[TResponseInputItem]]:
        await b.add_items([said("hotel: the Hilton"), said("dinner: at eight")])
        b.depart()
        served = await b.get_items()
        [hilton] = [i.id for i in team[0].visible() if i.text == "hotel: the Hilton"]
        team[0].revoke([hilton], "The Hilton cancelled our booking.")
        return served, await b.get_items()

    served, later = run(scenario())

    assert texts(served)[1:] == ["hotel: the Hilton", "dinner: at eight"]
    assert texts(later)[1:] == ["dinner: at eight"]
    note = texts(later)[0]
    assert "hotel: the Hilton (revoked: The Hilton cancelled our booking.)" in note
    assert "- hotel: the Hilton\n" not in note  # no longer among the facts to rely on


def test_a_fact_the_agent_itself_withdraws_through_readmit_is_left_out_at_the_next_read(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """b revokes its own fact through readmit (over HTTP, say), not its session: the
    session served it until b's next return, where a teammate's revocation shows at once."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: the Hilton"), said("dinner: at eight")])
        b.depart()
        await b.get_items()
        [hilton] = [i.id for i in team[1].visible() if i.text == "hotel: the Hilton"]
        team[1].revoke([hilton], "We cancelled the Hilton.")
        return await b.get_items()

    later = run(scenario())

    assert texts(later)[1:] == ["dinner: at eight"]
    assert "hotel: the Hilton (revoked: We cancelled the Hilton.)" in texts(later)[0]


def test_a_fact_popped_from_the_agents_own_session_is_no_longer_one_to_rely_on(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """The message listed it among the facts to rely on, though the agent had popped it."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: the Hilton"), said("dinner: at eight")])
        b.depart()
        await b.get_items()
        await b.pop_item()
        return await b.get_items()

    note, *rest = texts(run(scenario()))

    assert rest == ["hotel: the Hilton"]
    assert "- dinner: at eight\n" not in note
    assert "dinner: at eight (revoked: b withdrew it from its session)" in note


def test_before_the_first_return_the_history_is_the_inner_sessions(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = sessions(team, tmp_path)

    async def scenario() -> tuple[list[TResponseInputItem], list[TResponseInputItem]]:
        await b.add_items([asked("Where do we stay?"), said("hotel: the Hilton")])
        await a.add_items([said("hotel: the Marriott")])
        return await b.get_items(), await b.inner.get_items()

    wrapped, inner = run(scenario())

    assert wrapped == inner
    assert texts(wrapped) == ["Where do we stay?", "hotel: the Hilton"]


def test_a_withheld_return_says_so_and_leaves_out_every_judged_fact(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([asked("Where do we stay?"), said("hotel: the Hilton")])
        b.depart()
        team[0].record([unmet_obligation(team[0], role="booker")])
        return await b.get_items()

    items = run(scenario())

    assert texts(items)[1:] == ["Where do we stay?"]
    assert "(decision 1, blocked)" in texts(items)[0]
    assert "No view was issued" in texts(items)[0]
    assert "hotel: the Hilton (" in texts(items)[0]


def unmet_obligation(author: Member, role: str) -> OpenObligation:
    """An obligation for ``role`` that requires a dependency no item supports."""
    draft = ObligationDraft(
        id=new_id("o"),
        text="Confirm the budget before booking",
        role=role,
        requires=frozenset({"budget"}),
        critical=frozenset({"budget"}),
        frontier_id=new_id("f"),
        frontier_text="Budget not yet confirmed",
    )
    return OpenObligation(id=new_id("e"), at=author.clock(), author=author.agent, obligation=draft)


def test_by_default_only_assistant_messages_become_facts(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    session = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0])
    output: TResponseInputItem = {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [{"type": "output_text", "text": "The museum opens at ten", "annotations": []}],
    }

    run(session.add_items([asked("When does the museum open?"), output]))

    assert [(i.text, i.key) for i in team[0].visible()] == [("The museum opens at ten", None)]


def test_clear_session_forgets_the_conversation_and_records_nothing(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, _ = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await a.add_items([said("hotel: the Hilton")])
        await a.clear_session()
        return await a.get_items()

    assert run(scenario()) == []
    assert [i.text for i in team[0].visible()] == ["hotel: the Hilton"]


def test_the_wrapper_is_a_session(team: tuple[Member, Member], tmp_path: Path) -> None:
    session: Session = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0])

    assert isinstance(session, Session)
    assert session.session_id == "a"


def test_a_runner_on_a_returning_agents_session_sends_the_view_first(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b = sessions(team, tmp_path)
    model = ScriptedModel([[assistant_message("hotel: the Hilton")], [assistant_message("ok")]])
    booker = SdkAgent(name="booker", model=model)

    async def scenario() -> None:
        await Runner.run(booker, "Where do we stay?", session=b, run_config=OFFLINE)
        b.depart()
        await a.add_items([said("hotel: the Marriott")])
        await Runner.run(booker, "Book it.", session=b, run_config=OFFLINE)

    run(scenario())

    sent = model.last_call.input if model.last_call is not None else []
    assert [item.get("role") for item in sent] == ["developer", "user", "user"]
    assert "hotel: the Hilton (stale_or_superseded" in message_text(sent[0])
    assert sorted(i.text for i in team[1].visible()) == ["hotel: the Marriott", "ok"]


def test_the_example_runs_offline_and_explains_the_removal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runpy.run_path(str(EXAMPLES / "agents_sdk_team.py"), run_name="__main__")

    out = capsys.readouterr().out
    assert "revoked" in out
    assert "Hilton" in out


ANNOTATED: dict[str, dict[str, Any]] = {
    "hotel: the Hilton": {"supports": ["budget"]},
    "pickup: 8:00 from the Hilton": {"depends_on": [{"key": "hotel"}]},
}


def annotated(item: TResponseInputItem) -> Learned | None:
    """`topical`, with the annotations the application states for some facts."""
    fact = topical(item)
    return None if fact is None else replace(fact, annotations=ANNOTATED.get(fact.text))


def test_annotations_from_learned_are_recorded_and_a_premise_by_key_propagates(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0], learned=annotated)
    b = ReadmitSession(SQLiteSession("b", tmp_path / "s.db"), team[1], learned=annotated)

    async def scenario() -> list[TResponseInputItem]:
        await a.add_items([said("hotel: the Hilton")])
        await b.add_items([said("pickup: 8:00 from the Hilton")])
        b.depart()
        await a.pop_item()
        return await b.get_items()

    items = run(scenario())

    assert "pickup: 8:00 from the Hilton (premise_invalidated" in texts(items)[0]
    assert texts(items)[1:] == []


def test_a_supports_annotation_covers_an_obligation(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0], learned=annotated)
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        b.depart()
        team[0].record([unmet_obligation(team[0], role="booker")])
        await a.add_items([said("hotel: the Hilton")])
        return await b.get_items()

    assert "(decision 1, issued)" in texts(run(scenario()))[0]


@pytest.mark.parametrize(
    ("annotations", "error", "message"),
    [
        ({"supports": "budget"}, InvalidInput, "supports: Input should be a valid list"),
        ({"depends_on": [{"memory": "m1"}]}, InvalidInput, "a 'memory' reference is not"),
        ({"cites": ["no-such-evidence"]}, InvalidEvent, "cites missing evidence"),
    ],
)
def test_facts_readmit_refuses_leave_the_session_as_it_was(
    team: tuple[Member, Member],
    tmp_path: Path,
    annotations: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    def bad(item: TResponseInputItem) -> Learned | None:
        fact = topical(item)
        return None if fact is None else replace(fact, annotations=annotations)

    session = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0], learned=bad)
    run(session.add_items([asked("Where do we stay?")]))

    with pytest.raises(error, match=message):
        run(session.add_items([asked("And the pickup?"), said("hotel: the Hilton")]))

    assert texts(run(session.get_items())) == ["Where do we stay?"]
    assert team[0].visible() == []


def test_a_fact_resting_on_the_key_it_replaces_is_refused(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """It replaced the version it named as its premise: accepted, it rested on what it
    withdrew and was never shown again (a probe)."""

    def on_itself(item: TResponseInputItem) -> Learned | None:
        fact = topical(item)
        if fact is None or "Ritz" not in fact.text:
            return fact
        return replace(fact, annotations={"depends_on": [{"key": "hotel"}]})

    session = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0], learned=on_itself)
    run(session.add_items([said("hotel: the Hilton")]))

    with pytest.raises(InvalidInput, match=r"\{'key': 'hotel'\} names the key this statement"):
        run(session.add_items([said("hotel: the Ritz")]))

    assert texts(run(session.get_items())) == ["hotel: the Hilton"]
    assert [i.text for i in team[0].visible()] == ["hotel: the Hilton"]


def test_a_refused_add_beside_another_leaves_the_other_in_the_session_and_readmit(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """The refused call's items were taken back off the session's end: the other call's
    recorded fact went, the refused text stayed (a probe)."""
    session = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0], learned=topical)

    async def both() -> list[BaseException | None]:
        calls = session.add_items([said("bad\x00fact")]), session.add_items([said("train: 9:00")])
        return list(await asyncio.gather(*calls, return_exceptions=True))

    refused, added = run(both())

    assert isinstance(refused, InvalidEvent)
    assert added is None
    assert texts(run(session.inner.get_items())) == ["train: 9:00"]
    assert [i.text for i in team[0].visible()] == ["train: 9:00"]


class HeldCites(SQLiteSession):
    """Holds an add of a fact that cites, once written, until the test lets it go on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writing, self.go_on = threading.Event(), threading.Event()

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await SQLiteSession.add_items(self, items)
        if "cites" in message_text(items[0]):
            self.writing.set()
            await asyncio.to_thread(self.go_on.wait, 60)


def test_two_wrappers_of_one_conversation_take_turns_so_a_refused_add_takes_only_its_own(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Each wrapper's turn was its own: the refused add took the other's item off the
    session's end (a review: a wrapper made per request, or one used from two loops)."""

    def citing(item: TResponseInputItem) -> Learned | None:
        fact = topical(item)
        if fact is None or not fact.text.startswith("cites"):
            return fact
        return replace(fact, annotations={"cites": ["no-such-evidence"]})

    first, second = (HeldCites("conv", tmp_path / "s.db") for _ in range(2))
    a, b = (ReadmitSession(s, team[0], learned=citing) for s in (first, second))

    async def scenario() -> BaseException | None:
        refused = asyncio.ensure_future(a.add_items([said("cites: a receipt")]))
        await asyncio.to_thread(first.writing.wait, 60)
        other = asyncio.ensure_future(b.add_items([said("hotel: the Hilton")]))
        with contextlib.suppress(TimeoutError):  # it waits for its turn: only then ends here
            await asyncio.wait_for(asyncio.shield(other), 0.5)
        first.go_on.set()
        await other
        return (await asyncio.gather(refused, return_exceptions=True))[0]

    refusal = run(scenario())

    assert isinstance(refusal, InvalidEvent)
    assert texts(run(SQLiteSession("conv", tmp_path / "s.db").get_items())) == ["hotel: the Hilton"]
    assert [i.text for i in team[0].visible()] == ["hotel: the Hilton"]


def test_more_writes_at_once_than_the_loop_has_threads_all_land(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Each write waiting for its turn held a worker thread: past the pool's size, the one
    holding the turn never got one, and none landed (a review: 8 on two cores)."""
    session = ReadmitSession(SQLiteSession("a", tmp_path / "s.db"), team[0], learned=topical)

    async def many() -> None:
        writes = [session.add_items([said(f"fact {n}: noted")]) for n in range(40)]
        await asyncio.wait_for(asyncio.gather(*writes), 120)

    run(many())

    assert len(run(session.inner.get_items())) == 40
    assert len(team[0].visible()) == 40


class RefusingSession(SQLiteSession):
    """A session whose ``add_items`` fails (its disk full, say)."""

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        raise OSError("no space left on device")


def test_a_keyed_fact_the_session_refuses_replaces_nothing_in_readmit(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Recorded before the session refused it, it replaced the Hilton under its key for
    good (a review of recording first)."""
    inner = RefusingSession("a", tmp_path / "s.db")
    session = ReadmitSession(inner, team[0], learned=topical)
    run(SQLiteSession.add_items(inner, [said("hotel: the Hilton")]))
    team[0].record(
        [
            Assert(
                id=new_id("put"),
                at=team[0].clock(),
                author="a",
                item=ItemDraft(id=new_id("f"), text="hotel: the Hilton", key="hotel"),
            )
        ]
    )

    with pytest.raises(OSError, match="no space left"):
        run(session.add_items([said("hotel: the Marriott")]))

    assert [i.text for i in team[0].visible()] == ["hotel: the Hilton"]
    assert texts(run(inner.get_items())) == ["hotel: the Hilton"]


def timed_sessions(
    team: tuple[Member, Member], tmp_path: Path
) -> tuple[ReadmitSession, ReadmitSession, Ticking]:
    """`sessions` whose members share one `Ticking` clock (views last an hour)."""
    clock = Ticking()
    a, b = (Member(m.store, m.workspace, m.agent, m.signer, clock=clock) for m in team)
    db = tmp_path / "sessions.db"
    sa = ReadmitSession(SQLiteSession("a", db), a, learned=topical)
    return sa, ReadmitSession(SQLiteSession("b", db), b, learned=topical), clock


def test_an_expired_view_is_decided_afresh_on_the_next_read(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a, b, clock = timed_sessions(team, tmp_path)

    async def scenario() -> list[list[TResponseInputItem]]:
        await b.add_items([asked("Where do we stay?"), said("hotel: the Hilton")])
        b.depart()
        await a.add_items([said("dinner: at eight")])
        served = await b.get_items()
        await a.add_items([said("hotel: the Marriott, the Hilton was cancelled")])
        before = await b.get_items()  # a teammate's newer fact withdraws b's at once
        clock.at += timedelta(hours=1)
        renewed = await b.get_items()
        return [served, before, renewed, await b.get_items()]

    served, before, renewed, again = run(scenario())

    assert "(decision 1, issued)" in texts(served)[0]
    assert texts(served)[1:] == ["Where do we stay?", "hotel: the Hilton"]
    assert "(decision 1, issued)" in texts(before)[0]
    assert "- hotel: the Hilton (stale_or_superseded: replaced under its key" in texts(before)[0]
    assert texts(before)[1:] == ["Where do we stay?"]
    note = texts(renewed)[0]
    assert "(decision 2, issued)" in note
    assert "The view of decision 1 expired at 2026-05-01T09:00:" in note
    assert "this return was decided afresh" in note
    assert "- dinner: at eight" in note
    assert "hotel: the Hilton (stale_or_superseded" in note
    assert texts(renewed)[1:] == ["Where do we stay?"]
    assert again == renewed  # one fresh return, not one per read
    assert [(d.agent, d.outcome) for d in team[1].store.decisions("trip")] == [("b", "issued")] * 2


def test_a_withheld_return_does_not_expire(team: tuple[Member, Member], tmp_path: Path) -> None:
    a, b, clock = timed_sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([asked("Where do we stay?"), said("hotel: the Hilton")])
        b.depart()
        a.member.record([unmet_obligation(a.member, role="booker")])
        await b.get_items()
        clock.at += timedelta(hours=2)
        return await b.get_items()

    items = run(scenario())

    assert "(decision 1, blocked)" in texts(items)[0]
    assert "expired" not in texts(items)[0]
    assert texts(items)[1:] == ["Where do we stay?"]


# What a teammate does after the agent's return (a review of following the log)


def own_session(member: Member, tmp_path: Path, learned: Any = topical) -> ReadmitSession:
    return ReadmitSession(SQLiteSession(member.agent, tmp_path / "s.db"), member, learned=learned)


def test_the_developer_message_never_names_another_principals_withdrawn_fact(
    three: dict[str, Member], tmp_path: Path
) -> None:
    sb, sc = own_session(three["b"], tmp_path), own_session(three["c"], tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await sb.add_items([said("hotel: the Hilton")])
        sb.depart()
        await sc.add_items([said("PRIVATE-BEFORE: card 4111-1111")])  # in C; b may not read it
        await sb.get_items()
        await sc.add_items([said("PRIVATE-AFTER: passport X123")])
        await sc.pop_item()
        await sc.pop_item()
        return await sb.get_items()

    note = texts(asyncio.run(scenario()))[0]

    assert "PRIVATE" not in note


def test_a_teammates_withdrawn_copy_of_a_text_leaves_the_agents_own(
    three: dict[str, Member], tmp_path: Path
) -> None:
    sa = own_session(three["a"], tmp_path, assistant_messages)
    sb = own_session(three["b"], tmp_path, assistant_messages)

    async def scenario() -> list[TResponseInputItem]:
        await sb.add_items([said("Booked.")])
        await sa.add_items([said("Booked.")])
        sb.depart()
        await sb.get_items()
        await sa.pop_item()  # a withdraws its own "Booked."; b's stands
        return await sb.get_items()

    assert texts(asyncio.run(scenario()))[1:] == ["Booked."]


def test_a_teammates_keyed_supersede_withdraws_the_fact_as_the_store_does(
    three: dict[str, Member], tmp_path: Path
) -> None:
    sb = own_session(three["b"], tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        member_states(three["a"], "x1", "note: draft itinerary")
        await sb.add_items([said("hotel: the Hilton")])
        sb.depart()
        await sb.get_items()
        member_supersedes(
            three["a"], "x1", ItemDraft(id="x2", text="hotel: the Marriott", key="hotel")
        )
        return await sb.get_items()

    later = asyncio.run(scenario())

    assert not any(i.text == "hotel: the Hilton" for i in three["b"].visible())
    assert texts(later)[1:] == []


def test_another_principals_keyed_fact_takes_nothing_from_the_agent(
    three: dict[str, Member], tmp_path: Path
) -> None:
    sb, sc = own_session(three["b"], tmp_path), own_session(three["c"], tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await sb.add_items([said("hotel: the Hilton")])
        sb.depart()
        await sb.get_items()
        await sc.add_items([said("hotel: c's private hotel")])  # c may not read b's fact
        return await sb.get_items()

    later = asyncio.run(scenario())

    assert texts(later)[1:] == ["hotel: the Hilton"]
    assert "c's private" not in texts(later)[0]


class HeldSession(SQLiteSession):
    """A session whose writes go on in the background until the test lets them finish, as
    the SDK's own do in worker threads, which a cancelled caller does not stop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writing, self.go_on = asyncio.Event(), asyncio.Event()

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await self._held(SQLiteSession.add_items(self, items))

    async def pop_item(self) -> TResponseInputItem | None:
        return await self._held(SQLiteSession.pop_item(self))

    async def _held(self, write: Coroutine[Any, Any, T]) -> T:
        done = asyncio.ensure_future(write)  # not cancelled with the caller
        self.writing.set()
        await self.go_on.wait()
        return await asyncio.shield(done)


@pytest.mark.parametrize("write", ["add_items", "pop_item"])
def test_a_write_cancelled_while_the_session_writes_is_still_recorded(
    team: tuple[Member, Member], tmp_path: Path, write: str
) -> None:
    """The caller is cancelled (a timeout) while the session writes: readmit records the
    write before the cancellation is raised (before, a fact popped so stayed in force)."""
    inner = HeldSession("a", tmp_path / "sessions.db")
    a = ReadmitSession(inner, team[0], learned=topical)

    async def scenario() -> list[TResponseInputItem]:
        inner.go_on.set()
        await a.add_items([said("hotel: the Hilton")])
        inner.writing.clear()
        inner.go_on.clear()
        call = a.add_items([said("dinner: at eight")]) if write == "add_items" else a.pop_item()
        running = asyncio.ensure_future(call)
        await inner.writing.wait()
        running.cancel()
        await asyncio.sleep(0)
        inner.go_on.set()
        with pytest.raises(asyncio.CancelledError):
            await running
        return await inner.get_items()

    held = texts(run(scenario()))

    assert sorted(i.text for i in team[0].visible()) == sorted(held)
    assert held == {"add_items": ["hotel: the Hilton", "dinner: at eight"], "pop_item": []}[write]


def test_the_agents_own_supersede_over_http_takes_the_fact_out_of_its_history(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """The session holds the old fact; it was served, and the message listed it among the
    facts to rely on (a probe)."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: the Hilton")])
        b.depart()
        await b.get_items()
        [old] = [i.id for i in team[1].visible()]
        ritz = ItemDraft(id="http-ritz", text="hotel: the Ritz", key="hotel")
        member_supersedes(team[1], old, ritz)  # as an HTTP client of b's would
        return await b.get_items()

    items = run(scenario())

    assert texts(items)[1:] == []
    assert "- hotel: the Hilton (stale_or_superseded" in texts(items)[0]


def test_a_fact_a_teammates_return_finds_stale_while_present_is_left_out_at_the_next_read(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """b has returned and works on; a's return finds b's dinner stale once a revoked the
    hotel (a verdict binds every later return, any agent's): the session served it until
    b's next return."""
    _, b = sessions(team, tmp_path)

    async def scenario() -> list[TResponseInputItem]:
        await b.add_items([said("hotel: Sunrise Hotel is booked"), said("Dinner at Sunrise Hotel")])
        team[0].depart()
        b.depart()
        await b.get_items()
        [hotel] = [i.id for i in team[0].visible() if i.key == "hotel"]
        team[0].revoke([hotel], "The booking fell through.")
        assert texts(await b.get_items())[1:] == ["Dinner at Sunrise Hotel"]
        assert team[0].return_().decision.decided[-1].reason.value == "implicitly_invalidated"
        return await b.get_items()

    later = run(scenario())

    assert texts(later)[1:] == []
    assert (
        "Dinner at Sunrise Hotel (implicitly_invalidated: confirmed after your return"
        in (texts(later)[0])
    )
