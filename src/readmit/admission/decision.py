"""Decision = Issued | Withheld: the outcome of one return, with every exclusion it made.

A tagged union, so no caller can treat a withheld view as issued. ``readmit
explain`` renders a decision; it is not a second code path.
"""

from dataclasses import dataclass
from typing import Any, Literal

from readmit.admission.coverage import Coverage, not_selected
from readmit.admission.invalidation.judgment import Judgment
from readmit.admission.view import VerifiedView
from readmit.model import Experience, Item
from readmit.reasons import Exclusion


class _Excluding:
    """What an outcome says of the candidates it left out."""

    __slots__ = ()
    decided: tuple[Exclusion, ...]
    not_selected: tuple[str, ...]

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        """Every exclusion: `decided`, then a ``not_selected`` record for each of those."""
        return (*self.decided, *not_selected(self.not_selected))


@dataclass(frozen=True, slots=True, kw_only=True)
class Issued(_Excluding):
    """A complete view was signed, verified and exposed."""

    outcome: Literal["issued"] = "issued"
    view: VerifiedView
    items: tuple[Item, ...]
    coverage: Coverage
    decided: tuple[Exclusion, ...]
    """The exclusions for a reason other than ``not_selected``, stage by stage."""
    not_selected: tuple[str, ...]
    """The ids of the eligible items S did not need or could not fit, in pool order."""
    readmitted: tuple[Experience, ...]
    withheld: tuple[Experience, ...]
    judgment: Judgment
    """What the implicit stage judged, spent and confirmed."""

    @property
    def signed(self) -> dict[str, Any]:
        """The signed Return View as JSON-ready data."""
        return dict(self.view.view)


@dataclass(frozen=True, slots=True, kw_only=True)
class Withheld(_Excluding):
    """No view was issued: coverage fell short, and the policy blocks or resets."""

    outcome: Literal["blocked", "reset"]
    selected: tuple[Item, ...]
    """The insufficient set that was not issued."""
    coverage: Coverage
    decided: tuple[Exclusion, ...]
    """The exclusions for a reason other than ``not_selected``, stage by stage."""
    not_selected: tuple[str, ...]
    """The ids of the eligible items S did not need or could not fit, in pool order."""
    withheld: tuple[Experience, ...]
    """Every private experience: none is readmitted without a verified view."""
    judgment: Judgment
    """What the implicit stage judged, spent and confirmed."""


Decision = Issued | Withheld
