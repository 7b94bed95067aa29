"""Corrections a memory layer owes readmit, recorded before anything else on the same store.

A memory layer records a write in readmit, then makes it in its own store. When its store
fails and readmit then fails to record the undo too (its own store down for a moment, a
lost answer), readmit holds what the layer does not: a LangGraph value the inner store
never got, a memory Mem0 deleted. The next return would admit it, anyone's, and a
departure would checkpoint it. The layer leaves the undo here (`owe`), and every later
record, departure and return of a `Member` on the same store object records it first
(`settle`); while it cannot, they raise, naming what is owed (fail closed). A correction
works out what to record when it runs, from readmit's state then: a later write of the
same path has replaced what it would undo.

What is owed lives in this process only: one that exits owing leaves the write in readmit
for a return elsewhere to admit (it was logged when the undo failed).
"""

import threading
from collections.abc import Callable
from weakref import WeakKeyDictionary

Correction = Callable[[], object]
"""Records what makes readmit match the layer's store again; raises if it cannot."""


class _Owed:
    """The corrections owed on one store, oldest first."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # a correction records through `Member.record`: again
        self.corrections: list[tuple[str, Correction]] = []
        self.settling = False


_OWED: "WeakKeyDictionary[object, _Owed]" = WeakKeyDictionary()
_made = threading.Lock()


def owe(store: object, what: str, correction: Correction) -> None:
    """Leave ``correction`` for the next record, departure or return on ``store``.

    ``what``: what readmit holds that the layer does not, as an error names it.
    """
    with _made:
        owed = _OWED.get(store)
        if owed is None:
            owed = _OWED[store] = _Owed()
    with owed.lock:
        owed.corrections.append((what, correction))


def owing(store: object) -> list[str]:
    """What the corrections owed on ``store`` would correct, oldest first."""
    owed = _OWED.get(store)
    if owed is None:
        return []
    with owed.lock:
        return [what for what, _ in owed.corrections]


def settle(store: object) -> None:
    """Record the corrections owed on ``store``, oldest first (nothing owed: at once).

    Other threads wait until they are recorded; a correction's own recording goes on.

    Raises:
        Exception: what a correction raised, noting what readmit still holds; it and the
            ones after it stay owed.
    """
    owed = _OWED.get(store)
    if owed is None or not (owed.corrections or owed.settling):
        return
    with owed.lock:
        if owed.settling:  # this thread's correction, recording
            return
        todo, owed.corrections = owed.corrections, []
        owed.settling = True
        try:
            for n, (what, correction) in enumerate(todo):
                try:
                    correction()
                except BaseException as exc:  # an interrupt too: owed still
                    owed.corrections[:0] = todo[n:]
                    if not isinstance(exc, Exception):
                        raise
                    exc.add_note(
                        f"readmit still holds what a memory layer's store does not ({what}); "
                        "nothing is recorded, departed or returned on this store until that "
                        "is corrected, which each try does first"
                    )
                    raise
        finally:
            owed.settling = False
