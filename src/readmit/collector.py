"""Python's cyclic garbage collector, paused while a return or a batch of events is handled.

A return on a large workspace allocates hundreds of thousands of small objects
(decoded items, parsed events, exclusions, the record's JSON), and recording a batch
of events about as many. Reference counting frees every one of them: none forms a
cycle. Meanwhile the cyclic collector, triggered by allocation counts alone, keeps
scanning the young ones and, at each full collection, every object the process holds,
the decoded items of every cached workspace included. On a 100k-item SQLite workspace
(a scratch script, collector on and off alternated) a warm return took 15–40% less
time with it off (four pairs) and a cold one 30–40% less (two pairs).

`paused` turns it off for the extent of the work and back on afterwards, counting
nested and concurrent pauses (the service decides returns on several threads), so it
resumes when the last one ends, and only if it was on when the first began. The pause
is process-wide: cyclic garbage other threads make meanwhile is collected once no
pause is running, as it would be at the collector's next turn. A process that keeps
pauses running back to back never lets the collector run; `paused` then lets it run
one collection of the young generation every `LONGEST` seconds of overlap.

A pause that leaves many objects alive (a cold return decodes a workspace's items into
the store's caches) ends with `gc.freeze`: they live as long as the caches, hold no
cycle, and no later collection need walk them again (at 100k items, in a scratch script,
warm returns' p50 went from 737 / 913 to 632 / 656 ms). Reference counting still frees
them when a cache lets them go. Whatever else is alive at that moment is frozen with
them, cyclic garbage included, which no collection would then free: a server whose large
returns each froze a cycle through the last one's data (its screener's, since broken)
grew by 7 MB a return, without end. So once the process holds a
quarter more memory blocks than after the last freeze that collected first
(`sys.getallocatedblocks`), the next freeze puts everything back, collects, and freezes
again (`_freeze`): frozen garbage is bounded by what the process rightly holds, and the
cost of that collection (about 200 ms at 100k decoded items) is paid only when memory
has grown by a quarter (`GROWTH`), and not by the process's first freeze (a cold
return's). A pause that leaves fewer alive, but more
than the first threshold (a warm return's context, decision and record, which its caller
is about to drop), raises that threshold above them until the next collection
(`_defer_young`), so no collection walks them at the pause's end. A server process also
sets its collector up once (`tune_for_server`).
"""

import gc
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

LONGEST = 10.0
"""Seconds of unbroken pauses after which a collection of the young generation runs."""
FREEZE_AFTER = 100_000
"""Objects left alive by a pause (``gc.get_count()[0]``) from which they are frozen."""
GROWTH = 1.25
"""How many times the memory blocks held after the last clean freeze the process may
hold before a freeze collects first (`_freeze`)."""
YOUNG = 50_000
"""A server's first threshold: containers allocated (less those freed) before the
youngest generation is collected (CPython's default is 700)."""

_lock = threading.Lock()
_depth = 0
_resume = False
_since = 0.0


@contextmanager
def paused() -> Iterator[None]:
    """Run the body with the cyclic collector off (if it was on), then put it back."""
    global _depth, _resume, _since
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            _since = time.monotonic()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        clean = False
        with _lock:
            _depth -= 1
            turn = _depth > 0 and _resume and time.monotonic() - _since > LONGEST
            if turn:
                _since = time.monotonic()
            elif _depth == 0 and _resume:
                if gc.get_count()[0] >= FREEZE_AFTER:
                    clean = _freeze()  # long-lived (the caches a cold return filled)
                else:
                    _defer_young()
                gc.enable()
        if turn:  # pauses overlap without end: a short turn for the collector, unlocked
            gc.collect(0)
        if clean:  # unlocked too: a finalizer the collection runs may pause in its turn
            _collect_and_freeze()


_clean = 0
"""Memory blocks the process held after the last freeze that collected first, or at its
first freeze (0: none yet)."""


def _freeze() -> bool:
    """Freeze what is alive, or say that memory grew `GROWTH` times since the base.

    In that case (``True``) the caller collects before it freezes (`_collect_and_freeze`),
    once it no longer holds `_lock`. The process's first freeze (a cold return filled the
    caches) does not collect, which would walk all it decoded: what it holds is the base.
    `sys.getallocatedblocks` is read only here, at the end of a large pause (it walks the
    allocator's arenas: 0.2 ms at 9M blocks).
    """
    global _clean
    held = sys.getallocatedblocks()
    if _clean == 0:
        _clean = held
    elif held > GROWTH * _clean:
        return True
    gc.freeze()
    return False


def _collect_and_freeze() -> None:
    """Put what is frozen back, collect the garbage among it, freeze what is left."""
    global _clean
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _clean = sys.getallocatedblocks()


_young_base: int | None = None
"""The first threshold `_defer_young` raised, until the next collection puts it back."""


def _defer_young() -> None:
    """Let what the pause leaves alive die before a collection of the young walks it.

    A return's objects (its context, decision and record) are still alive when its pause
    ends, and usually outnumber the first threshold, so the next allocation would set
    off a collection walking them all (at 100k items, about 50 ms of a 700 ms return)
    just before the caller drops them. The threshold is raised above them instead, and
    put back by the next collection of any generation: cyclic garbage waits at most one
    threshold's worth of allocations more than it otherwise would.
    """
    global _young_base
    young = gc.get_count()[0]
    first, older, oldest = gc.get_threshold()
    base = first if _young_base is None else _young_base
    if young <= base:
        return
    if _young_base is None:
        _young_base = base
        if _put_back not in gc.callbacks:
            gc.callbacks.append(_put_back)
    gc.set_threshold(young + base, older, oldest)


def _put_back(phase: str, info: dict[str, int]) -> None:
    """After a collection: the first threshold `_defer_young` raised goes back.

    No lock: it runs inside a collection, perhaps in a thread that holds `_lock`. A race
    with `_defer_young` can only leave a threshold raised until the next collection.
    """
    global _young_base
    if phase == "stop" and _young_base is not None:
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(_young_base, older, oldest)
        _young_base = None


def tune_for_server() -> None:
    """Collect once, keep what is loaded out of later collections, raise the first threshold.

    Call it in a server process once its service is built: what exists then (modules,
    schemas, the store) lives as long as the process, so `gc.freeze` spares every later
    full collection from walking it again. Outside `paused` work (HTTP parsing and
    answers, the audit log's reads), a request's containers then die young instead of
    reaching the oldest generation: under ``bench/service.py`` (16 agents returning) the
    collector took about a fifth of the server's CPU, some 9 ms a return, and under 1 ms
    with `YOUNG`. Only reference cycles wait for a collection; a larger threshold delays
    freeing at most `YOUNG` containers. The older generations keep their thresholds.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG, older, oldest)
