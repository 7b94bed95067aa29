"""Bounded memos of values that never change: per item, made again on demand.

The pipeline remembers what depends on an immutable item alone (a receipt's soundness, a
view entry's JSON and digest, a ``not_selected`` record) in plain dicts, read in C on
the hot path. Past its limit a memo starts over: dropping everything is cheaper than
tracking what was used last, and whatever it held is made again on the next miss.
"""

from operator import is_
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def keep(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """Remember ``value`` under ``key`` in ``memo`` (emptied first when it holds ``limit``)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


def extends(longer: tuple[Any, ...], shorter: tuple[Any, ...]) -> bool:
    """Whether ``longer`` starts with the very objects of ``shorter`` (compared in C).

    A store hands a return at a later epoch the tuples of an earlier one extended
    (`readmit.store.bodies.Departures`): what was derived from those can be extended too.
    """
    n = len(shorter)
    return 0 < n <= len(longer) and longer[n - 1] is shorter[-1] and all(map(is_, shorter, longer))
