"""Bounded memos of values that never change: per item, made again on demand.

The pipeline remembers what depends on an immutable item alone (a receipt's soundness, a
view entry's JSON and digest, a ``not_selected`` record) in plain dicts, read in C on
the hot path. Past its limit a memo starts over: dropping everything is cheaper than
tracking what was used last, and whatever it held is made again on the next miss.
"""

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def keep(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """Remember ``value`` under ``key`` in ``memo`` (emptied first when it holds ``limit``)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
