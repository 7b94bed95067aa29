"""The server's garbage collector, set for requests that each hold many objects at once.

A return of a busy workspace holds tens of thousands of dicts and lists (its
exclusions, its view, its audit record) for as long as it runs, and sixteen
returns may run at once. CPython's default thresholds ``(700, 10, 10)`` collect
the youngest generation after 700 more containers are alive, many times within
each return, so nearly all of a return's objects outlive two young collections
and reach the oldest generation, whose collections walk the whole heap: the
loaded libraries, the store's caches and every return in flight. Measured under
``bench/service.py`` (16 agents returning), that was about a fifth of the
server's CPU, some 9 ms per return; with `YOUNG` it is under 1 ms.

Objects freed by reference counting (all of a return's, once it answers) never
wait for a collection; only reference cycles do, so a larger threshold delays
freeing at most `YOUNG` containers. Nothing in the answers changes.
"""

import gc

YOUNG = 50_000
"""Containers allocated (less those freed) before the youngest generation is collected."""


def tune_collector() -> None:
    """Collect once, keep what is loaded out of later collections, raise the first threshold.

    Call it in a server process once its service is built: what exists then (modules,
    schemas, the store) lives as long as the process, so `gc.freeze` spares every later
    full collection from walking it again. The older generations keep their thresholds.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG, older, oldest)
