"""A batch is recorded exactly as its events one at a time: same log, same projections, and
the same refusal (storing nothing) for the first event the store would refuse.

`readmit.store.writer` checks a batch against the stored state plus what the batch itself
wrote so far, and writes its rows together at the end; these properties pin that to the
event-at-a-time semantics on every backend.
"""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import T0
from conftest import BACKENDS, store_url
from readmit.canonical import canonical_json, digest
from readmit.errors import InvalidEvent
from readmit.events import Assert, Close, Event, Evidence, ItemDraft, Revoke, Supersede
from readmit.model import Agent
from readmit.store import WorkStateStore, open_store
from readmit.wire import event_to_wire

AGENTS = [
    Agent(id="A1", principal="p", role="ops"),
    Agent(id="A2", principal="p", role="dev"),
    Agent(id="B1", principal="q", role="ops"),
]
IDS = [f"i{n}" for n in range(6)]
KEYS = ["k0", "k1"]
SOURCES = ["s0", "s1"]

_author = st.sampled_from([a.id for a in AGENTS])
_draft = st.builds(
    lambda item, key, deps, cites, text, shared, hearsay: ItemDraft(
        id=item,
        text=text,
        key=key,
        depends_on=frozenset(deps),
        cites=frozenset(cites),
        principals=frozenset({"p", "q"}) if shared else None,
        unconfirmed=hearsay,
    ),
    st.sampled_from(IDS),
    st.none() | st.sampled_from(KEYS),
    st.lists(st.sampled_from(IDS), max_size=2),
    st.lists(st.sampled_from(SOURCES), max_size=1),
    st.sampled_from(["Alpha.", "Beta.", "Gamma."]),
    st.booleans(),
    st.booleans(),
)
_step = st.one_of(
    st.tuples(st.just("assert"), _author, _draft),
    st.tuples(st.just("supersede"), _author, st.sampled_from(IDS), _draft),
    st.tuples(st.just("revoke"), _author, st.sampled_from(IDS)),
    st.tuples(st.just("close"), _author, st.sampled_from(IDS)),
    st.tuples(st.just("evidence"), _author, st.sampled_from(SOURCES)),
)


def _events(steps: list[tuple[Any, ...]]) -> list[Event]:
    events: list[Event] = []
    for n, step in enumerate(steps):
        at, author = T0 + timedelta(seconds=n), step[1]
        eid = f"e{n % 9}"  # some event ids repeat: the store must refuse those
        match step[0]:
            case "assert":
                events.append(Assert(id=eid, at=at, author=author, item=step[2]))
            case "supersede":
                events.append(Supersede(id=eid, at=at, author=author, target=step[2], item=step[3]))
            case "revoke":
                events.append(Revoke(id=eid, at=at, author=author, target=step[2], why="gone"))
            case "close":
                events.append(Close(id=eid, at=at, author=author, target=step[2]))
            case _:
                events.append(
                    Evidence(id=eid, at=at, author=author, source_id=step[2], text="Report.")
                )
    return events


def _state(store: WorkStateStore) -> dict[str, list[tuple[Any, ...]]]:
    db = store.conn  # type: ignore[attr-defined]
    queries = {
        "events": "SELECT epoch, id, at, author, op, body, digest FROM events ORDER BY epoch",
        "items": "SELECT id, epoch, key, body FROM items ORDER BY id",
        "withdrawn": "SELECT id, status FROM withdrawn ORDER BY id",
        "names": "SELECT id, kind FROM names ORDER BY id",
        "evidence": "SELECT id, epoch, digest FROM evidence ORDER BY id",
    }
    return {name: [tuple(r) for r in db.execute(q).fetchall()] for name, q in queries.items()}


@contextmanager
def _fresh(backend: str) -> Iterator[WorkStateStore]:
    with tempfile.TemporaryDirectory() as tmp, store_url(backend, Path(tmp)) as url:
        store = open_store(url)
        try:
            store.create_workspace("ws", AGENTS)
            yield store
        finally:
            store.close()


def _one_at_a_time(
    store: WorkStateStore, events: list[Event]
) -> tuple[list[Event], tuple[int, str] | None]:
    """The events the store accepts one by one, and the first refusal (index, message)."""
    accepted: list[Event] = []
    refused: tuple[int, str] | None = None
    for n, event in enumerate(events):
        try:
            store.append("ws", [event])
        except InvalidEvent as exc:
            refused = refused or (n, str(exc))
            continue
        accepted.append(event)
    return accepted, refused


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40)
@given(steps=st.lists(_step, min_size=1, max_size=14))
def test_a_batch_stores_what_its_events_store_one_at_a_time(
    backend: str, steps: list[tuple[Any, ...]]
) -> None:
    events = _events(steps)
    with _fresh(backend) as single:
        accepted, refused = _one_at_a_time(single, events)
        expected = _state(single)
    with _fresh(backend) as batched:
        if accepted:
            batched.append("ws", accepted)
        assert _state(batched) == expected
    logged = [(body, sha) for *_, body, sha in expected["events"]]
    assert logged == [(canonical_json(w), digest(w)) for w in map(event_to_wire, accepted)]
    if refused is None:
        return
    n, message = refused
    prefix = [e for e in events[:n] if e in accepted]
    with _fresh(backend) as batched:
        with pytest.raises(InvalidEvent) as refusal:
            batched.append("ws", [*prefix, events[n]])
        said = str(refusal.value).replace("earlier in this batch", "in this workspace")
        assert said == message  # the same refusal: an id taken in the batch is said to be
        assert _state(batched)["events"] == []
