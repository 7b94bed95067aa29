"""The known pairs ``readmit verifiers check`` probes a verifier with.

They are package data, ``data/check_pairs.json``, read by `readmit.verifiers.pairs`.
"""

from readmit.verifiers.pairs import LabeledPair, packaged_pairs, sourced_item

__all__ = ["PROBES", "sourced_item"]

PROBES: tuple[LabeledPair, ...] = packaged_pairs("check_pairs.json")
"""One or two pairs of each kind, in domains of their own."""
