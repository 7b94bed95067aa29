"""Stage 1, capture: the candidate pool P drawn from C.

Deliberately generous (TRACE §3.1): omitting a record here is irreversible,
whereas later gates can still reject a false positive.
"""

from readmit.admission.context import ReturnContext
from readmit.model import Item


def capture(ctx: ReturnContext) -> tuple[Item, ...]:
    """P: every item of C plus each open obligation and its progress frontier."""
    structure = [item for o in ctx.obligations for item in (o.item, o.frontier)]
    return (*ctx.items, *structure)
