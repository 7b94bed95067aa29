"""What a return reads of the log before its departure: everything, or only what can withdraw.

A verifier that judges no news (the built-in one) is shown only withdrawals, so the store
reads and parses only the events that can withdraw an item: the filter in SQL must keep
every one of them, on both stores, and may leave out the assert of a key no earlier item
held.
"""

from datetime import datetime, timedelta

from builders import T0
from readmit.events import (
    Assert,
    Close,
    Evidence,
    ItemDraft,
    ReturnRequest,
    Revoke,
    Supersede,
)
from readmit.model import Agent
from readmit.store import WorkStateStore

AGENTS = [Agent(id="A1", principal="p", role="ops"), Agent(id="A2", principal="p", role="dev")]


def _t(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def _draft(item: str, key: str | None = None) -> ItemDraft:
    return ItemDraft(id=item, text=f"Fact {item}.", key=key)


def test_a_history_without_news_holds_exactly_the_events_that_can_withdraw(
    store: WorkStateStore,
) -> None:
    store.create_workspace("ws", AGENTS)
    store.append(
        "ws",
        [
            Assert(id="e1", at=_t(1), author="A2", item=_draft("a", key="k")),
            Assert(id="e2", at=_t(2), author="A2", item=_draft("b")),
            Evidence(id="e3", at=_t(3), author="A2", source_id="s", text="A receipt."),
            Assert(id="e4", at=_t(4), author="A2", item=_draft("a2", key="k")),
            Revoke(id="e5", at=_t(5), author="A2", target="b", why="gone"),
            Assert(id="e6", at=_t(6), author="A2", item=_draft("c")),
            Supersede(id="e7", at=_t(7), author="A2", target="c", item=_draft("c2")),
            Assert(id="e8", at=_t(8), author="A2", item=_draft("d")),
            Close(id="e9", at=_t(9), author="A2", target="d"),
            Assert(id="e10", at=_t(10), author="A2", item=_draft("a3", key="k")),
            Assert(id="e11", at=_t(11), author="A2", item=_draft("f", key="j")),
        ],
    )
    store.depart("ws", "A1", T0 + timedelta(minutes=12))
    request = ReturnRequest(id="r", at=T0 + timedelta(hours=1), agent="A1", task="t", purpose="p")
    ctx = store.return_context("ws", request)
    assert ctx.history is not None

    everything = ctx.history(0, True)
    withdrawing = ctx.history(0, False)

    assert [r.event.id for r in everything.events] == [f"e{n}" for n in range(1, 12)]
    # e1 and e11 assert the first item with their key: they replace nothing, so they are
    # not read. e10's key was held before the window below, by e1's and e4's items.
    assert [r.event.id for r in withdrawing.events] == ["e4", "e5", "e7", "e9", "e10"]
    # The same items, in the same order, but for f: only e11, which was not read, names it.
    assert withdrawing.items == tuple(i for i in everything.items if i.id != "f")
    assert {i.id for i in withdrawing.items} == {"a", "a2", "a3", "b", "c", "d"}
    assert ctx.history(4, False).events == withdrawing.events[1:]


def test_a_contexts_items_come_in_one_order_on_every_backend(store: WorkStateStore) -> None:
    """D_a's items by id, then the later ones by epoch: the order of a decision's
    exclusions, which must not depend on the backend or its query plan (PostgreSQL moves
    a row it updates, here the status of the revoked and the replaced items)."""
    store.create_workspace("other", AGENTS)  # enough rows for a plan that reads the heap
    store.append(
        "other",
        [Assert(id=f"o{n}", at=_t(n), author="A2", item=_draft(f"o{n}")) for n in range(3000)],
    )
    store.create_workspace("ws", AGENTS)
    first = [Assert(id=f"e{n}", at=_t(n), author="A2", item=_draft(i)) for n, i in enumerate("bca")]
    store.append("ws", first)
    store.depart("ws", "A1", _t(4))
    store.append(
        "ws",
        [
            Assert(id="e5", at=_t(5), author="A2", item=_draft("z", key="k")),
            Assert(id="e6", at=_t(6), author="A2", item=_draft("y")),
            Assert(id="e7", at=_t(7), author="A2", item=_draft("x")),
            Revoke(id="e8", at=_t(8), author="A2", target="b", why="gone"),
            Revoke(id="e9", at=_t(9), author="A2", target="y", why="gone"),
            Assert(id="e10", at=_t(10), author="A2", item=_draft("w", key="k")),
        ],
    )
    request = ReturnRequest(id="r", at=T0 + timedelta(hours=1), agent="A1", task="t", purpose="p")

    ctx = store.return_context("ws", request)

    assert [i.id for i in ctx.items] == ["a", "b", "c", "z", "y", "x", "w"]
