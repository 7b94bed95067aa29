"""How far a return's screening holds for every reader: the watermarks it may keep.

A return screens an item against the later events as its own context quotes them. A
withdrawal of an item its checkpoint does not hold (one its agent may not read, or one
no longer valid when it departed) cannot be quoted: a verifier that judges only
withdrawals is not shown it, one that judges news sees no withdrawal in it. An agent
whose checkpoint holds that item is shown the withdrawal, and may find the item
invalidated by it. Screening watermarks bind every later return, of every agent
(`readmit.store.verdicts`), so each is kept only up to the event before the first such
withdrawal after the item's start: the next return screens the item from there, with
its own context.
"""

import bisect
from collections.abc import Mapping, Sequence

from readmit.admission.context import ReturnContext
from readmit.events import Assert, Close, Revoke, Supersede


def unquoted(ctx: ReturnContext) -> list[int]:
    """The epochs, in order, of Δ's withdrawals of items C does not hold.

    A revocation, closing or supersession names its target; a keyed assert withdraws
    the item its key held, which C holds unless the store says a key was held before
    the departure by an item D_a lacks (`ReturnContext.hidden_keys`; without it, every
    key is taken to be, which only keeps less).
    """
    epochs: list[int] = []
    keyed: dict[str, int] = {}  # each key's first assert in Δ: later ones replace C's items
    for recorded in ctx.delta:
        event = recorded.event
        if isinstance(event, Revoke | Close | Supersede):
            if event.target not in ctx.by_id:
                epochs.append(recorded.epoch)
        elif isinstance(event, Assert) and event.item.key is not None:
            keyed.setdefault(event.item.key, recorded.epoch)
    if keyed:
        hidden = keyed.keys() if ctx.hidden_keys is None else ctx.hidden_keys(list(keyed))
        epochs += [keyed[key] for key in hidden if key in keyed]
    return sorted(epochs)


def kept(
    screened: Mapping[str, int], starts: Mapping[str, int], withdrawals: Sequence[int]
) -> dict[str, int]:
    """``screened``'s watermarks, each cut before the first of ``withdrawals`` after its start.

    ``withdrawals``: `unquoted`'s epochs, in order.
    """
    if not withdrawals:
        return dict(screened)
    cut = {}
    for item, through in screened.items():
        after = bisect.bisect_right(withdrawals, starts[item])
        cut[item] = min(through, withdrawals[after] - 1) if after < len(withdrawals) else through
    return cut
