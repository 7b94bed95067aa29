"""What the implicit stage did at one return: its spending, its findings, what the store keeps."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from readmit.reasons import Exclusion


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgment:
    """What the implicit stage did at one return, and what the store keeps of it."""

    verifier: str
    calls: int = 0
    """Verifier and dependency-scan calls made (cached verdicts included)."""
    scans: int = 0
    """Of ``calls``, those of the dependency scan."""
    pairs: int = 0
    """(later, earlier) pairs judged."""
    tokens: int = 0
    """LLM tokens the verifier reported for this return's calls."""
    unscreened: int = 0
    """Items withheld as ``unscreened`` because the budget was spent."""
    max_calls: int = 0
    max_tokens: int | None = None
    seconds: float = 0.0
    """Seconds spent waiting: on the verifier's and the dependency scan's calls, and before
    the decision on the return's turn in a service."""
    max_seconds: float | None = None
    steps: int = 0
    """Steps taken along chains of stand-ins and restatements (`Policy.walk_steps`): a walk
    finishing an item begun with steps left may take it past ``max_steps``."""
    max_steps: int = 0
    standing: int = 0
    """Stored verdicts that applied (no judgment needed)."""
    confirmed: tuple[Exclusion, ...] = ()
    """Invalidations confirmed at this return, for the store to keep."""
    premises: Mapping[str, str] = field(default_factory=dict)
    """Of ``confirmed``, the item each one rests on, by the invalidated item's id: what its
    judged observation withdrew, or brought as news (`restored.rests_on`). Of several items
    its event withdrew, it tells which (`readmit.store.restoring`)."""
    ends: Mapping[str, datetime] = field(default_factory=dict)
    """Of ``confirmed``, when the observation that confirmed each one ends (`implicit.ended`),
    where it does: the verdict stands no longer then."""
    screened: Mapping[str, int] = field(default_factory=dict)
    """Items judged valid, with the epoch they are now screened through."""
    screened_as: str = ""
    """What ``screened`` is kept under (`readmit.admission.invalidation.cache.screening_key`;
    ``verifier`` when empty): a screening binds only returns that would screen alike."""
    at: datetime | None = None
    """The time the return was judged as of: a verdict resting on an observation that ended
    by then no longer stands (`readmit.store.verdicts`), and one this return confirms may
    replace it."""
