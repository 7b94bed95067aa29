"""Bounded memos of values that never change: per item, made again on demand.

The pipeline remembers what depends on an immutable item alone (a receipt's soundness, a
view entry's JSON and digest, a ``not_selected`` record) in plain dicts, read in C on
the hot path. Past its limit a memo starts over: dropping everything is cheaper than
tracking what was used last, and whatever it held is made again on the next miss.
"""

from collections.abc import Iterator, Sequence
from operator import is_, itemgetter
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

POOLS = 64
"""How many pools a stage's memo remembers: a few for each workspace returned to lately.
With four, next returns rotating over eight workspaces found none of their passes and took
1.9 times as long as over two."""
PER_LINEAGE = 4
"""How many of those pools may share a lineage (one workspace's): more would keep a large
workspace's earlier epochs alive for nothing (32 kept 280 MB more at 100k items)."""
ITEMS = 1_000_000
"""The most items the pools of one memo hold in all: the bound of the store's decoded
items (`readmit.store.bodies`), so memos keep few pools alive that the store let go."""


def keep(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """Remember ``value`` under ``key`` in ``memo`` (emptied first when it holds ``limit``)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


def extends(longer: tuple[Any, ...], shorter: tuple[Any, ...]) -> bool:
    """Whether ``longer`` starts with the very objects of non-empty ``shorter`` (in C).

    Answered at once for a tuple made from the other (`grown_from`); else compared object
    by object, 100k of them in 1–2 ms.
    """
    n = len(shorter)
    if not 0 < n <= len(longer):
        return False
    made = _LINEAGE.get(id(longer))
    if made is not None and made[0] is longer and made[1] is shorter:
        return True
    return longer[n - 1] is shorter[-1] and all(map(is_, shorter, longer))


def lineage(pool: Sequence[Any]) -> object:
    """What `Newest` groups values by: the first object of the pool they were made for."""
    return pool[0] if pool else None


def grown_from(longer: tuple[Any, ...], shorter: tuple[Any, ...]) -> tuple[Any, ...]:
    """``longer``, noted as made by extending ``shorter`` (``shorter + more``), for `extends`.

    A store makes C's items and Δ at a later epoch from those at an earlier one; each memo
    that grows a value from the earlier tuples would otherwise compare them whole.
    """
    if shorter:
        _LINEAGE.put(id(longer), (longer, shorter), len(longer), lineage(longer))
    return longer


class Newest(Generic[K, V]):
    """The values last put under their keys: at most ``size`` of them, and `ITEMS` items in all.

    Each value is put with the number of items it holds (or keeps alive), and its lineage:
    the first item of its pool, which every pool a store makes for one workspace shares
    (C's first item). Past ``per_lineage`` values of one lineage, or either bound, the
    oldest go; the newest stays whatever its size. A workspace's returns at later epochs
    find the last few of its own, and never push out another workspace's.

    Returns of different workspaces run in threads at once: a put makes a new dict and
    swaps it in, so a reader iterates one that never changes (two puts at once may keep
    only one of the two values, which a memo can afford).
    """

    def __init__(self, size: int = POOLS, per_lineage: int = PER_LINEAGE) -> None:
        self._size = size
        self._per_lineage = per_lineage
        self._state: tuple[dict[K, tuple[V, int, object]], int] = ({}, 0)
        """The values by key, oldest first, each with its items and lineage; their items."""

    def get(self, key: K) -> V | None:
        """The value put under ``key``, if it is still remembered."""
        found = self._state[0].get(key)
        return None if found is None else found[0]

    def values(self) -> list[V]:
        """The values remembered, oldest first."""
        return list(map(_FIRST, self._state[0].values()))

    def latest(self) -> Iterator[V]:
        """The values remembered, newest first."""
        return map(_FIRST, reversed(self._state[0].values()))

    def put(self, key: K, value: V, items: int, lineage: object) -> V:
        """Remember ``value`` under ``key`` as the newest, holding ``items`` items."""
        values, total = self._state
        values = dict(values)
        old = values.pop(key, None)
        total += items - (0 if old is None else old[1])
        kin = [k for k, held in values.items() if held[2] is lineage]
        for k in kin[: max(0, len(kin) + 1 - self._per_lineage)]:
            total -= values.pop(k)[1]
        values[key] = (value, items, lineage)
        while len(values) > 1 and (len(values) > self._size or total > ITEMS):
            total -= values.pop(next(iter(values)))[1]
        self._state = (values, total)
        return value


_FIRST = itemgetter(0)


_LINEAGE: Newest[int, tuple[tuple[Any, ...], tuple[Any, ...]]] = Newest()
"""Recent tuples `grown_from` another, by id, with it (both kept, so their ids stay theirs)."""


class Grown(Generic[V]):
    """Values derived from tuples, found again by the tuples' identity, or grown from them.

    A store hands every return at one epoch the same tuples of C's items and of Δ, and a
    return at a later epoch those tuples extended (`readmit.store.bodies.Departures`):
    `found` is the value made for the very same tuples; `base` the one made for the
    longest remembered tuples that these extend, each of them, with their lengths, so
    that only what follows them needs deriving. The last values are kept (`Newest`), each
    with its tuples (so their ids are not reused while remembered).
    """

    def __init__(self, size: int = POOLS) -> None:
        self._made: Newest[tuple[int, ...], tuple[tuple[tuple[Any, ...], ...], V]] = Newest(size)

    def found(self, *tuples: tuple[Any, ...]) -> V | None:
        """The value made for exactly these tuples."""
        found = self._made.get(tuple(map(id, tuples)))  # kept with its tuples: ids stay theirs
        return None if found is None or not all(map(is_, found[0], tuples)) else found[1]

    def base(self, *tuples: tuple[Any, ...]) -> tuple[tuple[int, ...], V] | None:
        """The value made for the longest remembered tuples these extend, with their lengths.

        Tried longest first, up to the first that these extend: each try compares every
        object of the remembered tuples, and returns at growing epochs remember tuples that
        each extend the last, so the first try usually answers. Tuples another workspace's
        store made start with other objects, and are passed over at their first.
        """
        first = lineage(tuples[0] if tuples else ())
        kin = [m for m in self._made.values() if m[0][0] and m[0][0][0] is first]
        for held, value in sorted(kin, key=_first_length, reverse=True):
            if all(map(extends, tuples, held)):
                return tuple(map(len, held)), value
        return None

    def put(self, tuples: tuple[tuple[Any, ...], ...], value: V) -> V:
        """Remember ``value`` as made for ``tuples``."""
        first = lineage(tuples[0] if tuples else ())
        self._made.put(tuple(map(id, tuples)), (tuples, value), sum(map(len, tuples)), first)
        return value


def _first_length(made: tuple[tuple[tuple[Any, ...], ...], Any]) -> int:
    return len(made[0][0])


class Passes(Generic[V]):
    """The last few results of a stage's pass over a pool, found again for the same pool.

    A return at the same epoch as an earlier one hands each stage the same items in the
    same order (new lists of the same objects), with the same other inputs: the stage's
    result is then the same, and finding it costs one comparison of the items by
    identity (in C) instead of a pass that builds new lists and records. ``inputs`` must
    compare equal only when the result would be the same; objects compared by identity
    go in as their ``id``, with the objects themselves in ``held`` so the ids stay theirs.
    """

    def __init__(self, size: int = POOLS) -> None:
        self._passes: Newest[int, tuple[Sequence[Any], object, object, V]] = Newest(size)
        self._puts = 0

    def get(self, pool: Sequence[Any], inputs: object) -> V | None:
        """The latest result remembered for ``pool`` (its items, by identity) and ``inputs``."""
        n = len(pool)
        for items, known, _, value in self._passes.latest():
            # Other workspaces' pools fail at their last item, before ``inputs`` (sets of
            # ids, equal from one workspace to the next) are compared.
            if (
                len(items) == n
                and (not n or items[-1] is pool[-1])
                and known == inputs
                and all(map(is_, items, pool))
            ):
                return value
        return None

    def put(
        self, pool: Sequence[Any], inputs: object, held: object, value: V, *, owned: bool = False
    ) -> V:
        """Remember ``value`` for ``pool`` and ``inputs`` (``held``: what ``inputs`` ids).

        ``pool`` is copied, unless ``owned``: a list the caller made for the pass and hands
        over, never to change it (copying 100k items at every new epoch cost 2% of a return).
        """
        self._puts += 1
        made = (pool if owned else tuple(pool), inputs, held, value)
        self._passes.put(self._puts, made, len(pool), lineage(pool))
        return value
