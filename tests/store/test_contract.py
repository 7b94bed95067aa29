import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from builders import T0
from conftest import store_url
from readmit.admission.gates import apply_gates
from readmit.errors import ConfigError, DamagedStore, InvalidEvent, InvalidInput, StoreError
from readmit.events import (
    Assert,
    Close,
    Event,
    Evidence,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    RecordExperience,
    Resolve,
    ReturnRequest,
    Revoke,
    Supersede,
    text_digest,
)
from readmit.model import Agent, blank
from readmit.reasons import Reason
from readmit.store import WorkStateStore, open_store, pool
from readmit.store import damaged as store_damaged
from readmit.store.migrations import MIGRATIONS, pending
from readmit.store.sql import SqlStore
from readmit.wire import domain

NAIVE = T0.replace(tzinfo=None) + timedelta(days=400)
"""A time without a zone (a library caller's ``datetime.now()``)."""

AGENTS = [
    Agent(id="A1", principal="family", role="itinerary"),
    Agent(id="A2", principal="family", role="booking"),
    Agent(id="X1", principal="agency", role="partner"),
]


def assert_(
    n: int,
    item_id: str,
    text: str = "",
    key: str | None = None,
    depends_on: frozenset[str] = frozenset(),
    cites: frozenset[str] = frozenset(),
    principals: frozenset[str] | None = None,
) -> Assert:
    draft = ItemDraft(
        id=item_id,
        text=text or f"Statement {item_id}.",
        key=key,
        depends_on=depends_on,
        cites=cites,
        principals=principals,
    )
    return Assert(id=f"e{n}", at=T0 + timedelta(minutes=n), author="A2", item=draft)


@pytest.fixture
def ws(store: WorkStateStore) -> WorkStateStore:
    store.create_workspace("ws", AGENTS)
    return store


@pytest.mark.parametrize(
    "build",
    [
        lambda: ItemDraft(id="i", text=""),
        lambda: Evidence(id="e", at=T0, author="A2", source_id="s", text=" \t"),
        lambda: RecordExperience(
            id="e", at=T0, agent="A1", experience_id="x", text="\n", source="i"
        ),
        lambda: ObligationDraft(
            id="o",
            text="Book it.",
            role="booking",
            requires=frozenset(),
            critical=frozenset(),
            frontier_id="f",
            frontier_text="",
        ),
    ],
    ids=["item", "evidence", "experience", "frontier"],
)
def test_a_blank_statement_is_refused_before_it_can_be_stored(build: Callable[[], object]) -> None:
    with pytest.raises(InvalidInput, match="the text is blank"):
        build()


@pytest.mark.parametrize("text", ["\u202e", "\u200b\u2060 ", "\u3164", "\ufe0f"])
def test_a_text_of_only_invisible_characters_is_refused_as_saying_nothing(
    ws: WorkStateStore, text: str
) -> None:
    """A lone U+202E was stored as a statement (a probe); nothing of the batch is kept."""
    with pytest.raises(InvalidEvent, match=r"item.text: must say something"):
        ws.append("ws", [assert_(1, "a"), assert_(2, "b", text=text)])

    assert ws.events("ws") == []


def test_a_return_reads_an_invisible_text_an_older_readmit_stored(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only what is written is refused: an older readmit stored such a text, and a return
    whose Δ held it failed, naming an item the agent may not read (a review)."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        store.create_workspace("ws", AGENTS)
        store.append("ws", [assert_(1, "a")])
        store.depart("ws", "A1", T0 + timedelta(minutes=5))
        with monkeypatch.context() as older:
            older.setattr(domain, "says_nothing", blank)
            store.append("ws", [assert_(10, "zw", text="\u200b", principals=frozenset({"x"}))])
        store.close()
        store = open_store(url)  # a new process: nothing parsed yet

        ctx = store.return_context("ws", _return(T0 + timedelta(hours=1)))
        store.close()

    assert [r.event.id for r in ctx.delta] == ["e10"]


def test_epochs_are_assigned_gap_free_across_batches(ws: WorkStateStore) -> None:
    first = ws.append("ws", [assert_(1, "a"), assert_(2, "b")])
    second = ws.append("ws", [assert_(3, "c")])

    assert [r.epoch for r in first + second] == [1, 2, 3]
    assert [r.epoch for r in ws.events("ws")] == [1, 2, 3]


def test_a_library_caller_may_ask_which_items_an_agent_may_not_read(ws: WorkStateStore) -> None:
    """The family's items and the agency's, one revoked: X1 may read only its own; an id
    no active item has is not named; an agent the workspace lacks is refused."""
    agency = frozenset({"agency"})
    ws.append("ws", [assert_(1, "f1"), assert_(2, "f2"), assert_(3, "x1", principals=agency)])
    gone = Revoke(id="e4", at=T0 + timedelta(minutes=4), author="A2", target="f2", why="x")
    ws.append("ws", [gone])
    ids = ["f1", "f2", "x1", "nothing", "f1"]

    assert ws.unreadable("ws", "X1", ids) == {"f1"}
    assert ws.unreadable("ws", "A1", ids) == {"x1"}
    assert ws.unreadable("ws", "A1", []) == set()
    with pytest.raises(InvalidInput, match="no agent 'Z9'"):
        ws.unreadable("ws", "Z9", ids)


def test_a_library_caller_may_ask_which_items_by_prefix_an_agent_may_not_read(
    ws: WorkStateStore,
) -> None:
    """By an exact prefix: not a pattern (``_`` and ``%`` are plain), nor another case."""
    agency = frozenset({"agency"})
    ids = ["m_1", "m_2", "mX1", "M_3", "m%4", "n_5"]
    ws.append("ws", [assert_(n, i, principals=agency) for n, i in enumerate(ids, 1)])
    gone = Revoke(id="e9", at=T0 + timedelta(minutes=9), author="X1", target="m_2", why="x")
    ws.append("ws", [gone, assert_(10, "m_6")])

    assert ws.unreadable_under("ws", "A1", "m_") == {"m_1"}
    assert ws.unreadable_under("ws", "A1", "m%") == {"m%4"}
    assert ws.unreadable_under("ws", "X1", "m_") == {"m_6"}
    with pytest.raises(InvalidInput, match="no agent 'Z9'"):
        ws.unreadable_under("ws", "Z9", "m_")


def test_a_library_caller_may_ask_which_keys_hold_an_item_an_agent_may_not_read(
    ws: WorkStateStore,
) -> None:
    """A key held by an active item of the agency's (alone, or beside one of the family's
    that did not replace it); one whose agency item was revoked holds none."""
    agency = frozenset({"agency"})
    ws.append(
        "ws",
        [
            assert_(1, "f1", key="k1"),
            assert_(2, "x1", key="k2", principals=agency),
            assert_(3, "f2", key="k2"),
            assert_(4, "x2", key="k3", principals=agency),
        ],
    )
    gone = Revoke(id="e5", at=T0 + timedelta(minutes=5), author="X1", target="x2", why="x")
    ws.append("ws", [gone])
    keys = ["k1", "k2", "k3", "none", "k2"]

    assert ws.unreadable_keys("ws", "A1", keys) == {"k2"}
    assert ws.unreadable_keys("ws", "X1", keys) == {"k1", "k2"}
    assert ws.unreadable_keys("ws", "A1", []) == set()
    with pytest.raises(InvalidInput, match="no agent 'Z9'"):
        ws.unreadable_keys("ws", "Z9", keys)


def test_which_keys_an_agent_may_not_read_is_read_within_the_read_it_opens(
    ws: WorkStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are fetched before the connection goes back to the pool: one given back
    beyond what the pool keeps idle is closed (and one kept may be another thread's by
    then), so a query run after it was returned failed ("closed")."""
    ws.append("ws", [assert_(1, "x1", key="k1", principals=frozenset({"agency"}))])
    monkeypatch.setattr(pool, "_KEEP", 0)  # as when more connections are out than it keeps

    assert ws.unreadable_keys("ws", "A1", ["k1", "k2"]) == {"k1"}


def test_workspaces_number_their_epochs_independently(ws: WorkStateStore) -> None:
    ws.create_workspace("other", AGENTS)

    ws.append("ws", [assert_(1, "a")])
    [recorded] = ws.append("other", [assert_(1, "a")])

    assert recorded.epoch == 1


def test_a_bad_event_stores_nothing_of_its_batch(ws: WorkStateStore) -> None:
    ws.append("ws", [assert_(1, "a")])
    bad = Revoke(id="e3", at=T0 + timedelta(minutes=3), author="A2", target="missing", why="x")

    with pytest.raises(InvalidEvent, match=r"'e3'.*unknown target item 'missing'"):
        ws.append("ws", [assert_(2, "b"), bad])

    assert [r.event.id for r in ws.events("ws")] == ["e1"]
    ws.append("ws", [assert_(2, "b")])  # the id b was not taken by the failed batch


def test_its_writer_withdraws_an_item_whose_readers_leave_it_out_only_when_own_is_asked(
    ws: WorkStateStore,
) -> None:
    """A2 writes for the agency only (a memory layer's put for others that its inner store
    then failed): with ``own`` (the layer's undo), A2 may revoke, supersede or close it;
    without it, as an agent's request is, A2 is told of no such item; A1, of A2's principal
    but not its writer, is told so even with ``own``."""
    agency = frozenset({"agency"})
    ws.append("ws", [assert_(n, f"x{n}", principals=agency) for n in (1, 2, 3, 4)])
    at = T0 + timedelta(minutes=10)
    mine = Revoke(id="e10", at=at, author="A2", target="x1", why="put failed")
    theirs = Revoke(id="e11", at=at, author="A1", target="x4", why="not A1's")

    with pytest.raises(InvalidEvent, match=r"'e10'.*unknown target item 'x1'"):
        ws.append("ws", [mine])
    with pytest.raises(InvalidEvent, match=r"'e11'.*unknown target item 'x4'"):
        ws.append("ws", [theirs], own=True)
    ws.append(
        "ws",
        [
            mine,
            Supersede(
                id="e12", at=at, author="A2", target="x2", item=ItemDraft(id="y2", text="Y.")
            ),
            Close(id="e13", at=at, author="A2", target="x3"),
        ],
        own=True,
    )

    assert ws.unreadable("ws", "A2", ["x1", "x2", "x3", "x4"]) == {"x4"}  # only x4 active
    with pytest.raises(InvalidEvent, match=r"'e14'.*no longer active"):
        ws.append("ws", [replace(mine, id="e14")], own=True)


def test_events_for_a_workspace_never_created_are_refused_and_store_nothing(
    ws: WorkStateStore,
) -> None:
    """The store's check (the workspace has agents, every author is one) is what keeps the
    log to existing workspaces: PostgreSQL's log has no foreign key for it (migration m008).
    It names the workspace, not each author, as unknown."""
    with pytest.raises(InvalidEvent, match="no workspace 'nowhere' in this store"):
        ws.append("nowhere", [assert_(1, "a")])
    with pytest.raises(InvalidInput, match="no workspace 'nowhere' in this store"):
        ws.append("nowhere", [])  # an empty batch too: it answered [] as if it were there

    assert ws.events("nowhere") == []
    assert ws.events("ws") == []


def test_a_workspace_of_no_agents_is_refused(store: WorkStateStore) -> None:
    """The store tells a workspace by its agents: one made empty would read as never made."""
    with pytest.raises(InvalidInput, match="a workspace needs at least one agent"):
        store.create_workspace("empty", [])

    with pytest.raises(InvalidEvent, match="no workspace 'empty' in this store"):
        store.depart("empty", "A1", T0)


@pytest.mark.parametrize("name", ["_readmit_migrations", "_readmit_judgments", "_readmitx"])
def test_a_workspace_named_as_the_stores_own_locks_is_refused(
    store: WorkStateStore, name: str
) -> None:
    """On PostgreSQL a lock goes by name, database-wide: a workspace named
    ``_readmit_migrations`` held every migration of the database while written (a probe)."""
    with pytest.raises(InvalidInput, match=f"workspace '{name}': names starting '_readmit'"):
        store.create_workspace(name, [Agent(id="A1", principal="p", role="r")])

    assert store.agents(name) == {}


def test_a_departure_or_return_to_a_workspace_never_created_names_the_workspace(
    ws: WorkStateStore,
) -> None:
    with pytest.raises(InvalidEvent, match="no workspace 'nowhere' in this store"):
        ws.depart("nowhere", "A1", T0)
    with pytest.raises(InvalidEvent, match="unknown agent 'Z9' in workspace 'ws'"):
        ws.depart("ws", "Z9", T0)


def _claiming(kind: str, name: str, n: int) -> Event:
    """An event of author A2 (role booking) that claims ``name`` as a ``kind``."""
    at = T0 + timedelta(minutes=n)
    if kind == "item":
        return assert_(n, name)
    if kind == "evidence":
        return Evidence(id=f"e{n}", at=at, author="A2", source_id=name, text="A receipt.")
    obligation, frontier = (name, f"f{n}") if kind == "obligation" else (f"o{n}", name)
    draft = ObligationDraft(
        id=obligation,
        text="Book it.",
        role="booking",
        requires=frozenset(),
        critical=frozenset(),
        frontier_id=frontier,
        frontier_text="Nothing booked yet.",
    )
    return OpenObligation(id=f"e{n}", at=at, author="A2", obligation=draft)


KINDS = ("item", "evidence", "obligation", "frontier")


@pytest.mark.parametrize("first", KINDS)
@pytest.mark.parametrize("second", KINDS)
@pytest.mark.parametrize("together", [False, True], ids=["later-batch", "same-batch"])
def test_items_evidence_obligations_and_frontiers_share_one_namespace(
    ws: WorkStateStore, first: str, second: str, together: bool
) -> None:
    """Items hold their ids in their own table, the other kinds in ``names``: a clash
    across the two is refused like one within either, and stores nothing of its batch."""
    claim, clash = _claiming(first, "n", 1), _claiming(second, "n", 2)
    if not together:
        ws.append("ws", [claim])

    where = "earlier in this batch" if together else "in this workspace"
    with pytest.raises(InvalidEvent, match=rf"'e2'.*'n' is already used {where}"):
        ws.append("ws", [claim, clash] if together else [clash])

    assert len(ws.events("ws")) == (0 if together else 1)


@pytest.mark.parametrize("second", KINDS)
def test_an_item_named_in_names_by_an_earlier_version_still_holds_its_id(
    ws: WorkStateStore, second: str
) -> None:
    """Stores written before items left ``names`` hold their ids in both tables."""
    ws.append("ws", [_claiming("item", "n", 1)])
    assert isinstance(ws, SqlStore)
    with ws.conn.transaction(lock="ws"):
        ws.conn.execute("INSERT INTO names (workspace, id, kind) VALUES ('ws', 'n', 'item')")

    with pytest.raises(InvalidEvent, match=r"'e2'.*'n' is already used"):
        ws.append("ws", [_claiming(second, "n", 2)])
    ws.append("ws", [_claiming(second, "m", 2)])


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (Assert(id="e5", at=T0, author="ZZ", item=ItemDraft(id="x", text="t")), "unknown author"),
        (assert_(5, "a"), "already used"),
        (assert_(5, "x", depends_on=frozenset({"nope"})), "depends_on names unknown item"),
        (assert_(5, "x", cites=frozenset({"src"})), "cites missing evidence"),
        (
            Revoke(id="e5", at=T0 + timedelta(hours=1), author="A2", target="gone", why="x"),
            "no longer active",
        ),
        (
            Resolve(id="e5", at=T0 + timedelta(hours=1), author="A2", target="o9"),
            "no open obligation",
        ),
        (assert_(0, "early"), "time goes backwards"),
        (
            Assert(id="e5", at=NAIVE, author="A2", item=ItemDraft(id="x", text="t")),
            "its time has no time zone",
        ),
        (
            Assert(
                id="e1", at=T0 + timedelta(hours=1), author="A2", item=ItemDraft(id="q", text="t")
            ),
            "event with this id already exists",
        ),
    ],
)
def test_inconsistent_events_are_rejected_by_name(
    ws: WorkStateStore, event: object, problem: str
) -> None:
    ws.append("ws", [assert_(1, "a"), assert_(2, "gone")])
    ws.append(
        "ws", [Revoke(id="e3", at=T0 + timedelta(minutes=3), author="A2", target="gone", why="x")]
    )

    with pytest.raises(InvalidEvent, match=problem):
        ws.append("ws", [event])  # type: ignore[list-item]

    assert len(ws.events("ws")) == 3


def test_what_a_departure_said_is_read_as_of_a_time(ws: WorkStateStore) -> None:
    ws.depart("ws", "A1", T0 + timedelta(hours=1), returning_to=("t1", "p1"))
    ws.depart("ws", "A1", T0 + timedelta(hours=3))

    assert not ws.has_departed("ws", "A1", T0)
    assert ws.departed_for("ws", "A1", T0) is None
    assert ws.has_departed("ws", "A1", T0 + timedelta(hours=2))
    assert ws.departed_for("ws", "A1", T0 + timedelta(hours=2)) == ("t1", "p1")
    assert ws.departed_for("ws", "A1", T0 + timedelta(hours=4)) is None  # the latest said none
    assert ws.departed_for("ws", "A1") is None


def test_a_departure_or_return_at_a_time_without_a_zone_is_refused(ws: WorkStateStore) -> None:
    """A time without a zone cannot be ordered against the log's (a library caller's
    ``datetime.now()``): refused by name, never a comparison error later."""
    ws.append("ws", [assert_(1, "a")])
    with pytest.raises(InvalidEvent, match="'depart A1': its time has no time zone"):
        ws.depart("ws", "A1", NAIVE)
    ws.depart("ws", "A1", T0 + timedelta(hours=1))

    with pytest.raises(InvalidEvent, match="its time has no time zone"):
        ws.return_context("ws", _return(NAIVE))
    memory = RecordExperience(
        id="x", at=NAIVE, agent="A1", experience_id="m1", text="memo", source="a"
    )
    with pytest.raises(InvalidEvent, match="its time has no time zone"):
        ws.record_experience("ws", memory)
    assert ws.experiences("ws", "A1") == []
    assert ws.return_context("ws", _return(T0 + timedelta(hours=2))).departure.agent == "A1"


def test_receipts_bind_item_to_event_author_epoch_and_text(ws: WorkStateStore) -> None:
    ws.append("ws", [assert_(1, "a", "Sunrise Hotel is booked.")])
    ws.depart("ws", "A1", T0 + timedelta(hours=1))

    ctx = ws.return_context("ws", _return(T0 + timedelta(hours=2)))

    [item] = ctx.items
    assert item.receipt is not None
    assert (item.receipt.event_id, item.receipt.author, item.receipt.epoch) == ("e1", "A2", 1)
    assert item.receipt.digest == text_digest("a", "Sunrise Hotel is booked.")


def test_an_item_body_altered_in_the_database_fails_its_receipt(ws: WorkStateStore) -> None:
    """A body changed behind the store's back no longer matches its receipt (the digest of
    the text written), and gate P drops the item."""
    ws.append("ws", [assert_(1, "a", "Sunrise Hotel is booked."), assert_(2, "b")])
    ws.depart("ws", "A1", T0 + timedelta(hours=1))
    assert isinstance(ws, SqlStore)
    body = ws.conn.execute("SELECT body FROM items WHERE id = 'a'").fetchone()[0]
    with ws.conn.transaction(lock="ws"):
        ws.conn.execute(
            "UPDATE items SET body = ? WHERE id = 'a'",
            (body.replace("is booked", "is cancelled"),),
        )

    reopened = open_store(ws.url)
    ctx = reopened.return_context("ws", _return(T0 + timedelta(hours=2)))
    kept, excluded = apply_gates(ctx.items, ctx)
    reopened.close()

    assert [i.id for i in kept] == ["b"]
    assert [(e.item, e.reason) for e in excluded] == [("a", Reason.MISSING_RECEIPT)]


def _revoke_a(store: WorkStateStore) -> object:
    at = T0 + timedelta(minutes=5)
    return store.append("ws", [Revoke(id="e5", at=at, author="A2", target="a", why="gone")])


def _resolve_o(store: WorkStateStore) -> object:
    return store.append(
        "ws", [Resolve(id="e5", at=T0 + timedelta(minutes=5), author="A2", target="o2")]
    )


DAMAGED: dict[str, tuple[str, Callable[[WorkStateStore], object], str]] = {
    "item": (
        "UPDATE items SET body = ? WHERE id = 'a'",
        lambda s: s.visible_state("ws", "A1"),
        "an item body",
    ),
    "an item written over": ("UPDATE items SET body = ? WHERE id = 'a'", _revoke_a, "an item body"),
    "event": (
        "UPDATE events SET body = ? WHERE epoch = 1",
        lambda s: s.events("ws"),
        "the event logged at epoch 1",
    ),
    "obligation": (
        "UPDATE obligations SET body = ? WHERE id = 'o2'",
        _resolve_o,
        "an obligation body",
    ),
}
"""Where a test damages a body, what meets it (a read, or a write), and what it is called."""
ITEM = '{"id": "a", "text": "x", "epoch": 1, "author": "A2", "principals": 5}'


@pytest.mark.parametrize(
    ("damaged", "body"),
    [
        ("item", ITEM),
        ("item", "not JSON"),
        ("item", "[" * 100_000 + "]" * 100_000),  # the json module's RecursionError
        ("item", '{"id": "a", "text": "x", "epoch": 1, "author": "A2", "receipt": [1]}'),
        ("an item written over", ITEM),
        ("event", '{"id": "e1", "op": "assert", "at": 5, "author": "A2", "item": {}}'),
        ("obligation", '{"id": "o2", "role": 7}'),
    ],
)
def test_a_body_damaged_in_the_database_is_a_store_error_that_quotes_nothing(
    ws: WorkStateStore,
    damaged: str,
    body: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A body readmit did not write failed reads and writes with a ``TypeError`` (a 500 for
    every agent of the workspace), or, logged, as the reader's own invalid event, naming its
    id (a probe); the database answered, the store goes on, and its log says which row."""
    ws.append("ws", [assert_(1, "a", "Sunrise Hotel is booked."), _claiming("obligation", "o2", 2)])
    assert isinstance(ws, SqlStore)
    statement, meet, called = DAMAGED[damaged]
    with ws.conn.transaction(lock="ws"):
        ws.conn.execute(statement, (body,))
    reopened = open_store(ws.url)
    caplog.set_level(logging.WARNING, logger="readmit.store")
    monkeypatch.setattr(store_damaged, "_told", set())  # what other tests' rows logged

    try:
        with pytest.raises(DamagedStore, match=rf"^{called} in the store is damaged") as raised:
            meet(reopened)
        with pytest.raises(DamagedStore):  # again: logged once
            meet(reopened)
        assert [r.epoch for r in reopened.events("ws", after_epoch=1)] == [2]  # nothing written
    finally:
        reopened.close()

    assert "e1" not in str(raised.value)
    assert "Sunrise" not in str(raised.value)
    [told] = [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]
    assert "'a'" in told or "'o2'" in told or "epoch 1" in told or body[:20] in told  # once


def _return(at: object, id: str = "r1") -> ReturnRequest:
    return ReturnRequest(id=id, at=at, agent="A1", task="trip", purpose="itinerary")  # type: ignore[arg-type]


def test_the_context_is_the_checkpoint_plus_the_delta(ws: WorkStateStore) -> None:
    ws.append("ws", [assert_(1, "a"), assert_(2, "b", key="k"), assert_(3, "hidden")])
    ws.append(
        "ws",
        [Revoke(id="e4", at=T0 + timedelta(minutes=4), author="A2", target="hidden", why="gone")],
    )
    checkpoint = ws.depart("ws", "A1", T0 + timedelta(hours=1))
    ws.append(
        "ws",
        [
            assert_(70, "c", key="k"),
            Supersede(
                id="e71",
                at=T0 + timedelta(minutes=71),
                author="A2",
                target="a",
                item=ItemDraft(id="a2", text="A, again."),
            ),
        ],
    )

    ctx = ws.return_context("ws", _return(T0 + timedelta(hours=2)))

    assert checkpoint.item_ids == ("a", "b")
    assert {i.id for i in ctx.items} == {"a", "b", "c", "a2"}
    assert [r.event.id for r in ctx.delta] == ["e70", "e71"]
    assert (ctx.departure.epoch, ctx.epoch) == (4, 6)


def test_checkpoints_only_hold_what_the_agent_may_read(ws: WorkStateStore) -> None:
    ws.append("ws", [assert_(1, "mine"), assert_(2, "theirs", principals=frozenset({"agency"}))])

    checkpoint = ws.depart("ws", "A1", T0 + timedelta(hours=1))

    assert checkpoint.item_ids == ("mine",)


def test_a_return_without_a_departure_is_an_error(ws: WorkStateStore) -> None:
    with pytest.raises(InvalidEvent, match=r"'r1'.*has not departed"):
        ws.return_context("ws", _return(T0))


def test_obligations_resolve_and_experiences_are_banked(ws: WorkStateStore) -> None:
    draft = ObligationDraft(
        id="o",
        text="Do it.",
        role="itinerary",
        requires=frozenset({"d"}),
        critical=frozenset(),
        frontier_id="f",
        frontier_text="Not done.",
    )
    ws.append(
        "ws",
        [
            OpenObligation(id="e1", at=T0, author="A2", obligation=draft),
            OpenObligation(
                id="e2",
                at=T0,
                author="A2",
                obligation=ObligationDraft(
                    id="o2",
                    text="Also.",
                    role="booking",
                    requires=frozenset({"d"}),
                    critical=frozenset(),
                    frontier_id="f2",
                    frontier_text="Open.",
                ),
            ),
            Evidence(id="e3", at=T0, author="A2", source_id="src", text="raw"),
            Evidence(id="e5", at=T0, author="A2", source_id="uncited", text="raw"),
            assert_(6, "cites", cites=frozenset({"src"})),
        ],
    )
    ws.record_experience(
        "ws",
        RecordExperience(id="x", at=T0, agent="A1", experience_id="m1", text="memo", source="o"),
    )
    ws.depart("ws", "A1", T0 + timedelta(hours=1))
    ws.append("ws", [Resolve(id="e4", at=T0 + timedelta(hours=2), author="A2", target="o2")])

    ctx = ws.return_context("ws", _return(T0 + timedelta(hours=3)))

    assert [o.id for o in ctx.obligations] == ["o"]
    assert ctx.evidence == {"src"}  # what its items cite: every source was read at each return
    assert [e.id for e in ctx.experiences] == ["m1"]


def test_an_experience_needs_a_known_source(ws: WorkStateStore) -> None:
    with pytest.raises(InvalidEvent, match=r"'x'.*no known item"):
        ws.record_experience(
            "ws",
            RecordExperience(
                id="x", at=T0, agent="A1", experience_id="m", text="memo", source="nothing"
            ),
        )


def test_migrations_are_recorded_and_not_rerun(backend: str, tmp_path: Path) -> None:
    with store_url(backend, tmp_path) as url:
        open_store(url).close()
        reopened = open_store(url)

        names = [r[0] for r in reopened.conn.execute("SELECT name FROM _readmit_migrations")]
        assert names == [name for name, _ in MIGRATIONS]
        assert pending(reopened.conn) == []
        reopened.close()


def test_watermarks_kept_under_a_verifier_name_alone_are_dropped(
    backend: str, tmp_path: Path
) -> None:
    """Kept before watermarks named the screening's threshold and settings (m015)."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        with store.conn.transaction():
            store.conn.execute(
                "INSERT INTO screenings (workspace, reader, verifier, verifier_digest, item, "
                "through, at) VALUES ('ws', 'p r', 'builtin', 'b', 'i1', 7, '2026-01-01')"
            )
            store.conn.execute(
                "DELETE FROM _readmit_migrations WHERE name = 'm015_screenings_by_screening'"
            )
        store.close()
        reopened = open_store(url)
        (count,) = reopened.conn.execute("SELECT COUNT(*) FROM screenings").fetchone()
        reopened.close()

    assert count == 0


def test_an_unknown_decision_is_a_store_error(ws: WorkStateStore) -> None:
    with pytest.raises(StoreError, match="no decision 42"):
        ws.decision(42)


def test_unknown_store_urls_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown store"):
        open_store("mongodb://localhost")


def test_writes_cannot_probe_items_the_author_may_not_read(ws: WorkStateStore) -> None:
    ws.append("ws", [assert_(1, "family-only")])
    later = T0 + timedelta(hours=1)
    probes: list[Event] = [
        Revoke(id="p1", at=later, author="X1", target="family-only", why="x"),
        Assert(
            id="p2",
            at=later,
            author="X1",
            item=ItemDraft(id="x", text="t", depends_on=frozenset({"family-only"})),
        ),
    ]

    for probe in probes:
        with pytest.raises(InvalidEvent, match="unknown"):
            ws.append("ws", [probe])
    with pytest.raises(InvalidEvent, match="no known item"):
        ws.record_experience(
            "ws",
            RecordExperience(
                id="p3", at=later, agent="X1", experience_id="m", text="t", source="family-only"
            ),
        )


def test_a_url_missing_slashes_is_told_the_url_it_meant() -> None:
    with pytest.raises(ConfigError, match=r"write sqlite:////tmp/team\.db$"):
        open_store("sqlite:/tmp/team.db")


def test_a_dict_given_to_append_is_told_how_it_becomes_an_event(ws: WorkStateStore) -> None:
    raw = {"op": "assert", "author": "A1", "item": {"id": "x", "text": "A fact."}}

    with pytest.raises(InvalidInput, match=r"a dict becomes one with readmit\.wire\.parse_event"):
        ws.append("ws", [raw])  # type: ignore[list-item]
    assert ws.events("ws") == []
