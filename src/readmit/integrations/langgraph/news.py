"""What the lens reads of the store besides the log's events, when it follows the log.

Outside the lens's lock, with the events just read (`readmit.integrations.langgraph.admitted`):

- what a keyed statement replaced: it names no item (a path overwritten, by a teammate or
  the agent), and what rests on the version it replaced falls with it, at the next return
  and in reads (a probe: reads kept showing it, where the path's premise was never shown,
  or was the agent's own overwrite). The store's record of withdrawals by epoch says which,
  read in time with the events, not with what the lens ever showed;
- the verdicts stored since the lens last read them (`readmit.store.held.Held.judged_since`);
- the chains of premises stated before the return outside C that statements since rest on
  (`readmit.store.held.Held.chains`), and which of them no longer stand: another
  principal's note found stale before the return takes down what is stated on it since (a
  differential fuzz: the agent's own write resting on one was shown).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from readmit.events import Assert, Recorded, Supersede
from readmit.integrations.team import Member


@dataclass(frozen=True, slots=True)
class News:
    """What the store says besides the events just read."""

    fallen: set[str]
    """Items withdrawn since the events began, and premises outside what the lens knows
    that no longer stand."""
    stale: list[str]
    """The items of verdicts stored since the lens last read them."""
    noted: int
    """The number of the last store of verdicts read."""
    chains: dict[str, frozenset[str]]
    """Each item on the chains of the premises asked about, with what it rests on."""

    @classmethod
    def read(
        cls, member: Member, later: Sequence[Recorded], noted: int, knows: Callable[[str], bool]
    ) -> "News":
        """The news for ``later``, verdicts stored after ``noted``, premises ``knows`` lacks."""
        store, workspace, now = member.store, member.workspace, member.clock()
        stated = [r.event.item for r in later if isinstance(r.event, Assert | Supersede)]
        fallen: set[str] = set()
        if any(i.key is not None and not i.unconfirmed for i in stated):
            fallen = store.withdrawn_since(workspace, later[0].epoch - 1)
        new = {i.id for i in stated}
        asked = {p for i in stated for p in i.depends_on if p not in new and not knows(p)}
        chains: dict[str, frozenset[str]] = {}
        if asked:
            chains, fell = store.chains(workspace, asked, now)
            fallen |= fell
        last, judged = store.judged_since(workspace, noted, now)
        return cls(fallen, [v.item for v in judged], last, chains)
