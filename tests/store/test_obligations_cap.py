"""The cap on a principal's open obligations (`SqlStore.append`'s ``max_open``): counted in
the batch's own transaction, so concurrent batches cannot each pass it."""

import threading
from datetime import UTC, datetime

import pytest

from readmit.errors import InvalidInput
from readmit.events import ObligationDraft, OpenObligation, Resolve
from readmit.model import Agent
from readmit.store import SqlStore, WorkStateStore, open_store

AT = datetime(2026, 5, 1, 8, tzinfo=UTC)
TEAM = [
    *(Agent(id=f"a{n}", principal="org", role="ops") for n in range(4)),
    Agent(id="x", principal="other", role="partner"),
]


def opening(author: str, n: int, role: str = "ops") -> OpenObligation:
    draft = ObligationDraft(
        id=f"{author}-o{n}",
        text="Keep it running.",
        role=role,
        requires=frozenset({"d"}),
        critical=frozenset(),
        frontier_id=f"{author}-f{n}",
        frontier_text="Nothing yet.",
    )
    return OpenObligation(id=f"{author}-e{n}", at=AT, author=author, obligation=draft)


def test_a_batch_past_the_cap_stores_nothing_and_others_principals_are_their_own(
    store: WorkStateStore,
) -> None:
    store.create_workspace("w", TEAM)
    store.append("w", [opening("a0", n) for n in range(3)], max_open=3)

    with pytest.raises(InvalidInput, match="principal 'org' would hold 4 open obligations"):
        store.append("w", [opening("a1", 0)], max_open=3)
    store.append("w", [opening("x", 0, "partner")], max_open=3)  # another principal's own count
    store.append("w", [Resolve(id="r", at=AT, author="a1", target="a0-o0")], max_open=3)
    store.append("w", [opening("a1", 0)], max_open=3)  # resolving made room

    with pytest.raises(InvalidInput, match="would hold 4 open obligations"):
        store.append("w", [opening("a1", 1)], max_open=3)  # full again
    assert len(store.events("w")) == 6


def test_concurrent_batches_are_counted_one_after_another(store: SqlStore) -> None:
    store.create_workspace("w", TEAM)
    url = store.url
    refused: list[str] = []

    def open_many(author: str) -> None:
        own = open_store(url)  # a connection of its own, as another server's
        try:
            own.append("w", [opening(author, n) for n in range(3)], max_open=5)
        except InvalidInput:
            refused.append(author)
        finally:
            own.close()

    threads = [threading.Thread(target=open_many, args=(f"a{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)

    opened = [r for r in store.events("w") if isinstance(r.event, OpenObligation)]
    assert len(opened) == 3  # one batch fits; a second would pass 5
    assert len(refused) == 3
