"""Two store objects over one database stand for two ``readmit serve`` processes: each keeps
decoded items and parsed events in memory, and neither may ever serve from them state the
other has since changed (an item's status, the log, the checkpoints)."""

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from builders import T0, item
from conftest import store_url
from readmit.errors import InvalidEvent
from readmit.events import Assert, ItemDraft, Recorded, ReturnRequest, Revoke
from readmit.model import Agent, Item
from readmit.store import decoded, open_store
from readmit.store.damaged import decoded_item
from readmit.store.decoded import BodyCache, kib
from readmit.store.sql import SqlStore

AGENTS = [Agent(id="A1", principal="p", role="ops"), Agent(id="A2", principal="p", role="dev")]


def fact(n: int, item: str, key: str | None = None) -> Assert:
    draft = ItemDraft(id=item, text=f"Fact {item} number {n}.", key=key)
    return Assert(id=f"e{n}", at=T0 + timedelta(minutes=n), author="A2", item=draft)


REQUEST = ReturnRequest(id="r", at=T0 + timedelta(hours=1), agent="A1", task="t", purpose="p")


@contextmanager
def two_processes(backend: str, tmp_path: Path) -> Iterator[tuple[SqlStore, SqlStore]]:
    """Two stores over one database, each with caches of its own, and workspace ``ws``."""
    with store_url(backend, tmp_path) as url:
        first, second = open_store(url), open_store(url)
        try:
            first.create_workspace("ws", AGENTS)
            yield first, second
        finally:
            first.close()
            second.close()


def test_what_one_process_writes_the_other_sees_despite_its_caches(
    backend: str, tmp_path: Path
) -> None:
    with two_processes(backend, tmp_path) as (first, second):
        first.append("ws", [fact(1, "a", key="k"), fact(2, "b"), fact(3, "c")])
        first.depart("ws", "A1", T0 + timedelta(minutes=4))
        warmed = first.return_context("ws", REQUEST)  # decodes and parses into `first`
        assert {i.id for i in first.visible_state("ws", "A1")} == {"a", "b", "c"}

        revoke = Revoke(id="e5", at=T0 + timedelta(minutes=5), author="A2", target="b", why="gone")
        second.append("ws", [revoke, fact(6, "a2", key="k")])

        assert {i.id for i in first.visible_state("ws", "A1")} == {"c", "a2"}
        again = first.return_context("ws", REQUEST)
        assert [r.event.id for r in again.delta] == ["e5", "e6"]
        assert again.epoch == warmed.epoch + 2
        checkpoint = first.depart("ws", "A1", T0 + timedelta(minutes=7))
        assert checkpoint.item_ids == ("a2", "c")


def test_a_withdrawal_takes_its_target_as_decoded_and_its_status_from_the_store(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A served store's withdrawals do not parse their targets again; what the other
    process withdrew since, and what the author may not read, are refused all the same."""
    with two_processes(backend, tmp_path) as (first, second):
        hidden = ItemDraft(id="h", text="Fact h.", principals=frozenset({"q"}))
        at = T0 + timedelta(minutes=3)
        first.append(
            "ws",
            [fact(1, "a", key="k"), fact(2, "b"), Assert(id="e3", at=at, author="A2", item=hidden)],
        )
        first.depart("ws", "A1", T0 + timedelta(minutes=4))
        first.return_context("ws", REQUEST)  # decodes every item into `first`

        second.append(
            "ws", [Revoke(id="e5", at=T0 + timedelta(minutes=5), author="A2", target="b", why="x")]
        )
        parsed: list[str] = []
        real = decoded_item

        def counted(body: str, item_id: str = "") -> Item:
            parsed.append(body)
            return real(body, item_id)

        monkeypatch.setattr("readmit.store.rows.decoded_item", counted)
        with pytest.raises(InvalidEvent, match="no longer active"):
            first.append(
                "ws",
                [Revoke(id="e6", at=T0 + timedelta(minutes=6), author="A2", target="b", why="x")],
            )
        with pytest.raises(InvalidEvent, match="unknown target item 'h'"):
            first.append(
                "ws",
                [Revoke(id="e6", at=T0 + timedelta(minutes=6), author="A1", target="h", why="x")],
            )
        first.append("ws", [fact(6, "a2", key="k")])  # replaces ``a`` by its key

        assert parsed == []
        assert {i.id for i in first.visible_state("ws", "A1")} == {"a2"}


def test_a_departure_another_process_records_replaces_the_checkpoint_one_remembers(
    backend: str, tmp_path: Path
) -> None:
    """A checkpoint's items are remembered per checkpoint, never per agent."""
    with two_processes(backend, tmp_path) as (first, second):
        first.append("ws", [fact(1, "a"), fact(2, "b")])
        first.depart("ws", "A1", T0 + timedelta(minutes=3))
        before = first.return_context("ws", REQUEST)
        assert before.departure.item_ids == ("a", "b")
        assert first.return_context("ws", REQUEST).items is before.items  # same epoch

        revoke = Revoke(id="e4", at=T0 + timedelta(minutes=4), author="A2", target="a", why="gone")
        second.append("ws", [revoke, fact(5, "c")])
        second.depart("ws", "A1", T0 + timedelta(minutes=6))
        second.append("ws", [fact(7, "d")])

        after = first.return_context("ws", REQUEST)
        assert after.departure.item_ids == ("b", "c")
        assert [i.id for i in after.items] == ["b", "c", "d"]


def test_returns_that_start_together_on_a_cold_cache_decode_each_body_once() -> None:
    """Single flight: the threads that miss wait for the one decoding, then read its values."""
    cache: BodyCache[str, str] = BodyCache()
    keys = [f"i{n}" for n in range(50)]
    decoded: list[str] = []
    start = threading.Barrier(8)

    def rows() -> list[tuple[str, str]]:
        time.sleep(0.05)  # the other threads arrive while these rows are being read
        return [(k, f"body of {k}") for k in keys]

    def decode(key: str, body: str) -> str:
        decoded.append(key)
        return body.upper()

    def fetch() -> list[str]:
        start.wait()
        return cache.fetch("ws", keys, rows, decode)

    with ThreadPoolExecutor(8) as pool:
        results = [f.result() for f in [pool.submit(fetch) for _ in range(8)]]
    assert sorted(decoded) == sorted(keys)
    assert all(r == [f"BODY OF {k.upper()}" for k in keys] for r in results)


def test_a_cache_past_its_limit_starts_over_and_still_answers() -> None:
    cache: BodyCache[str, str] = BodyCache(limit=3)
    cache.keep("a", {"x": "1", "y": "2"})
    cache.keep("a", {"x": "1"})  # already held: not counted twice
    cache.keep("b", {"z": "3"})
    assert cache.get("a", ["x", "y"]) == {"x": "1", "y": "2"}
    cache.keep("b", {"w": "4"})  # a fourth value: start over
    assert cache.get("a", ["x", "y"]) == {}
    assert cache.get("b", ["w", "z"]) == {"w": "4"}
    assert cache.fetch("a", ["y", "x"], lambda: [("x", "b1"), ("y", "b2")], lambda k, b: b) == [
        "b2",
        "b1",
    ]


def test_a_cache_counts_long_texts_by_their_size() -> None:
    """A review's writer of large items grew a server for good: the caches counted values,
    and a million of them may each hold 16,384 characters. A value costs one unit and one
    more for each KiB of its text (an item's, or the item an event stated)."""
    cache: BodyCache[str, Item] = BodyCache(limit=40)
    long = [item(f"l{n}", "x" * 16_384) for n in range(3)]
    short = item("s", "A short note.")
    assert [kib(long[0]), kib(short), kib(fact(1, "f"))] == [16, 0, 0]
    said = Assert(id="e", at=T0, author="A2", item=ItemDraft(id="l", text="x" * 16_384))
    assert kib(Recorded(epoch=1, event=said)) == 16  # an event is counted by its item's text

    cache.keep("ws", {i.id: i for i in long[:2]})  # 34 units
    cache.keep("ws", {"s": short, "l0": long[0]})  # one new unit: 35
    assert set(cache.get("ws", ["l0", "l1", "s"])) == {"l0", "l1", "s"}
    cache.keep("ws", {"l2": long[2]})  # 52 units would pass 40: start over
    assert cache.get("ws", ["l0", "l1", "s", "l2"]) == {"l2": long[2]}

    # Fetched, a value is counted by its own text, not its body's length: a stored body
    # escapes non-ASCII text (a review: 16,384 CJK characters were counted 97 units, not 17).
    wide = {f"b{n}": json.dumps({"id": f"b{n}", "text": "字" * 16_384}) for n in range(3)}
    fetched: BodyCache[str, Item] = BodyCache(limit=60)

    def decoded(key: str, body: str) -> Item:
        return item(key, json.loads(body)["text"])

    fetched.fetch("ws", ["b0", "b1"], lambda: [(k, wide[k]) for k in ("b0", "b1")], decoded)
    fetched.fetch("ws", ["b2"], lambda: [("b2", wide["b2"])], decoded)  # 51 units, not 291
    assert list(fetched.get("ws", ["b0", "b1", "b2"])) == ["b0", "b1", "b2"]


def test_a_cache_lacking_a_few_values_reads_only_their_bodies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read after a write reads the new bodies alone; past `FEW` of them, every body in
    one scan (one new item had made a 100k-item workspace's next read take 190 ms more)."""
    bodies = {k: f"Note {k}." for k in "abcd"}
    read: list[object] = []

    def every() -> list[tuple[str, str]]:
        read.append("every")
        return list(bodies.items())

    def few(keys: list[str]) -> list[tuple[str, str]]:
        read.append(keys)
        return [(k, bodies[k]) for k in keys]

    cache: BodyCache[str, Item] = BodyCache()
    cache.keep("ws", {k: item(k, bodies[k]) for k in "ab"})

    fetched = cache.fetch("ws", list("abc"), every, item, few)
    assert [i.text for i in fetched] == ["Note a.", "Note b.", "Note c."]
    assert read == [["c"]]

    monkeypatch.setattr(decoded, "FEW", 0)
    assert [i.id for i in cache.fetch("ws", list("abcd"), every, item, few)] == list("abcd")
    assert read == [["c"], "every"]


def test_remembered_checkpoints_past_their_limit_start_over_and_still_answer(
    tmp_path: Path,
) -> None:
    with two_processes("sqlite", tmp_path) as (store, _):
        store.append("ws", [fact(1, "a"), fact(2, "b")])
        store.depart("ws", "A1", T0 + timedelta(minutes=3))
        store._departures.limit = 4  # D_a's two items and C's two; C's three start over
        first = store.return_context("ws", REQUEST)
        store.append("ws", [fact(4, "c")])
        later = store.return_context("ws", REQUEST)

        assert [i.id for i in first.items] == ["a", "b"]
        assert [i.id for i in later.items] == ["a", "b", "c"]
        assert store.return_context("ws", REQUEST).items is later.items
        assert store._departures._size <= 4


def test_remembered_checkpoints_count_long_texts_by_their_size(tmp_path: Path) -> None:
    """Tuples of D_a's and C's items were counted as items, so that a review's writer of
    16,384-character texts could make them hold 16 GB within the limit. They cost what the
    decoded caches count: one unit an item and one a KiB of its text."""
    with two_processes("sqlite", tmp_path) as (store, _):
        for n in (1, 2):
            draft = ItemDraft(id=f"l{n}", text="x" * 16_384)
            store.append(
                "ws", [Assert(id=f"e{n}", at=T0 + timedelta(minutes=n), author="A2", item=draft)]
            )
        store.append("ws", [fact(3, "short")])
        store.depart("ws", "A1", T0 + timedelta(minutes=4))
        store._departures.limit = 40  # D_a costs 35 units; C, 35 more, starts them over
        first = store.return_context("ws", REQUEST)
        assert store._departures._size == 35
        store.append("ws", [fact(5, "later")])  # C grows by one short item: one unit
        later = store.return_context("ws", REQUEST)

        assert [i.id for i in first.items] == ["l1", "l2", "short"]
        assert [i.id for i in later.items] == ["l1", "l2", "short", "later"]
        assert store._departures._size == 35 + 1 + 1  # and Δ's one event


def test_returns_at_later_epochs_read_only_what_came_since_and_see_all_of_it(
    backend: str, tmp_path: Path
) -> None:
    """One process extends what it remembered; the other reads the same from scratch."""
    with two_processes(backend, tmp_path) as (first, second):
        first.append("ws", [fact(1, "a", key="k"), fact(2, "b")])
        first.depart("ws", "A1", T0 + timedelta(minutes=3))
        for n in range(4, 10, 2):
            first.return_context("ws", REQUEST)
            at = T0 + timedelta(minutes=n)
            revoke = Revoke(id=f"r{n}", at=at, author="A2", target="b", why="gone")
            second.append("ws", [revoke] if n == 6 else [fact(n, f"x{n}", key="k")])
            second.append("ws", [fact(n + 1, f"y{n}")])

        extended, fresh = (s.return_context("ws", REQUEST) for s in (first, second))
        assert [i.id for i in extended.items] == [i.id for i in fresh.items]
        assert [i.id for i in extended.items] == ["a", "b", "x4", "y4", "y6", "x8", "y8"]
        assert [r.epoch for r in extended.delta] == [r.epoch for r in fresh.delta]
        assert [r.event.id for r in extended.delta] == ["e4", "e5", "r6", "e7", "e8", "e9"]


def test_a_refused_batch_leaves_nothing_of_it_decoded_or_parsed(
    backend: str, tmp_path: Path
) -> None:
    """The caches hold committed rows only: the writer reads them, it never fills them.

    A batch that wrote items, withdrew a decoded one and was then refused is rolled back;
    nothing of it may be served afterwards as stored (a review's point: the writer reads
    what the store decoded, so an uncommitted body kept there would outlive the rollback).
    """
    with two_processes(backend, tmp_path) as (store, _):
        store.append("ws", [fact(1, "a", key="k")])
        store.depart("ws", "A1", T0 + timedelta(minutes=2))
        store.return_context("ws", REQUEST)  # "a" decoded, its event parsed
        gone = Revoke(id="e4", at=T0 + timedelta(minutes=4), author="A2", target="a", why="x")
        unknown = Revoke(id="e6", at=T0 + timedelta(minutes=6), author="A2", target="z", why="x")
        with pytest.raises(InvalidEvent, match="unknown target item 'z'"):
            store.append("ws", [fact(3, "a2", key="k2"), gone, fact(5, "b"), unknown])

        assert store._decoded.get("ws", ["a", "a2", "b"]).keys() == {"a"}
        assert store._parsed.get("ws", [2, 3, 4, 5]) == {}
        assert {i.id for i in store.visible_state("ws", "A1")} == {"a"}
