"""Stage 6, source-bound readmission of private experiences (TRACE §3.5).

A private experience is reinstated only when the work-state item it was bound
to is in a *verified* view. Everything else stays stored and auditable but
cannot serve as a premise: functional forgetting at the retrieval boundary.
"""

from collections.abc import Iterable

from readmit.admission.view import VerifiedView
from readmit.model import Experience


def readmit(
    view: VerifiedView, experiences: Iterable[Experience]
) -> tuple[tuple[Experience, ...], tuple[Experience, ...]]:
    """Split the private bank into (readmitted, withheld) by source membership in ``view``."""
    sources = set(view.item_ids)
    readmitted: list[Experience] = []
    withheld: list[Experience] = []
    for experience in experiences:
        (readmitted if experience.source_item_id in sources else withheld).append(experience)
    return tuple(readmitted), tuple(withheld)
