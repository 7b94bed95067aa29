"""A batch the log holds already: answered with what was recorded, not refused or failed.

A client whose batch was committed but whose answer was lost (a connection cut as
PostgreSQL committed: the store says whether it committed is unknown) sends it again with
the same event ids. Each id is then already used and the batch would be refused, though
nothing is wrong: it is recorded, once. When every event of the batch is in the log, in
its order at consecutive epochs, and says exactly what was sent (its time aside, where the
server keeps time), the resend is answered with the events as recorded (part of a batch
sent again too: what it says is true of each). A batch whose COMMIT got no answer is
looked for the same way at once (`answered`): found, it is answered as recorded.
"""

from collections.abc import Sequence
from dataclasses import replace

from readmit.errors import InvalidEvent, StoreError
from readmit.events import Event, Recorded
from readmit.store.base import WorkStateStore
from readmit.store.deadline import LOOK_UP_WAIT, UNKNOWN


def resent(
    store: WorkStateStore,
    workspace: str,
    events: Sequence[Event],
    clocked: bool,
    wait: float | None = None,
) -> list[Recorded]:
    """``events`` as the log holds them, if it holds them as sent ([]: it does not).

    ``clocked``: the server kept time (`readmit.store.writer.Writer.append`'s ``clock``),
    so each event's time is the log's, not the one sent. ``wait``: as `Held.logged`'s
    (`LOOK_UP_WAIT` where the batch's outcome is unknown).

    Raises:
        StoreError: if the log cannot be read (a caller refusing the batch refuses it still).
    """
    if not events:
        return []
    epochs = store.logged(workspace, [event.id for event in events], wait)
    first = epochs.get(events[0].id, 0)
    if [epochs.get(event.id) for event in events] != list(range(first, first + len(events))):
        return []
    stored = store.events(workspace, first - 1, first + len(events) - 1)
    for sent, kept in zip(events, stored, strict=True):
        if kept.event != (replace(sent, at=kept.event.at) if clocked else sent):
            return []
    return stored


def sent_again(
    store: WorkStateStore,
    workspace: str,
    events: Sequence[Event],
    clock: object | None,
    refused: Exception,
) -> list[Recorded]:
    """`resent` for a batch `append` ``refused`` (with ``clock``, the server kept time).

    [] where the log cannot be read: the refusal stands, the cause noted on it. A batch
    sent again is refused at its first event (its id, or its time, is the log's already):
    one refused at another is not looked for.
    """
    if not events or getattr(refused, "event_id", None) != events[0].id:
        return []
    try:
        return resent(store, workspace, events, clock is not None)
    except StoreError as unread:
        refused.add_note(f"whether the log holds it already could not be read: {unread}")
        return []


def answered(
    store: WorkStateStore,
    workspace: str,
    events: Sequence[Event],
    clock: object | None,
    failed: Exception,
) -> list[Recorded]:
    """What `append` recorded of ``events`` though it ``failed``, as the log holds it.

    Refused, maybe sent again (`sent_again`); failed with its COMMIT unanswered, maybe
    committed all the same (read under the workspace's write lock, `Held.logged`: a COMMIT
    the server still finishes ends first). [] otherwise, or where the log cannot be read
    (noted on ``failed``).
    """
    if isinstance(failed, InvalidEvent):
        return sent_again(store, workspace, events, clock, failed)
    if not isinstance(failed, StoreError) or UNKNOWN not in str(failed):
        return []
    try:
        return resent(store, workspace, events, clock is not None, LOOK_UP_WAIT)
    except StoreError as unread:
        failed.add_note(f"whether the log holds it could not be read: {unread}")
        return []
