"""Corrections a memory layer owes readmit, recorded before anything else in the workspace.

A memory layer records a write in readmit, then makes it in its own store. When its store
fails and readmit then fails to record the undo too (its own store down for a moment, a
lost answer, an interrupt), readmit holds what the layer does not: a LangGraph value the
inner store never got, a memory Mem0 deleted. The next return would admit it, anyone's,
and a departure would checkpoint it. The layer leaves the undo here (`owe`), and every
later record, departure, return and live read of a `Member` of the same workspace on the
same store object records it first (`settle`); while it cannot, they raise, naming what is
owed (fail closed). A correction works out what to record when it runs, from readmit's
state then.

One readmit refuses is tried again (another process's write may have raced it), then
dropped with an error logged: kept, it would stop every write in the workspace for good.
`discard` drops what is owed, on purpose. What is owed lives in this process: one that
exits owing logs an error naming each correction left.
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
TRIES = 3
"""Times a correction readmit refuses is tried, one after another, before it is dropped."""


class _Due:
    """The corrections owed in one workspace of one store, oldest first."""

    def __init__(self) -> None:
        self.turn = threading.RLock()
        """Held while they are recorded: other threads' records wait (a correction's own
        recording, on the same thread, goes on)."""
        self.listed = threading.Lock()  # the list alone: `owe` never waits for a turn
        self.corrections: list[tuple[str, Correction]] = []
        self.settling = False


_DUE: "WeakKeyDictionary[object, dict[str, _Due]]" = WeakKeyDictionary()
_made = threading.Lock()


def owe(store: object, workspace: str, what: str, correction: Correction) -> None:
    """Leave ``correction`` for the next record, departure, return or live read there.

    ``what``: what readmit holds that the layer does not, as an error names it. While it is
    owed, the store object is kept alive.
    """
    with _made:
        due = _DUE.setdefault(store, {}).setdefault(workspace, _Due())
    with due.listed:
        due.corrections.append((what, correction))


def owing(store: object, workspace: str) -> list[str]:
    """What the corrections owed in ``workspace`` of ``store`` would correct, oldest first."""
    due = _DUE.get(store, {}).get(workspace)
    if due is None:
        return []
    with due.listed:
        return [what for what, _ in due.corrections]


def discard(store: object, workspace: str) -> list[str]:
    """Drop what is owed in ``workspace`` of ``store``, logging each; what was dropped.

    readmit keeps what the corrections would have corrected: revoke it by hand.
    """
    due = _DUE.get(store, {}).get(workspace)
    if due is None:
        return []
    with due.turn, due.listed:
        dropped = [what for what, _ in due.corrections]
        due.corrections.clear()
    for what in dropped:
        log.error("a correction a memory layer owed was discarded: readmit still holds %s", what)
    return dropped


def settle(store: object, workspace: str) -> None:
    """Record the corrections owed in ``workspace`` of ``store``, oldest first.

    Other threads wait until they are recorded. Nothing ever owed there: at once.

    Raises:
        Exception: what a correction raised, noting what readmit still holds; it and the
            ones after it stay owed (refused by readmit `TRIES` times: dropped, logged).
    """
    due = _DUE.get(store, {}).get(workspace)
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
                _record(what, correction)
                with due.listed:  # done (or dropped): an interrupt before this retries it
                    due.corrections.pop(0)
        finally:
            due.settling = False


def _record(what: str, correction: Correction) -> None:
    for tries in range(1, TRIES + 1):
        try:
            correction()
            return
        except InvalidInput as refused:
            if tries == TRIES:
                log.error(
                    "readmit refused a correction a memory layer owed %d times; it is "
                    "dropped, and readmit still holds %s (%s)",
                    TRIES,
                    what,
                    refused,
                )
        except Exception as exc:
            exc.add_note(
                f"readmit still holds what a memory layer's store does not ({what}); nothing "
                "is recorded, departed or returned in this workspace through this store until "
                "that is corrected, which each try does first"
            )
            raise


@atexit.register
def _at_exit() -> None:
    """Name each correction still owed (recording it now could wait on a locked store)."""
    for store, workspaces in list(_DUE.items()):
        for workspace in list(workspaces):
            for what in owing(store, workspace):
                log.error(
                    "exiting with a correction unrecorded: readmit still holds %s (workspace "
                    "%r); revoke it by hand",
                    what,
                    workspace,
                )
