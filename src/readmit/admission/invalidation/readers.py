"""A replacement some readers of what it replaced may not read, judged pair by pair.

A keyed item or supersession in other words replaces a statement only for those who may
read it. To a reader of both the judged item and the statement who may not, the
statement was withdrawn and nothing stands in its place: for an item such a reader
reads, the verifier is shown the withdrawal (a booking everyone read, rewritten for the
family alone, leaves the neighbours' pickup resting on nothing), and the rewrite as news,
as any news is shown to an item whoever may read it. For an item only the replacement's
readers read, or none who read the statement, it is shown as a replacement, as before.
The same words for fewer readers likewise: news filed again to an item whose readers of
the statement may all read them (the family's swim, while the pool stays closed for the
family), and a withdrawal and news to the others (`readmit.admission.invalidation.restored`).
"""

from collections.abc import Iterable

from readmit.admission.invalidation.implicit import Later, Readers
from readmit.model import ANY, Item, Scope


def fewer(old: Scope, readers: Readers) -> tuple[Readers, Readers] | None:
    """``(old's readers, readers)`` where some reader of ``old`` is not among ``readers``."""
    return None if old.read_within(*readers) else ((old.principals, old.roles), readers)


def as_read_by(item: Item, laters: Iterable[Later], news: bool = True) -> list[Later]:
    """``laters`` as ``item``'s readers see them: a replacement some of them lost, withdrawn.

    With ``news`` (a verifier that judges news), what it says is news all the same, as any
    item is to what readers it lacks may read (family-only "the pool is closed" makes
    everyone's swim stale): it comes first, so a verdict both confirm rests on it, as
    `observations._with_news` orders them.
    """
    shown: list[Later] = []
    for later in laters:
        if not _lost(item, later):
            shown.append(later)
        else:
            shown += (_news(later), _withdrawn(later)) if news else (_withdrawn(later),)
    return shown


def _lost(item: Item, later: Later) -> bool:
    """Whether a reader of ``item`` and of what ``later`` replaced may not read its replacement."""
    if later.fewer is None or later.replacement_text is None:
        return False
    (principals, roles), readers = later.fewer
    both = _common(item.scope.principals, principals), _common(item.scope.roles, roles)
    return bool(both[0] and both[1]) and not Scope(principals=both[0], roles=both[1]).read_within(
        *readers
    )


def _common(one: frozenset[str], other: frozenset[str]) -> frozenset[str]:
    """Those both sets name (``*``: everyone)."""
    return other if ANY in one else one if ANY in other else one & other


def _news(later: Later) -> Later:
    text = later.replacement_text or later.text  # `_lost`: never None here
    return later._replace(text=text, withdrawn_id=None, withdrawn_text=None, fewer=None)


def _withdrawn(later: Later) -> Later:
    return later._replace(text=f"No longer valid: {later.withdrawn_text}", replacement_text=None)
