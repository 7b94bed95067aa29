"""Standing verdicts: a confirmed implicit invalidation binds every later return.

The store keeps each invalidation a return confirmed, with its evidence, and
hands the ones that still stand to every later return context (any agent's).
They are applied before anything is judged, so a stale item never comes back
because a later return had nothing new to judge it against. The store lapses
a verdict when something restores its premise (see `readmit.store.verdicts`).
"""

from collections.abc import Iterable

from readmit.admission.context import ReturnContext
from readmit.model import Item
from readmit.reasons import Exclusion, Reason, Stage


def apply_standing(pool: Iterable[Item], ctx: ReturnContext) -> tuple[list[Item], list[Exclusion]]:
    """Split ``pool`` into items no standing verdict covers and the exclusions of the rest."""
    kept: list[Item] = []
    excluded: list[Exclusion] = []
    for item in pool:
        verdict = ctx.standing.get(item.id)
        if verdict is None:
            kept.append(item)
            continue
        excluded.append(
            Exclusion(
                item=item.id,
                reason=Reason.IMPLICITLY_INVALIDATED,
                stage=Stage.IMPLICIT,
                evidence=verdict.evidence,
                confidence=verdict.confidence,
                detail=f"confirmed at epoch {verdict.decided_epoch} by {verdict.detail}",
            )
        )
    return kept, excluded
