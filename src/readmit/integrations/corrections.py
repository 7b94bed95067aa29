"""Corrections a memory layer owes readmit, recorded before anything else on the same store.

A memory layer records a write in readmit, then makes it in its own store. When its store
fails and readmit then fails to record the undo too (its own store down for a moment, a
lost answer, an interrupt), readmit holds what the layer does not: a LangGraph value the
inner store never got, a memory Mem0 deleted. The next return would admit it, anyone's,
and a departure would checkpoint it. The layer leaves the undo here (`owe`), and every
later record, departure, return and live read of a `Member` on the same store object
records it first (`settle`); while it cannot, they raise, naming what is owed (fail
closed). A correction works out what to record when it runs, from readmit's state then.

One readmit refuses is dropped, with an error logged: the state it was worked out from
has changed past it, and kept, it would stop every write on the store for good. What is
owed lives in this process: one that exits owing tries once more, and logs an error
naming what stays in readmit if it cannot.
"""

import atexit
import logging
import threading
from collections.abc import Callable
from weakref import WeakKeyDictionary

from readmit.errors import InvalidInput

log = logging.getLogger("readmit.integrations")

Correction = Callable[[], object]
"""Records what makes readmit match the layer's store again; raises if it cannot."""


class _Due:
    """The corrections owed on one store, oldest first."""

    def __init__(self) -> None:
        self.turn = threading.RLock()
        """Held while they are recorded: other threads' records wait (a correction's own
        recording, on the same thread, goes on)."""
        self.listed = threading.Lock()  # the list alone: `owe` never waits for a turn
        self.corrections: list[tuple[str, Correction]] = []
        self.settling = False


_DUE: "WeakKeyDictionary[object, _Due]" = WeakKeyDictionary()
_made = threading.Lock()
_exiting: list[bool] = []  # the exit hook, once registered


def owe(store: object, what: str, correction: Correction) -> None:
    """Leave ``correction`` for the next record, departure, return or live read on ``store``.

    ``what``: what readmit holds that the layer does not, as an error names it.
    """
    with _made:
        due = _DUE.get(store)
        if due is None:
            due = _DUE[store] = _Due()
            if not _exiting:
                _exiting.append(True)
                atexit.register(_at_exit)
    with due.listed:
        due.corrections.append((what, correction))


def owing(store: object) -> list[str]:
    """What the corrections owed on ``store`` would correct, oldest first."""
    due = _DUE.get(store)
    if due is None:
        return []
    with due.listed:
        return [what for what, _ in due.corrections]


def settle(store: object) -> None:
    """Record the corrections owed on ``store``, oldest first (nothing ever owed: at once).

    Other threads wait until they are recorded.

    Raises:
        Exception: what a correction raised, noting what readmit still holds; it and the
            ones after it stay owed (refused by readmit: dropped, `_refused`).
    """
    due = _DUE.get(store)
    if due is None:
        return
    with due.turn:
        if due.settling:  # this thread's own correction, recording
            return
        due.settling = True
        try:
            while True:
                with due.listed:
                    if not due.corrections:
                        return
                    what, correction = due.corrections[0]
                try:
                    correction()
                except InvalidInput as refused:
                    _refused(what, refused)
                except Exception as exc:
                    exc.add_note(
                        f"readmit still holds what a memory layer's store does not ({what}); "
                        "nothing is recorded, departed or returned on this store until that "
                        "is corrected, which each try does first"
                    )
                    raise
                with due.listed:  # done (or refused): an interrupt before this retries it
                    due.corrections.pop(0)
        finally:
            due.settling = False


def _refused(what: str, refused: InvalidInput) -> None:
    log.error(
        "readmit refused a correction a memory layer owed, which is dropped: %s (%s)",
        what,
        refused,
    )


def _at_exit() -> None:
    """Try once more what is owed; log what stays in readmit."""
    for store in list(_DUE):
        try:
            settle(store)
        except Exception as exc:  # the store closed or still failing
            for what in owing(store):
                log.error(
                    "exiting with a correction unrecorded: readmit still holds %s (%s)", what, exc
                )
