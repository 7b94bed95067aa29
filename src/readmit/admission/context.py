"""ReturnContext: the one immutable ``C = D_a ⊕ Δ`` every decision of a return is made on."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from readmit.events import Recorded
from readmit.model import Checkpoint, Experience, Item, Obligation, Returner


@dataclass(frozen=True, slots=True, kw_only=True)
class ReturnContext:
    """The post-absence checkpoint C for one return cycle."""

    workspace: str
    cycle: str
    """Return-cycle id: binds the view to this one return."""
    returner: Returner
    departure: Checkpoint
    """D_a: what the agent could see when it left."""
    epoch: int
    """The current epoch; Δ covers epochs (departure.epoch, epoch]."""
    items: tuple[Item, ...]
    """The items of D_a and every item asserted during Δ."""
    delta: tuple[Recorded, ...]
    """Δ: the events recorded after departure, in epoch order."""
    obligations: tuple[Obligation, ...] = ()
    """Obligations open at return (any role)."""
    evidence: frozenset[str] = frozenset()
    """Ids of evidence sources recorded with a receipt."""
    experiences: tuple[Experience, ...] = ()
    """The returning agent's private bank (quarantined until readmission)."""
    by_id: Mapping[str, Item] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id = {item.id: item for item in self.items}
        for obligation in self.obligations:
            by_id.setdefault(obligation.item.id, obligation.item)
            by_id.setdefault(obligation.frontier.id, obligation.frontier)
        object.__setattr__(self, "by_id", MappingProxyType(by_id))

    @property
    def role_obligations(self) -> tuple[Obligation, ...]:
        """O: the open obligations the returning role must continue."""
        return tuple(o for o in self.obligations if o.role == self.returner.role)
