"""The return a memory layer owes before it serves a read (`OwedReturn`)."""

import threading

from readmit.decide import Decided
from readmit.integrations.team import Member


class OwedReturn:
    """The return a wrapper owes after its agent departed, decided at its first read.

    A process started after a departure (or after a return, whose decision only the store
    keeps) has no decision in memory: served unfiltered, its reads would show what that
    return left out (`Member.owes_return`). So would a process whose agent departed, with
    no decision before, and whose return then failed (a differential fuzz: a LangGraph
    store served another principal's values after `arrive` raised). Calling it decides that
    return, one thread at a time, before any read is served; the member's latest decision
    after.
    """

    def __init__(self, member: Member) -> None:
        self.member = member
        self._owed = member.owes_return()
        self._lock = threading.Lock()

    @property
    def owed(self) -> bool:
        """Whether a return is owed: one the store said at first, or a departure since."""
        return self._owed or self.member.undecided

    def __call__(self) -> Decided | None:
        if self.owed:
            with self._lock:
                self._settle()
        return self.member.latest

    def _settle(self) -> None:
        """Decide the return owed, unless a thread before this one (or a run) did."""
        if self.owed and self.member.latest is None:
            self.member.return_()
        self._owed = False
