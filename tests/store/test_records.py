"""What the history reads of `readmit.store.records` answer, pinned where a mutation round
(helper, stop 60) found a change no other test saw: the order of the whole audit log, the
memories a decision names read a chunk at a time, and a bank's negative limit."""

import pytest

from builders import T0, logged
from readmit.errors import InvalidInput
from readmit.events import Assert, ItemDraft, RecordExperience
from readmit.model import Agent
from readmit.store import WorkStateStore

TEAM = [Agent(id=a, principal="p", role="r") for a in ("A1", "A2")]
BANK = ["m1", "m2", "m3", "m4", "m5"]


def _bank(store: WorkStateStore) -> None:
    """A1's bank of `BANK`, one epoch; A2's of one memory named as A1's first is."""
    store.create_workspace("ws", TEAM)
    item = ItemDraft(id="f", text="Room 12 is free.")
    store.append("ws", [Assert(id="e", at=T0, author="A1", item=item)])
    for agent, memory in [("A1", m) for m in BANK] + [("A2", "m1")]:
        event = f"x{agent}{memory}"
        said = RecordExperience(
            id=event, at=T0, agent=agent, experience_id=memory, text="Noted.", source="f"
        )
        store.record_experience("ws", said)


def test_the_whole_audit_log_is_listed_in_the_order_it_was_written(
    store: WorkStateStore,
) -> None:
    """Across workspaces, decisions come in the order they were logged, not interleaved by
    their numbers (each workspace numbers its own from 1)."""
    store.create_workspace("ws", TEAM)
    store.create_workspace("other", TEAM)
    for workspace in ("other", "other", "other", "ws", "ws"):
        store.record_decision(workspace, "A1", T0, 0, "issued", logged(workspace))

    listed = [(d.workspace, d.id) for d in store.decisions()]
    by_agent = [(d.workspace, d.id) for d in store.decisions(None, "A1", 2, 2)]

    assert listed == [("other", 1), ("other", 2), ("other", 3), ("ws", 1), ("ws", 2)]
    assert by_agent == [("other", 3), ("ws", 1)]


def test_a_negative_limit_of_a_bank_is_refused(store: WorkStateStore) -> None:
    """SQLite reads ``LIMIT -1`` as no limit at all: a page of -1 would be the whole bank."""
    _bank(store)

    with pytest.raises(InvalidInput, match="may not be negative"):
        store.experiences("ws", "A1", None, -1)
    with pytest.raises(InvalidInput, match="may not be negative"):
        store.experiences("ws", "A1", "m2", -1)
    assert store.experiences("ws", "A1", None, 0) == []


def test_only_the_memories_named_are_read_and_only_the_agents_own(store: WorkStateStore) -> None:
    """A decision's readmitted ids are read, not the rest of the bank, nor a teammate's
    memory of the same id."""
    _bank(store)

    named = store.experiences_named("ws", "A1", ["m4", "m2", "m9", "m2"])
    teammate = store.experiences_named("ws", "A2", ["m1", "m2"])

    assert sorted(named) == ["m2", "m4"]
    assert {e.agent for e in named.values()} == {"A1"}
    assert [(e.id, e.agent) for e in teammate.values()] == [("m1", "A2")]
    assert store.experiences_named("ws", "A1", []) == {}


def test_memories_named_past_one_chunk_are_all_read(
    store: WorkStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ids are read `readmit.store.rows.CHUNK` at a time (a statement's placeholders
    are bounded): every chunk's memories are found, the last one's and a full one's alike."""
    _bank(store)
    monkeypatch.setattr("readmit.store.records.CHUNK", 2)

    found = store.experiences_named("ws", "A1", [*BANK, "m1", "m9"])

    assert sorted(found) == BANK
    assert sorted(store.experiences_named("ws", "A1", BANK[:4])) == BANK[:4]  # two full chunks


def test_a_count_of_decisions_is_the_agents_own_in_its_workspace(store: WorkStateStore) -> None:
    """What the judge-ahead worker compares to see whether the audit log changed."""
    store.create_workspace("ws", TEAM)
    store.create_workspace("other", TEAM)
    for workspace, agent in [("ws", "A1"), ("ws", "A2"), ("ws", "A1"), ("other", "A1")]:
        store.record_decision(workspace, agent, T0, 0, "issued", logged(workspace, agent))

    counts = [store.decision_count(w, a) for w in ("ws", "other") for a in ("A1", "A2")]

    assert counts == [2, 1, 1, 0]
