"""Indexes of Δ's observations grown from the last return's, not rebuilt.

A return at a later epoch than the last gets the last one's observations extended
(`readmit.admission.invalidation.observations`), the very same objects first, so the
index over them (`readmit.admission.invalidation.scanner.Observations`) can be grown by
what follows: the index of Δ cost a return after ten new events at 100k items a seventh
of its time when it was built again over all of Δ.
"""

from collections.abc import Sequence

from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.scanner import Observations, in_epoch_order
from readmit.admission.memo import Grown
from readmit.model import Item


def indexed(
    laters: Sequence[Later], embedder: Embedder | None, candidates: Sequence[Item], embed_top_k: int
) -> Observations:
    """`Observations` of ``laters``, grown from a recent index of the ones they start with.

    Only what follows those is indexed. With an embedder the index is built whole (its
    rankings are over the candidates too).
    """
    if embedder is not None:
        return Observations(laters, embedder, candidates, embed_top_k)
    held = tuple(laters)
    base = _INDEXES.base(held)
    if base is not None and base[1].embed_top_k == embed_top_k:
        ((n,), known) = base
        if n == len(held):
            return known  # the very observations it indexed: remembered once is enough
        if in_epoch_order(held, n):
            return _INDEXES.put((held,), known.extended(held[n:]))
    made = Observations(held, None, candidates, embed_top_k)
    # Nothing grows from no observations, or from some out of order.
    return _INDEXES.put((held,), made) if held and in_epoch_order(held) else made


_INDEXES: Grown[Observations] = Grown()
"""Recent indexes without an embedder, by the observations they index, in epoch order."""
