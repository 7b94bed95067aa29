"""A Mem0 read asked for more as the view removes what it returned, a page at a time.

A read asks Mem0 for ``top_k`` and as many more as the view removes, up to ``top_k``
more: asking for one more for each removed memory grew a search of 5 into one of 155
once memories withdrawn before the departure were removed too (a review). A page the
view left short is asked for again, twice as large each time, up to that many, until it
is full or Mem0 has no more.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from readmit.integrations.mem0.index import UNRECORDED, ViewIndex
from readmit.integrations.mem0.recorder import Recorder

Read = Callable[..., dict[str, Any]]
"""Mem0's read, of its first ``top_k`` results (given as ``top_k``)."""


def paged(readmit: Recorder, view: ViewIndex, read: Read, top_k: int) -> dict[str, Any]:
    """``read``'s results filtered by ``view``, ``top_k`` of them where Mem0 has.

    ``view``: what the read's own `Recorder.before_read` gave.
    """
    fetch, most = _sizes(view, top_k)
    while True:
        result = read(top_k=fetch)
        shown = readmit.filtered(view, result, top_k)
        most = max(most, _most(view, top_k, shown))
        if _done(shown, result, fetch, most, top_k):
            return shown
        fetch = min(2 * fetch, most)


async def apaged(
    readmit: Recorder, view: ViewIndex, read: Callable[..., Awaitable[dict[str, Any]]], top_k: int
) -> dict[str, Any]:
    """`paged`, for an async Mem0."""
    fetch, most = _sizes(view, top_k)
    while True:
        result = await read(top_k=fetch)
        shown = readmit.filtered(view, result, top_k)
        most = max(most, _most(view, top_k, shown))
        if _done(shown, result, fetch, most, top_k):
            return shown
        fetch = min(2 * fetch, most)


def _sizes(view: ViewIndex, top_k: int) -> tuple[int, int]:
    """How many to ask Mem0 for first, and at most (``top_k`` and each one removed)."""
    most = top_k + len(view.removed)
    return min(most, 2 * top_k), most


def _most(view: ViewIndex, top_k: int, shown: dict[str, Any]) -> int:
    """At most how many to ask for, counting those hidden for a text changed around readmit.

    The view's removals do not hold those, and pages came back short (a review).
    """
    unrecorded = sum(r.get("detail") == UNRECORDED for r in shown["readmit"]["removed"])
    return top_k + len(view.removed) + int(unrecorded)


def _done(shown: dict[str, Any], result: dict[str, Any], fetch: int, most: int, top_k: int) -> bool:
    """Whether the page is full, Mem0 returned fewer than asked, or no more may be asked."""
    return len(shown["results"]) >= top_k or len(result.get("results", [])) < fetch or fetch >= most
