"""Decoding what the database holds: a body readmit did not write is a `DamagedStore`.

Every item and event body in the store was written by readmit (`readmit.store.encoding`).
One changed behind its back (a hand edit, a damaged disk) failed every read that met it
with a ``TypeError`` (a 500), or, for a logged event, as the reader's own invalid event
naming another principal's event id (a probe). It is now a `DamagedStore`, whose message
names nothing of the row; the server's log names it for the operator.
"""

import logging

from readmit.errors import DamagedStore, InvalidInput
from readmit.events import Recorded
from readmit.model import Item, Obligation
from readmit.wire.codec import event_from_json, item_from_json, obligation_from_json
from readmit.wire.logged import loads

_log = logging.getLogger("readmit.store")

_UNREAD = (ValueError, TypeError, KeyError, AttributeError, RecursionError, InvalidInput)
"""What decoding a body readmit did not write raises (pydantic's errors are ValueErrors)."""


def decoded_item(body: str, item_id: str = "") -> Item:
    """The item a stored ``body`` holds (``item_id``: its row's, for the log).

    Raises:
        DamagedStore: if readmit did not write it.
    """
    try:
        return item_from_json(loads(body))
    except _UNREAD as exc:
        _log.warning("the body of item %r in the store is damaged: %r", item_id, exc)
        raise DamagedStore(
            "an item body in the store is damaged (the server's log says which)"
        ) from None


def decoded_event(epoch: int, body: str) -> Recorded:
    """The event logged at ``epoch`` as ``body``.

    Raises:
        DamagedStore: if readmit did not write it.
    """
    try:
        return Recorded(epoch=epoch, event=event_from_json(loads(body), epoch))
    except _UNREAD as exc:
        _log.warning("the event logged at epoch %s is damaged: %r", epoch, exc)
        raise DamagedStore(f"the event logged at epoch {epoch} is damaged") from None


def decoded_obligation(body: str, obligation_id: str = "") -> Obligation:
    """The obligation a stored ``body`` holds (``obligation_id``: its row's, for the log).

    Raises:
        DamagedStore: if readmit did not write it.
    """
    try:
        return obligation_from_json(loads(body))
    except _UNREAD as exc:
        _log.warning("the body of obligation %r in the store is damaged: %r", obligation_id, exc)
        raise DamagedStore(
            "an obligation body in the store is damaged (the server's log says which)"
        ) from None
