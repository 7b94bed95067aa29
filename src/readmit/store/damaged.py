"""Decoding what the database holds: a body readmit did not write is a `DamagedStore`.

Every item, event and obligation body in the store was written by readmit
(`readmit.store.encoding`). One changed behind its back (a hand edit, a damaged disk)
failed every read and write that met it with a ``TypeError`` (a 500), or, for a logged
event, as the reader's own invalid event naming another principal's event id (a probe).
It is now a `DamagedStore`, whose message names nothing of the row; the server's log names
it, once for each row (`_told`): every request meeting it logged a line (a review).
"""

import json
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from readmit.errors import DamagedStore, InvalidInput
from readmit.events import Recorded
from readmit.model import Item, Obligation
from readmit.wire.codec import event_from_json, item_from_json, obligation_from_json
from readmit.wire.logged import loads

_log = logging.getLogger("readmit.store")
T = TypeVar("T")

_UNREAD = (ValueError, TypeError, LookupError, AttributeError, RecursionError, InvalidInput)
"""What decoding a body readmit did not write raises (pydantic's errors are ValueErrors)."""
TOLD_MOST = 4096
"""Damaged rows the log remembers having named; past that it starts over."""
_told: set[str] = set()
_lock = threading.Lock()


def decoded_item(body: str, item_id: str = "") -> Item:
    """The item a stored ``body`` holds (``item_id``: its row's, for the log).

    Raises:
        DamagedStore: if readmit did not write it.
    """
    return _decoded(item_from_json, body, "item", item_id)


def decoded_event(epoch: int, body: str) -> Recorded:
    """The event logged at ``epoch`` as ``body``.

    Raises:
        DamagedStore: if readmit did not write it.
    """
    try:
        return Recorded(epoch=epoch, event=event_from_json(loads(body), epoch))
    except _UNREAD as exc:
        raise _damaged(
            f"the event logged at epoch {epoch}", f"event at epoch {epoch}", exc
        ) from None


def decoded_obligation(body: str, obligation_id: str = "") -> Obligation:
    """The obligation a stored ``body`` holds (``obligation_id``: its row's, for the log).

    Raises:
        DamagedStore: if readmit did not write it.
    """
    return _decoded(obligation_from_json, body, "obligation", obligation_id)


def decoded_ids(text: str, what: str) -> tuple[str, ...]:
    """The ids a stored JSON list ``text`` holds (``what``: the column, for the log).

    Raises:
        DamagedStore: if it is not a list of strings.
    """
    found = decoded_list(text, what)
    ids = tuple(i for i in found if isinstance(i, str))
    if len(ids) < len(found):
        raise _damaged(what, f"{what} {text[:100]!r}", TypeError("not a list of strings"))
    return ids


def decoded_list(text: str, what: str) -> list[object]:
    """The stored JSON list ``text`` (``what``: the column, for the log).

    Raises:
        DamagedStore: if it is not a JSON list.
    """
    try:
        found = json.loads(text)
    except _UNREAD as exc:
        raise _damaged(what, f"{what} {text[:100]!r}", exc) from None
    if not isinstance(found, list):
        raise _damaged(what, f"{what} {text[:100]!r}", TypeError("not a list"))
    return found


def _decoded(decode: Callable[[Any], T], body: str, kind: str, row_id: str) -> T:
    """``decode`` of the JSON ``body`` of a row of ``kind`` (``row_id``: its id, for the log)."""
    try:
        return decode(loads(body))
    except _UNREAD as exc:
        row = f"{kind} {row_id!r}" if row_id else f"{kind} whose body begins {body[:100]!r}"
        an = "an" if kind[0] in "aeiou" else "a"
        raise _damaged(f"{an} {kind} body", row, exc) from None


def _damaged(said: str, row: str, error: BaseException) -> DamagedStore:
    """The error for a damaged row, logged as a warning the first time (``row``: which)."""
    with _lock:
        first = row not in _told
        if first:
            if len(_told) >= TOLD_MOST:
                _told.clear()
            _told.add(row)
    (_log.warning if first else _log.debug)("the store's %s is damaged: %r", row, error)
    return DamagedStore(f"{said} in the store is damaged (the server's log says which)")
