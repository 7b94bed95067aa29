"""Decoded values kept per store and workspace, within a bound on what they hold.

Items and logged events never change once committed (`readmit.store.bodies`), so one
decoding serves every later read. A cache's limit counts units of about one short item: a
value costs one unit, and one more for each KiB of text it holds, so that a writer of long
texts (up to 16,384 characters each) cannot make a cache of a million values hold
gigabytes. Past its limit a cache starts over; the values it keeps again then are counted
without their text, which the next start over corrects.
"""

import threading
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Generic, TypeVar

from readmit.model import Item

K = TypeVar("K")
V = TypeVar("V")

CACHE_LIMIT = 1_000_000
"""Units a cache holds (one a value, and one for each KiB of its text: `kib`); past this
it starts over."""


def kib(value: object) -> int:
    """The KiB of text ``value`` holds: an item's, an obligation's, an event's item's."""
    text = getattr(value, "text", None)
    if text is None:
        text = getattr(getattr(getattr(value, "event", None), "item", None), "text", None)
    return len(text) >> 10 if isinstance(text, str) else 0


FEW = 1000
"""Keys a `BodyCache.fetch` that may read only the missing bodies reads so; more are read
with every other body, in one scan."""


def units(values: Sequence[object]) -> int:
    """What ``values`` cost a cache: one unit a value and one a KiB of its text (`kib`)."""
    if values and isinstance(values[0], Item):  # a text each, measured in C
        return len(values) + (sum(map(len, map(_TEXT, values))) >> 10)
    return len(values) + sum(map(kib, values))


_TEXT = attrgetter("text")


class BodyCache(Generic[K, V]):
    """Decoded values by workspace and key, shared by the threads of one store."""

    def __init__(self, limit: int = CACHE_LIMIT) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, dict[K, V]] = {}
        self._size = 0  # units (`CACHE_LIMIT`) of the values held
        self._filling: dict[str, threading.Lock] = {}
        self.limit = limit

    def get(self, workspace: str, keys: list[K]) -> dict[K, V]:
        """What the cache already holds of ``keys`` in ``workspace``."""
        with self._lock:
            held = self._values.get(workspace, {})
            return {k: held[k] for k in keys if k in held}

    def keep(self, workspace: str, values: dict[K, V], text: int | None = None) -> None:
        """Add ``values`` (starting over when the cache would pass its limit).

        ``text``: the KiB of text those it does not hold yet hold, where the caller
        counted them (`fetch`, from their bodies); else read from them (`kib`).
        """
        with self._lock:
            held = self._values.get(workspace, {})
            if text is None:
                text = sum(kib(v) for k, v in values.items() if k not in held)
            if self._size + len(values) + text > self.limit:
                self._values.clear()
                self._size = 0
            held = self._values.setdefault(workspace, {})
            before = len(held)
            held.update(values)
            self._size += len(held) - before + text

    def fetch(
        self,
        workspace: str,
        keys: list[K],
        rows: Callable[[], Iterable[tuple[K, str]]],
        decode: Callable[[K, str], V],
        few: Callable[[list[K]], Iterable[tuple[K, str]]] | None = None,
    ) -> list[V]:
        """``keys``' values in order, decoding the bodies ``rows()`` reads that the cache lacks.

        One thread fills a workspace at a time: returns that start together on a cold
        store wait for the first one's decoding instead of each decoding the same rows.
        ``few``: how to read the bodies of only the keys it lacks, where they are at most
        `FEW` (written since the last read): reading every body again for one new item
        took 190 ms of a 100k-item workspace's next read.
        """
        with self._lock:
            held = self._values.get(workspace, {})
            try:
                return [held[k] for k in keys]  # warm: every value already decoded
            except KeyError:
                filling = self._filling.setdefault(workspace, threading.Lock())
        with filling:
            found = self.get(workspace, keys)
            if len(found) < len(keys):
                text = 0
                lacking = [k for k in keys if k not in found] if few else []
                for key, body in few(lacking) if few and len(lacking) <= FEW else rows():
                    if key not in found:
                        value = found[key] = decode(key, body)
                        if len(body) >> 10:  # a shorter body holds less than a KiB of text
                            text += kib(value)  # not the body's: it escapes non-ASCII text
                self.keep(workspace, found, text)
        return [found[k] for k in keys]
