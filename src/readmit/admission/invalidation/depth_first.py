"""Deciding items whose premises must be decided first, on a stack of its own, not Python's.

An item holds only if the items it rests on hold, and each of those only if theirs do: a
chain of thousands of items, each resting on the next, is an ordinary workspace, and
deciding it by recursion ran out of Python's stack (about 330 deep; `RecursionError`).
"""

from collections.abc import Callable, Generator
from typing import TypeVar

T = TypeVar("T")

Deciding = Generator[T, bool | None, bool]
"""One item's decision: it yields each item to decide before it, is sent whether that one
held, and returns its own."""


def decide(
    first: T, known: Callable[[T], bool | None], deciding: Callable[[T], Deciding[T]]
) -> bool:
    """Whether ``first`` holds: ``known(item)``, else ``deciding(item)`` run to its end.

    Depth first, in the order each decision asks: the same order, and the same decisions,
    as a recursive walk.
    """
    walk: list[Deciding[T]] = []
    needed: T | None = first
    held: bool | None = None
    while True:
        if needed is not None:  # an item to decide before the one that asked for it
            held = known(needed)
            if held is None:
                walk.append(deciding(needed))
        if not walk:
            return bool(held)
        try:
            needed = walk[-1].send(held)
        except StopIteration as done:
            walk.pop()
            needed, held = None, done.value
