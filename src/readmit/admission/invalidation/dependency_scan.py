"""The dependency scan: a model names the later observations that may change a premise.

The paper's scanner: one target and at most 4 later observations a call.

The lexical and embedding proposals of `Observations` find later events that share a
name, a number or words with an item. A premise change often shares none ("our flight
was moved to the next day" breaks "pickup at 8:00 from the hotel lobby"). With a
`DependencyScan`, the screener also shows the model the later observations the scanner
did not propose (`Observations.unproposed`: at most ``window``, nearest first with an
embedder, else newest first), ``batch`` at a time; what it names goes to the verifier
like any other proposal. A scan is a hypothesis and never excludes anything by itself.
Its calls and tokens count against the return's judgment budget, and when the budget
cannot pay for the scan the item is withheld as ``unscreened``, as for any judgment.
"""

from collections.abc import Sequence
from typing import Protocol

from readmit.admission.invalidation.implicit import Later


class DependencyScan(Protocol):
    """Names the later observations that may change a premise of one target."""

    @property
    def name(self) -> str:
        """Identity of the model (used in the decision's judgment record)."""
        ...

    @property
    def batch(self) -> int:
        """Most observations shown in one call."""
        ...

    @property
    def window(self) -> int:
        """Most unproposed observations scanned per target at one return."""
        ...

    def scan(self, target: str, premises: Sequence[str], laters: Sequence[Later]) -> list[bool]:
        """For each of ``laters`` (at most `batch`), whether it may change a premise of ``target``.

        Raises:
            VerifierUnavailable: if the model gives no usable answer.
        """
        ...
