"""What a gate's exclusion says: the item's own field that failed, against the return.

A gate gives only its reason (`readmit.admission.gates`); the detail says which of the
item's settings failed it, so that an agent (or `readmit explain`) can tell an item meant
for another task from one that expired. Only what the returning agent may read is named:
an unauthorized item's detail is empty, since its scope is not the agent's to see.
"""

from readmit.admission.context import ReturnContext
from readmit.clock import format_time
from readmit.model import ANY, Item, Returner, Scope
from readmit.reasons import Reason


class GateDetails:
    """`gate_detail` for many items of one return.

    Items failing a gate for the same setting (a scope, most of a store's items share one;
    an end or a start of validity) are described once: 100k items failing a gate cost
    more than twice as much when each was described anew.
    """

    def __init__(self, ctx: ReturnContext) -> None:
        self.ctx = ctx
        self.said: dict[tuple[object, ...], str] = {}

    def __call__(self, reason: Reason, item: Item) -> str:
        key: tuple[object, ...]
        match reason:
            case Reason.NOT_APPLICABLE:  # the scope, kept alive by the item: its id is its own
                key = (reason, id(item.scope), item.for_role)
            case Reason.EXPIRED:
                key = (reason, item.validity.valid_to)
            case Reason.NOT_YET_VALID:
                key = (reason, item.epoch > self.ctx.epoch, item.validity.valid_from)
            case _:
                return gate_detail(reason, item, self.ctx)
        found = self.said.get(key)
        if found is None:
            found = self.said[key] = gate_detail(reason, item, self.ctx)
        return found


def gate_detail(reason: Reason, item: Item, ctx: ReturnContext) -> str:
    """Why ``item`` failed the gate that gave ``reason`` at the return ``ctx`` decides."""
    match reason:
        case Reason.NOT_YET_VALID:
            start = item.validity.valid_from
            if item.epoch > ctx.epoch or start is None:
                return "recorded after the state this return reads"
            return f"valid from {format_time(start)}"
        case Reason.EXPIRED:
            end = item.validity.valid_to
            return "" if end is None else f"valid until {format_time(end)}"
        case Reason.NOT_APPLICABLE:
            return inapplicable(item.scope, item.for_role, ctx.returner)
        case Reason.MISSING_RECEIPT:
            if item.receipt is None:
                return "no receipt: recorded as unconfirmed"
            missing = sorted(item.cites - ctx.evidence)
            if missing:
                return "cites evidence not on record: " + ", ".join(missing)
            return "its receipt does not bind its text to the event that recorded it"
        case Reason.OVER_ITEM_BUDGET:
            return f"{len(item.text)} characters, over the item budget"
    return ""


def inapplicable(scope: Scope, for_role: str | None, who: Returner) -> str:
    """Why an item of ``scope``, for ``for_role``, does not apply to the return ``who`` makes."""
    parts = []
    if scope.task not in (ANY, who.task):
        parts.append(f"for task {scope.task!r}; this return is to {who.task!r}")
    if ANY not in scope.purposes and who.purpose not in scope.purposes:
        named = ", ".join(repr(p) for p in sorted(scope.purposes))
        parts.append(f"for purposes {named}; this return is for {who.purpose!r}")
    if for_role is not None and for_role != who.role:
        parts.append(f"for role {for_role!r}; the returning agent's is {who.role!r}")
    return "; ".join(parts)
