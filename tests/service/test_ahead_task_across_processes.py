"""Two store objects over one database stand for two ``readmit serve`` processes: the
judge ahead of one process must judge an away agent for what it returns to now, not for
a return this process served before a later one of the other process (`AheadJudge._task`)."""

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from builders import KEY, build_note
from conftest import store_url
from readmit.errors import Abandoned
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.service.ahead import AheadJudge
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.signing import HmacSha256Signer
from readmit.store import open_store


@dataclass
class Processes:
    """Two services over one database, as two server processes; the first judges ahead.

    ``away`` (a0) has returned through the first to ``ops/p`` after ``other`` (a1) wrote a
    note, and departed again.
    """

    first: Service
    second: Service
    away: Caller
    other: Caller
    judge: AheadJudge


@contextmanager
def processes(backend: str, tmp_path: Path) -> Iterator[Processes]:
    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
        stores[0].create_workspace("w", team)
        signer = HmacSha256Signer(KEY)
        first, second = (
            Service(s, signer=signer, verifier=make_verifier("builtin")) for s in stores
        )
        away, other = (Caller(workspace="w", agent=agent) for agent in team)
        judge = first.judge_ahead(30.0, quiet=3600.0)  # no pass of its own in these tests
        try:
            first.record(other, [build_note("a1", 0)])
            first.depart(away)
            first.return_(away, "ops", "p")  # the first process hears of this task
            first.depart(away)
            yield Processes(first, second, away, other, judge)
        finally:
            judge.close()
            for store in stores:
                store.close()


def test_a_judge_follows_the_task_of_a_return_another_process_decided(
    backend: str, tmp_path: Path
) -> None:
    with processes(backend, tmp_path) as p:
        p.second.return_(p.away, "sales", "q")  # a later return, through the other process
        p.second.depart(p.away)  # naming no task: its latest return's is the one

        assert p.judge._task("w", "a0") == ("sales", "q")
        # A return through its own process after that is followed again.
        p.first.return_(p.away, "billing", "r")
        assert p.judge._task("w", "a0") == ("billing", "r")


def test_a_return_that_recorded_nothing_does_not_hide_another_process_s_later_one(
    backend: str, tmp_path: Path
) -> None:
    """A return noted before its turn that then stops (its client went away) made no
    decision: another process's return after it is the agent's latest, and its task the
    one judged ahead for."""
    gone = threading.Event()
    gone.set()
    with processes(backend, tmp_path) as p:
        with pytest.raises(Abandoned):
            p.first.return_(p.away, "billing", "r", cancel=gone)  # records nothing
        p.second.return_(p.away, "sales", "q")  # the agent's latest return
        p.second.depart(p.away)  # naming no task: its latest return's is the one

        assert p.judge._task("w", "a0") == ("sales", "q")


def test_a_return_cancelled_in_its_event_loop_does_not_hide_another_process_s_later_one(
    backend: str, tmp_path: Path
) -> None:
    """A return through the pool is awaited inside `Service.returning` (``app.py``): a
    client that goes away cancels it there, which is no ``Exception``; the decision it
    never made must not stand in for another process's later one."""
    with processes(backend, tmp_path) as p:
        with pytest.raises(asyncio.CancelledError), p.first.returning(p.away, "billing", "r"):
            raise asyncio.CancelledError  # the pool's return, cancelled: no decision
        p.second.return_(p.away, "sales", "q")  # the agent's latest return
        p.second.depart(p.away)  # naming no task: its latest return's is the one

        assert p.judge._task("w", "a0") == ("sales", "q")


def test_a_return_this_process_serves_is_judged_ahead_for_while_and_after_it_is_decided(
    backend: str, tmp_path: Path
) -> None:
    """Its task is known from the moment it is asked for, and stays known after a decision
    that issued no view (here blocked: an obligation of the agent's role lacks ``x``),
    where the audit log knows only the task of an earlier return."""
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
        store.create_workspace("w", team)
        service = Service(store, signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"))
        away, other = (Caller(workspace="w", agent=agent) for agent in team)
        judge = service.judge_ahead(30.0, quiet=3600.0)  # no pass of its own in this test
        try:
            service.record(other, [build_note("a1", 0)])
            service.depart(away)
            service.return_(away, "ops", "p")
            service.depart(away)
            obligation = {"id": "o", "text": "Book it.", "role": "r", "requires": ["x"]}
            frontier = {"id": "o-f", "text": "Open."}
            service.record(
                other,
                [
                    {
                        "op": "obligation",
                        "author": "a1",
                        "obligation": {**obligation, "frontier": frontier},
                    }
                ],
            )
            with service.returning(away, "billing", "r"):  # asked for, not yet decided
                assert judge._task("w", "a0") == ("billing", "r")

            assert service.return_(away, "billing", "r")["outcome"] == "blocked"
            service.depart(away)  # naming no task

            assert judge._task("w", "a0") == ("billing", "r")
        finally:
            judge.close()
            store.close()
