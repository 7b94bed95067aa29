import gc
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from builders import KEY, context, item
from readmit import admit, collector
from readmit.admission.invalidation.screening import Screener
from readmit.collector import paused
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_back_on_after() -> None:
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_comes_back_on_after_an_error_too() -> None:
    with pytest.raises(ValueError, match="the return failed"), paused():
        raise ValueError("the return failed")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with paused():
        pass
    assert not gc.isenabled()


def test_it_comes_back_only_when_the_last_of_overlapping_pauses_ends() -> None:
    """Two threads' pauses overlap: the first to end must not turn it back on."""
    inside, release = threading.Barrier(2), threading.Event()
    seen: list[bool] = []

    def long_return() -> None:
        with paused():
            inside.wait()
            release.wait(timeout=30)

    worker = threading.Thread(target=long_return)
    worker.start()
    with paused():
        inside.wait()
    seen.append(gc.isenabled())  # the other pause still runs
    release.set()
    worker.join(timeout=30)

    assert seen == [False]
    assert gc.isenabled()


def test_pauses_that_never_stop_overlapping_still_let_it_run_now_and_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(collector, "LONGEST", 0.0)
    generations: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        with paused():
            with paused():
                pass
            assert generations == [0]
            assert not gc.isenabled()
    finally:
        gc.callbacks.remove(seen)
    assert gc.isenabled()


def test_a_pause_that_leaves_many_objects_alive_freezes_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a cold return decodes into the caches outlives it: no collection walks it again."""
    monkeypatch.setattr(collector, "FREEZE_AFTER", 1_000)
    gc.collect()
    gc.unfreeze()
    try:
        with paused():
            cached = [[n] for n in range(2_000)]
        assert gc.get_freeze_count() >= len(cached)
        assert gc.isenabled()
    finally:
        gc.unfreeze()


class _Node:
    """A reference cycle a weak reference can watch."""

    def __init__(self) -> None:
        self.me = self


def _cycles(n: int) -> None:
    """Leave ``n`` unreachable reference cycles for the collector."""
    for _ in range(n):
        pair: list[Any] = []
        pair.append(pair)


def test_cyclic_garbage_frozen_by_pauses_is_collected_once_memory_has_grown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server's large returns each froze the cycles its requests had left: memory grew
    without end. Once it has grown `GROWTH` times (here 1.02), a freeze collects first."""
    monkeypatch.setattr(collector, "FREEZE_AFTER", 1_000)
    monkeypatch.setattr(collector, "GROWTH", 1.02)
    monkeypatch.setattr(collector, "_clean", 0)
    gc.collect()
    gc.unfreeze()
    try:
        with paused():
            node = _Node()
            watched = weakref.ref(node)
            del node
            cached = [[n] for n in range(2_000)]
        assert watched() is not None  # frozen with the rest, as before
        held = []
        for _ in range(8):
            with paused():
                _cycles(sys.getallocatedblocks() // 100)
            held.append(sys.getallocatedblocks())

        assert watched() is None
        assert max(held) < 1.1 * collector._clean
        assert len(cached) == 2_000
    finally:
        gc.unfreeze()


def test_a_servers_first_large_pause_freezes_without_collecting_and_is_the_base(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cold return after a server started: collecting would walk all it decoded."""
    monkeypatch.setattr(collector, "FREEZE_AFTER", 1_000)
    monkeypatch.setattr(collector, "GROWTH", 1.02)
    monkeypatch.setattr(collector, "_clean", 0)
    threshold = gc.get_threshold()
    collector.tune_for_server()
    full: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    gc.collect()
    gc.unfreeze()
    gc.callbacks.append(count)
    try:
        with paused():
            cached = [[n] for n in range(sys.getallocatedblocks())]

        assert full == []
        assert collector._clean >= len(cached)
        assert gc.get_freeze_count() >= len(cached)
    finally:
        gc.callbacks.remove(count)
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_a_pause_that_leaves_little_alive_freezes_nothing() -> None:
    gc.collect()
    gc.unfreeze()
    with paused():
        _ = [[n] for n in range(2_000)]  # freed before the pause ends
        del _
    assert gc.get_freeze_count() == 0


def test_what_a_pause_leaves_alive_is_not_walked_before_it_can_die() -> None:
    """A return's objects outlive its pause only until the caller drops them."""
    gc.collect()
    first = gc.get_threshold()[0]
    collections: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        with paused():
            decision = [[n] for n in range(first + 5_000)]  # alive when the pause ends
        after = [[n] for n in range(first // 2)]  # one would have set off a collection of them
        assert collections == []
        del decision, after
        gc.collect(0)
        assert gc.get_threshold()[0] == first  # put back by the next collection
    finally:
        gc.callbacks.remove(seen)


def test_admit_decides_with_the_collector_paused_and_puts_it_back() -> None:
    # A library caller of `admit` (not through `decide`) gets the same pause.
    seen: list[bool] = []

    class Watching(HmacSha256Signer):
        def sign(self, data: bytes) -> str:
            seen.append(gc.isenabled())
            return super().sign(data)

    gc.enable()
    decision = admit(
        context((item("a", "A fact."),)), policy=Policy(), verifier=None, signer=Watching(KEY)
    )

    assert decision.outcome == "issued"
    assert seen
    assert not any(seen)
    assert gc.isenabled()


def test_a_returns_screener_is_freed_when_the_return_ends_not_left_to_the_collector() -> None:
    """It held the `Touching` that held its bound method: a cycle through a return's
    context, pool and index, which a server's freeze then kept for good."""
    gc.collect()
    gc.disable()
    try:
        decision = admit(
            context((item("a", "A fact."), item("b", "Another fact."))),
            policy=Policy(),
            verifier=make_verifier("builtin"),
            signer=HmacSha256Signer(KEY),
        )
        left = [o for o in gc.get_objects() if isinstance(o, Screener)]
    finally:
        gc.enable()

    assert decision.outcome == "issued"
    assert left == []


class _Pausing:
    """Cyclic garbage whose finalizer pauses the collector (an application's object that
    records something through readmit when it goes)."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        with paused():
            pass


def test_a_finalizer_that_pauses_during_a_freezes_collection_does_not_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collection before a freeze ran under the collector's lock, and a finalizer it ran
    that paused waited on that lock for ever (a review's finding)."""
    monkeypatch.setattr(collector, "FREEZE_AFTER", 1_000)
    monkeypatch.setattr(collector, "GROWTH", 1.02)
    monkeypatch.setattr(collector, "_clean", 0)
    gc.collect()
    gc.unfreeze()
    finished = threading.Event()

    def pauses() -> None:
        with paused():
            base = [[n] for n in range(2_000)]
        _Pausing()
        with paused():
            grown = [[n] for n in range(sys.getallocatedblocks() // 10)]
        if base and grown:
            finished.set()

    worker = threading.Thread(target=pauses, daemon=True)
    try:
        worker.start()
        worker.join(timeout=60)
        assert finished.is_set()
    finally:
        gc.unfreeze()
