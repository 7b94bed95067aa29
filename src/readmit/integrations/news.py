"""What a memory layer reads of the store when it follows the log after a return.

Read outside any lock (`readmit.integrations.following.Following.read`), then applied:

- the log's events since the last read;
- what those events withdrew, whatever withdrew it: a keyed statement replaces an item
  without naming it (a path overwritten, a memory updated), and what rests on the version
  it replaced falls with it, at the next return and in reads. The store's record of
  withdrawals by epoch says which, read in time with the events, not with what the layer
  ever followed (a probe: the key of a premise the layer knew only from the store's
  chains was stated again, and what rested on it was served);
- the verdicts stored since the layer last read them (`readmit.store.held.Held.judged_since`);
- the chains of premises stated before the return outside C that statements since rest on
  (`readmit.store.held.Held.chains`), and which of them no longer stand: another
  principal's note found stale before the return takes down what is stated on it since (a
  differential fuzz: the agent's own write resting on one was shown).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from readmit.admission.context import Standing
from readmit.events import Assert, Recorded, Supersede
from readmit.integrations.team import Member


@dataclass(frozen=True, slots=True)
class News:
    """What the store says since a layer's last read."""

    later: Sequence[Recorded]
    """The log's events after the epoch read from."""
    fallen: set[str]
    """Items the events withdrew, and items on the chains of premises outside what the
    layer knows that no longer stand and that it does not know either."""
    judged: list[Standing]
    """The verdicts stored since the layer last read them."""
    noted: int
    """The number of the last store of verdicts read."""
    chains: dict[str, frozenset[str]]
    """Each item on the chains of the premises asked about, with what it rests on."""
    ends: dict[str, datetime]
    """When the validity of each item of ``chains`` that has an end ends: what rests on it
    falls then (`readmit.integrations.ends`)."""

    @classmethod
    def read(cls, member: Member, epoch: int, noted: int, knows: Callable[[str], bool]) -> "News":
        """The news after ``epoch``, verdicts stored after ``noted``, premises ``knows`` lacks."""
        store, workspace, now = member.store, member.workspace, member.clock()
        # Verdicts first: each one's item was stated before it was stored, so before the
        # events read next, and the layer has met it when it applies them (a review).
        last, judged = store.judged_since(workspace, noted, now)
        later = store.events(workspace, epoch)
        stated = [r.event.item for r in later if isinstance(r.event, Assert | Supersede)]
        fallen: set[str] = set()
        if any(i.key is not None and not i.unconfirmed for i in stated):
            fallen = store.withdrawn_since(workspace, epoch, later[-1].epoch)
        new = {i.id for i in stated}
        asked = {p for i in stated for p in i.depends_on if p not in new and not knows(p)}
        chains: dict[str, frozenset[str]] = {}
        ends: dict[str, datetime] = {}
        if asked:
            chains, fell, ends = store.chains(workspace, asked, now)
            # Read now, not up to the events: what the layer knows falls by its own event
            # or verdict, with its reason (a review: an item of C on a chain, revoked after
            # the events read, went as replaced under its key).
            fallen |= {i for i in fell if not knows(i)}
        return cls(later, fallen, judged, last, chains, ends)
