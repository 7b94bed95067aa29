"""Mem0 writes through readmit: ``infer=True`` adds, ``delete_all``/``reset``, annotations and
the write order, on real offline Mem0 banks (in-memory Qdrant, a local embedder and LLM).

The LLM is a deterministic `FactsLLM`, a subclass of Mem0's own ``LLMBase`` registered
with Mem0's ``LlmFactory``: every sentence of the user's new messages is one fact.
"""

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine, Iterator
from copy import deepcopy
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import mem0
import pytest
from mem0.llms.base import LLMBase
from mem0.memory.utils import parse_messages
from mem0.utils.factory import LlmFactory

from builders import KEY
from readmit.admission.decision import Issued
from readmit.bench.backends import mem0_bank
from readmit.clock import now
from readmit.errors import Forbidden, InvalidEvent, InvalidInput, StoreError
from readmit.events import ObligationDraft, OpenObligation
from readmit.integrations.corrections import owing
from readmit.integrations.mem0 import AsyncReadmitMemory, ReadmitMemory, bulk, item_id
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")

TRIP = {"user_id": "trip"}


class FactsLLM(LLMBase):  # type: ignore[misc]  # mem0 ships no types
    """Mem0's LLM interface, offline: each sentence of the new user messages is a fact.

    With ``decisions`` set, answers them instead (what an ``EventfulMemory`` carries out).
    """

    decisions: list[dict[str, Any]] | None = None

    def generate_response(
        self,
        messages: list[dict[str, str]],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> str:
        if self.decisions is not None:
            return json.dumps({"memory": self.decisions})
        prompt = messages[-1]["content"]
        new = prompt.split("## New Messages\n", 1)[1].split("\n\n## ", 1)[0]
        said = " ".join(line[6:] for line in new.splitlines() if line.startswith("user: "))
        facts = [s.strip().rstrip(".") + "." for s in said.split(". ") if s.strip()]
        return json.dumps({"memory": [{"text": fact} for fact in facts]})


LlmFactory.register_provider("readmit-facts", f"{FactsLLM.__module__}.FactsLLM")


def facts_llm() -> FactsLLM:
    llm = LlmFactory.create("readmit-facts", {"model": "facts"})
    assert isinstance(llm, FactsLLM)
    return llm


class EventfulMemory(mem0.Memory):  # type: ignore[misc]  # mem0 ships no types
    """Mem0 whose ``infer=True`` add carries out its LLM's ADD, UPDATE and DELETE decisions.

    What Mem0's add did before 2.0 (2.2's extraction only adds), done with Mem0's own
    ``_create_memory``, ``_update_memory`` and ``_delete_memory``, reported in its shape.
    """

    def _add_to_vector_store(
        self, messages: Any, metadata: Any, filters: Any, infer: bool, prompt: Any = None
    ) -> list[dict[str, Any]]:
        if not infer:
            return list(super()._add_to_vector_store(messages, metadata, filters, infer, prompt))
        asked = [{"role": "user", "content": parse_messages(messages)}]
        out = []
        for d in json.loads(self.llm.generate_response(messages=asked))["memory"]:
            if d["event"] == "ADD":
                vectors = {d["text"]: self.embedding_model.embed(d["text"], "add")}
                made = self._create_memory(d["text"], vectors, deepcopy(metadata))
                out.append({"id": made, "memory": d["text"], "event": "ADD"})
            elif d["event"] == "UPDATE":
                self._update_memory(d["id"], d["text"], {}, None)
                out.append({"id": d["id"], "memory": d["text"], "event": "UPDATE"})
            else:
                self._delete_memory(d["id"])
                out.append({"id": d["id"], "memory": d.get("text", ""), "event": "DELETE"})
        return out


class FailingMemory(mem0.Memory):  # type: ignore[misc]  # mem0 ships no types
    """A real Mem0 ``Memory`` whose writes raise for a text with ``FAIL`` in it, and that
    deletes one memory, then fails to delete any other, when ``fail_bulk`` is set."""

    fail_bulk = False
    deleted = 0

    def _create_memory(self, data: str, *args: Any, **kwargs: Any) -> str:
        if "FAIL" in data:
            raise OSError("the vector store is full")
        return str(super()._create_memory(data, *args, **kwargs))

    def _delete_memory(self, memory_id: str, existing_memory: Any = None) -> str:
        if self.fail_bulk and self.deleted:
            raise OSError("the vector store went away")
        self.deleted += 1
        return str(super()._delete_memory(memory_id, existing_memory))


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


def bank(tmp_path: Path, collection: str = "team", cls: type | None = None) -> Any:
    memory = mem0_bank.bank(tmp_path, collection, memory_class=cls)
    memory.llm = facts_llm()
    return memory


def ops(member: Member) -> list[str]:
    return [r.event.op for r in member.store.events("trip")]


def texts(result: dict[str, Any]) -> list[str]:
    return sorted(m["memory"] for m in result["results"])


def add(memory: Any, text: str, **metadata: Any) -> str:
    result = memory.add(text, user_id="trip", infer=False, metadata=metadata or None)
    return str(result["results"][0]["id"])


def test_an_inferring_add_records_exactly_the_facts_mem0_added(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    b.depart()

    added = a.add(
        "We moved the team to the Riverside Hotel. The pickup is at 8:30.",
        user_id="trip",
        metadata={"_readmit": {"supports": ["d-hotel"]}},
    )

    rows = added["results"]
    assert sorted(r["memory"] for r in rows) == [
        "The pickup is at 8:30.",
        "We moved the team to the Riverside Hotel.",
    ]
    items = {i.id: i for i in team[0].visible()}
    assert {items[item_id(r["id"], 1)].text for r in rows} == {r["memory"] for r in rows}
    assert all(items[item_id(r["id"], 1)].supports == {"d-hotel"} for r in rows)
    assert ops(team[0]) == ["assert", "assert"]
    assert texts(b.get_all(filters=TRIP)) == sorted(r["memory"] for r in rows)


def test_an_inferring_add_that_mem0_deduplicates_records_nothing(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    a = ReadmitMemory(bank(tmp_path), team[0])
    a.add("The pickup is at 8:30.", user_id="trip")

    again = a.add("The pickup is at 8:30.", user_id="trip")

    assert again["results"] == []
    assert ops(team[0]) == ["assert"]


def test_update_and_delete_events_of_an_add_supersede_and_revoke(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path, cls=EventfulMemory)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    pickup = add(a, "The pickup is at 8:00.")
    ferry = add(a, "The ferry runs hourly.")
    b.depart()
    shared.llm.decisions = [
        {"event": "UPDATE", "id": pickup, "text": "The pickup is at 8:30."},
        {"event": "DELETE", "id": ferry},
        {"event": "ADD", "text": "Dinner is at nine."},
    ]

    added = a.add("Pickup moved, no ferry, dinner at nine.", user_id="trip")
    result = b.get_all(filters=TRIP)

    assert [r["event"] for r in added["results"]] == ["UPDATE", "DELETE", "ADD"]
    assert ops(team[0]) == ["assert", "assert", "supersede", "revoke", "assert"]
    assert texts(result) == ["Dinner is at nine.", "The pickup is at 8:30."]
    assert item_id(pickup, 2) in {i.id for i in team[1].admitted() or []}


def test_delete_all_revokes_every_memory_it_removed_and_names_the_call(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    add(a, "The pickup is at 8:00.")
    add(a, "The ferry runs hourly.")
    kept = a.add("Call the office.", user_id="office", infer=False)["results"][0]["id"]
    b.depart()

    a.delete_all(user_id="trip")
    decided = b.search("pickup", filters={"user_id": "office"})

    whys = {r.event.why for r in team[0].store.events("trip") if r.event.op == "revoke"}
    assert whys == {"delete_all(user_id='trip') removed it from Mem0 (a)"}
    assert ops(team[0]).count("revoke") == 2
    assert [i.id for i in team[1].visible()] == [item_id(kept, 1)]
    assert decided["readmit"]["outcome"] == "issued"


def test_reset_revokes_the_banks_memories_and_no_other_banks(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    mine = ReadmitMemory(bank(tmp_path, "mine"), team[0])
    theirs = ReadmitMemory(bank(tmp_path, "theirs"), team[1])
    add(mine, "The pickup is at 8:00.")
    other = add(theirs, "The ferry runs hourly.")

    mine.reset()

    (why,) = {r.event.why for r in team[0].store.events("trip") if r.event.op == "revoke"}
    assert why == "reset() removed it from Mem0 (a)"
    assert [i.id for i in team[0].visible()] == [item_id(other, 1)]


def test_a_delete_all_that_fails_part_way_revokes_what_it_removed(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path, cls=FailingMemory)
    a = ReadmitMemory(shared, team[0])
    add(a, "The pickup is at 8:00.")
    add(a, "The ferry runs hourly.")
    shared.fail_bulk, shared.deleted = True, 0

    with pytest.raises(OSError, match="went away"):
        a.delete_all(user_id="trip")

    assert ops(team[0]) == ["assert", "assert", "revoke"]
    assert len(team[0].visible()) == 1
    assert len(shared.get_all(filters=TRIP)["results"]) == 1


@pytest.mark.parametrize("call", ["delete_all", "reset"])
def test_a_bulk_delete_that_would_remove_another_principals_memory_is_refused(
    three: dict[str, Member], tmp_path: Path, call: str
) -> None:
    """b may not read c's card in readmit, and a bulk delete of the bank they share would
    remove it: refused before Mem0 is called, as for a delete by id (before, Mem0 removed
    it, and readmit kept c's item, with no memory behind it)."""
    shared = bank(tmp_path)
    mb, mc = ReadmitMemory(shared, three["b"]), ReadmitMemory(shared, three["c"])
    card = add(mc, "C-PRIVATE: card 4111")
    add(mb, "The flight leaves on Monday.")
    elsewhere = mb.add("Call the office.", user_id="office", infer=False)["results"][0]["id"]

    with pytest.raises(Forbidden, match=rf"^{call}\(.*\) would remove 1 memory .*not changed$"):
        mb.delete_all(user_id="trip") if call == "delete_all" else mb.reset()

    assert shared.get(card) is not None
    assert len(shared.get_all(filters=TRIP)["results"]) == 2
    assert [i.text for i in three["c"].visible()] == ["C-PRIVATE: card 4111"]
    mb.delete_all(user_id="office")  # a scope that holds none of c's memories
    assert shared.get(elsewhere) is None


class AddingMemory(mem0.Memory):  # type: ignore[misc]  # mem0 ships no types
    """A real Mem0 ``Memory`` that runs ``meanwhile`` once, as it deletes its first memory
    (given its id): another agent's write landing while a ``delete_all`` is under way."""

    meanwhile: Any = None

    def _delete_memory(self, memory_id: str, existing_memory: Any = None) -> str:
        if (run := self.meanwhile) is not None:
            self.meanwhile = None
            run(memory_id)
        return str(super()._delete_memory(memory_id, existing_memory))


def test_a_memory_added_while_a_bulk_delete_is_under_way_stays(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """c's private memory, added as b's ``delete_all`` deletes, is not removed: exactly what
    Mem0 listed, checked, is deleted (before, Mem0's own ``delete_all`` listed again after
    each batch and removed it, and readmit kept c's item with no memory behind it)."""
    shared = bank(tmp_path, cls=AddingMemory)
    mb, mc = ReadmitMemory(shared, three["b"]), ReadmitMemory(shared, three["c"])
    add(mb, "The flight leaves on Monday.")
    late: list[str] = []
    shared.meanwhile = lambda _: late.append(add(mc, "C-PRIVATE: card 4111"))

    mb.delete_all(user_id="trip")

    assert len(late) == 1
    assert shared.get(late[0]) is not None
    assert [m["id"] for m in shared.get_all(filters=TRIP)["results"]] == late
    assert [i.text for i in three["c"].visible()] == ["C-PRIVATE: card 4111"]
    assert three["b"].visible() == []


@pytest.mark.parametrize("meanwhile", ["delete", "update"])
def test_a_teammates_write_during_a_bulk_delete_leaves_nothing_behind(
    team: tuple[Member, Member], tmp_path: Path, meanwhile: str
) -> None:
    """b deletes or updates the other memory while a's ``delete_all`` runs: every memory is
    gone and every item revoked (a review's finding: the delete of one already gone raised,
    the rest stayed in Mem0, and the revocation of items read before was refused whole)."""
    shared = bank(tmp_path, cls=AddingMemory)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    ids = [add(a, "The pickup is at 8:00."), add(a, "The ferry runs hourly.")]

    def teammate(first: str) -> None:
        other = next(m for m in ids if m != first)
        b.delete(other) if meanwhile == "delete" else b.update(other, "The ferry runs at 9.")

    shared.meanwhile = teammate
    a.delete_all(user_id="trip")

    assert shared.get_all(filters=TRIP)["results"] == []
    assert team[0].visible() == []


def test_a_bulk_delete_of_a_memory_readmit_holds_no_record_of_is_refused(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Added to Mem0 around readmit (or being added now): not removed unseen."""
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])
    add(a, "The pickup is at 8:00.")
    shared.add("Added around readmit.", user_id="trip", infer=False)

    with pytest.raises(Forbidden, match=r"would remove 1 memory readmit holds no record of"):
        a.delete_all(user_id="trip")

    assert len(shared.get_all(filters=TRIP)["results"]) == 2
    assert ops(team[0]) == ["assert"]


def test_a_bulk_delete_lists_past_its_first_page(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, "PAGE", 2)
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])
    for n in range(9):
        add(a, f"Note {n}.")

    assert a.delete_all(user_id="trip") == {"message": "Memories deleted successfully!"}

    assert shared.get_all(filters=TRIP)["results"] == []
    assert ops(team[0]).count("revoke") == 9


def test_a_bulk_delete_with_no_filter_is_refused_as_mem0_refuses_it(
    three: dict[str, Member], tmp_path: Path
) -> None:
    """A ``ValueError``, as Mem0's own, before the check of what it would remove (which
    answered ``Forbidden`` where a hidden memory existed, a review's finding)."""
    shared = bank(tmp_path)
    mb, mc = ReadmitMemory(shared, three["b"]), ReadmitMemory(shared, three["c"])
    card = add(mc, "C-PRIVATE: card 4111")

    with pytest.raises(ValueError, match="delete_all needs user_id, agent_id or run_id"):
        mb.delete_all()

    assert shared.get(card) is not None


def test_the_async_bulk_deletes_refuse_another_principals_memory_as_the_sync_ones(
    three: dict[str, Member], tmp_path: Path
) -> None:
    async def scenario() -> list[str]:
        shared = mem0_bank.bank(tmp_path, "team", asynchronous=True)
        mb, mc = AsyncReadmitMemory(shared, three["b"]), AsyncReadmitMemory(shared, three["c"])
        await mc.add("C-PRIVATE: card 4111", user_id="trip", infer=False)
        said = []
        for call in (lambda: mb.delete_all(user_id="trip"), mb.reset):
            with pytest.raises(Forbidden) as refused:
                await call()
            said.append(str(refused.value).split(" would")[0])
        return said

    assert asyncio.run(scenario()) == ["delete_all(user_id='trip')", "reset()"]
    assert [i.text for i in three["c"].visible()] == ["C-PRIVATE: card 4111"]


def test_async_delete_all_and_reset_are_recorded(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """AsyncMemory's reset closes a Qdrant client it was given and cannot make a new one:
    it raises, and since the bank can no longer say what it holds, its memories are revoked."""

    async def scenario() -> None:
        shared = mem0_bank.bank(tmp_path, "team", asynchronous=True)
        a = AsyncReadmitMemory(shared, team[0])
        await a.add("The pickup is at 8:00.", user_id="trip", infer=False)
        await a.add("Call the office.", user_id="office", infer=False)
        await a.delete_all(user_id="trip")
        assert ops(team[0]) == ["assert", "assert", "revoke"]
        with pytest.raises(RuntimeError, match="QdrantLocal instance is closed"):
            await a.reset()

    asyncio.run(scenario())

    assert ops(team[0]) == ["assert", "assert", "revoke", "revoke"]
    assert team[0].visible() == []


@pytest.mark.parametrize(
    ("call", "held"),
    [("delete", "delete"), ("delete_all", "delete"), ("update", "update"), ("add", "insert")],
)
def test_an_async_write_cancelled_while_mem0_writes_is_still_recorded(
    team: tuple[Member, Member], tmp_path: Path, call: str, held: str
) -> None:
    """The caller is cancelled (a timeout) while Mem0 writes in its worker thread, which goes
    on: readmit records the write before the cancellation is raised (a review: a cancelled
    ``delete_all`` left the deleted memory's item active, with nothing behind it)."""
    shared = mem0_bank.bank(tmp_path, "team", asynchronous=True)
    a = AsyncReadmitMemory(shared, team[0])

    async def scenario() -> list[str]:
        first = await a.add("The pickup is at 8:00.", user_id="trip", infer=False)
        memory = first["results"][0]["id"]
        writing, release = threading.Event(), threading.Event()
        real: Callable[..., Any] = getattr(shared.vector_store, held)

        def slow(*args: Any, **kwargs: Any) -> Any:  # Mem0 writes until the test lets it
            writing.set()
            release.wait(timeout=60)
            return real(*args, **kwargs)

        setattr(shared.vector_store, held, slow)
        writes: dict[str, Callable[[], Coroutine[Any, Any, Any]]] = {
            "delete": lambda: a.delete(memory),
            "delete_all": lambda: a.delete_all(user_id="trip"),
            "update": lambda: a.update(memory, "The pickup is at 9:00."),
            "add": lambda: a.add("The ferry runs hourly.", user_id="trip", infer=False),
        }
        running = asyncio.ensure_future(writes[call]())
        assert await asyncio.to_thread(writing.wait, 60)
        running.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await running
        return sorted(m["memory"] for m in (await shared.get_all(filters=TRIP))["results"])

    held_now = asyncio.run(scenario())
    assert sorted(i.text for i in team[0].visible()) == held_now
    assert (
        held_now
        == {
            "delete": [],
            "delete_all": [],
            "update": ["The pickup is at 9:00."],
            "add": ["The ferry runs hourly.", "The pickup is at 8:00."],
        }[call]
    )


def test_annotations_in_metadata_cover_an_obligation(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    b.depart()
    draft = ObligationDraft(
        id="o",
        text="Keep the booking current.",
        role="booker",
        requires=frozenset({"d-hotel"}),
        critical=frozenset({"d-hotel"}),
        frontier_id="f",
        frontier_text="Booking to confirm.",
    )
    team[0].record([OpenObligation(id="open", at=team[0].clock(), author="a", obligation=draft)])

    add(a, "Riverside Hotel is booked.", _readmit={"supports": ["d-hotel"], "kind": "constraint"})
    result = b.get_all(filters=TRIP)

    assert result["readmit"]["outcome"] == "issued"
    assert texts(result) == ["Riverside Hotel is booked."]


def test_a_premise_named_by_memory_invalidates_its_dependent(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    hotel = add(a, "Sunrise Hotel is booked.")
    add(b, "Pickup at 8:00 from the hotel.", _readmit={"depends_on": [{"memory": hotel}]})
    b.depart()

    a.delete(hotel)
    result = b.get_all(filters=TRIP)

    assert texts(result) == []
    reasons = {r["memory"]: r["reason"] for r in result["readmit"]["removed"]}
    assert reasons == {"Pickup at 8:00 from the hotel.": "premise_invalidated"}


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ({"supports": "d"}, "supports: Input should be a valid list"),
        ({"depends_on": [{"path": ["trip"]}]}, "a 'path' reference is not"),
        ({"depends_on": [{"memory": "no-such-memory"}]}, "names no active item"),
    ],
)
def test_bad_annotations_are_refused_before_mem0_writes(
    team: tuple[Member, Member], tmp_path: Path, annotations: dict[str, Any], message: str
) -> None:
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])

    with pytest.raises(InvalidInput, match=message):
        add(a, "Riverside Hotel is booked.", _readmit=annotations)

    assert shared.get_all(filters=TRIP)["results"] == []
    assert ops(team[0]) == []


def test_an_add_readmit_refuses_is_taken_back_out_of_mem0(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])

    with pytest.raises(InvalidEvent, match="cites missing evidence 'ev-none'"):
        add(a, "Riverside Hotel is booked.", _readmit={"cites": ["ev-none"]})

    assert shared.get_all(filters=TRIP)["results"] == []
    assert ops(team[0]) == []


def test_an_update_readmit_refuses_is_written_back(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a = ReadmitMemory(shared, team[0])
    hotel = add(a, "Sunrise Hotel is booked.", topic="hotel")

    with pytest.raises(InvalidEvent, match="cites missing evidence"):
        a.update(hotel, text="Riverside Hotel.", metadata={"_readmit": {"cites": ["x"]}})
    a.update(hotel, text="Sunrise Hotel is booked for two nights.")

    got = shared.get(hotel)
    assert got["memory"] == "Sunrise Hotel is booked for two nights."
    assert got["metadata"] == {"topic": "hotel", "_readmit": None}  # Mem0 cannot drop a key
    assert ops(team[0]) == ["assert", "supersede"]
    assert [i.text for i in team[0].visible()] == ["Sunrise Hotel is booked for two nights."]


FAILING_SECOND = [
    {"role": "user", "content": "The pickup is at 8:00."},
    {"role": "user", "content": "FAIL here."},
]
"""Two messages, the second of which `FailingMemory` fails to add."""


def test_when_mem0_fails_part_way_through_an_add_what_it_made_is_recorded(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path, cls=FailingMemory)
    a = ReadmitMemory(shared, team[0])

    with pytest.raises(OSError, match="is full"):
        a.add(
            [*FAILING_SECOND, {"role": "user", "content": "Never reached."}],
            user_id="trip",
            infer=False,
        )

    assert texts(shared.get_all(filters=TRIP)) == ["The pickup is at 8:00."]
    assert [i.text for i in team[0].visible()] == ["The pickup is at 8:00."]


def test_when_mem0_fails_part_way_and_readmit_cannot_record_both_errors_are_told(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only readmit's error came out, Mem0's lost (a probe); what Mem0 made is taken back."""
    shared = bank(tmp_path, cls=FailingMemory)
    a = ReadmitMemory(shared, team[0])

    def locked(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("database is locked")

    def locked_inside(*args: Any, **kwargs: Any) -> Any:
        try:
            raise TimeoutError("the lock was held for 30 s")
        except TimeoutError as waited:
            raise StoreError("database is locked") from waited

    with monkeypatch.context() as patched:
        patched.setattr(team[0].store, "append", locked)
        with pytest.raises(StoreError, match="database is locked") as raised:
            a.add(FAILING_SECOND, user_id="trip", infer=False)
        patched.setattr(team[0].store, "append", locked_inside)
        with pytest.raises(StoreError, match="database is locked") as own:
            a.add(FAILING_SECOND, user_id="trip", infer=False)

    assert isinstance(raised.value.__cause__, OSError)
    assert isinstance(own.value.__cause__, TimeoutError)  # readmit's own cause stays first
    assert "Mem0 had failed part-way" in own.value.__notes__[0]
    assert raised.value.__notes__ == [
        "Mem0 had failed part-way through the add first: OSError('the vector store is full')"
    ]
    assert texts(shared.get_all(filters=TRIP)) == []
    assert team[0].visible() == []


def test_a_memory_for_a_task_is_read_on_a_return_to_that_task(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    shared = bank(tmp_path)
    a, b = ReadmitMemory(shared, team[0]), ReadmitMemory(shared, team[1])
    add(b, "Riverside is booked.", _readmit={"task": "trip", "purposes": ["booking"]})
    add(b, "The budget is 900 EUR.", _readmit={"task": "budget"})
    b.depart("trip", "booking")

    add(a, "The train leaves at nine.")
    result = b.get_all(filters=TRIP)

    assert sorted(texts(result)) == ["Riverside is booked.", "The train leaves at nine."]
    reasons = {r["memory"]: r["reason"] for r in result["readmit"]["removed"]}
    assert reasons == {"The budget is 900 EUR.": "not_applicable"}


def test_an_update_by_a_wrapper_with_no_key_keeps_the_key_of_the_memory_it_updates(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """As an add's UPDATE does: ``update`` through a wrapper with no key of its own gave the
    new version no key, so the next memory under the key no longer replaced it."""
    shared = bank(tmp_path)
    keyed = ReadmitMemory(shared, team[0], key=lambda m: (m.get("metadata") or {}).get("topic"))
    pickup = add(keyed, "The pickup is at 8:00.", topic="pickup")

    ReadmitMemory(shared, team[0]).update(pickup, text="The pickup is at 8:30.")

    [item] = team[0].visible()
    assert (item.id, item.key) == (item_id(pickup, 2), "pickup")


def test_an_update_event_of_an_add_keeps_the_key_of_the_memory_it_updates(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """A wrapper with no key of its own carries the memory's key to its new version, as
    its versions keep it (`current_key`): the next memory under that key replaces it."""
    shared = bank(tmp_path, cls=EventfulMemory)
    keyed = ReadmitMemory(shared, team[0], key=lambda m: (m.get("metadata") or {}).get("topic"))
    pickup = add(keyed, "The pickup is at 8:00.", topic="pickup")
    shared.llm.decisions = [{"event": "UPDATE", "id": pickup, "text": "The pickup is at 8:30."}]

    ReadmitMemory(shared, team[0]).add("Pickup moved.", user_id="trip")

    [item] = team[0].visible()
    assert (item.id, item.key) == (item_id(pickup, 2), "pickup")


def test_an_update_event_of_an_add_keeps_the_memorys_expiration_date(
    team: tuple[Member, Member], tmp_path: Path
) -> None:
    """Mem0 keeps the date on the memory it updates: the new version ends when it does."""
    shared = bank(tmp_path, cls=EventfulMemory)
    memory = ReadmitMemory(shared, team[0])
    later = now().date() + timedelta(days=5)
    added = memory.add("The pickup is at 8:00.", user_id="trip", infer=False, expiration_date=later)
    pickup = str(added["results"][0]["id"])
    shared.llm.decisions = [{"event": "UPDATE", "id": pickup, "text": "The pickup is at 8:30."}]

    memory.add("Pickup moved.", user_id="trip")

    assert shared.get(pickup).get("expiration_date") == later.isoformat()
    [item] = team[0].visible()
    ends = datetime(later.year, later.month, later.day, tzinfo=UTC) + timedelta(days=1)
    assert (item.id, item.validity.valid_to) == (item_id(pickup, 2), ends)


def test_an_inferring_add_whose_delete_readmit_failed_to_record_owes_its_revocation(
    team: tuple[Member, Member], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mem0 carried out its model's DELETE; readmit failed to record the add: the deleted
    memory could only be named "cannot be restored", and the next return admitted it."""
    a, b = team
    shared = bank(tmp_path, cls=EventfulMemory)
    memory = ReadmitMemory(shared, a)
    ferry = add(memory, "The ferry runs hourly.")
    shared.llm.decisions = [{"event": "DELETE", "id": ferry}]
    real = a.store.append

    def down(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("SQLite: database is locked")

    monkeypatch.setattr(a.store, "append", down)
    with pytest.raises(StoreError) as failed:
        memory.add("No ferry any more.", user_id="trip")
    assert f"Mem0 deleted memory {ferry}; it cannot be restored" in failed.value.__notes__
    assert owing(a.store, "trip") == [
        f"memory {ferry}, changed in Mem0 by a write readmit did not record"
    ]
    monkeypatch.setattr(a.store, "append", real)
    b.depart()
    decision = b.return_().decision
    assert isinstance(decision, Issued)
    assert [i.text for i in decision.items] == []
