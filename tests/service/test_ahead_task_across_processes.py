"""Two store objects over one database stand for two ``readmit serve`` processes: the
judge ahead of one process must judge an away agent for what it returns to now, not for
a return this process served before a later one of the other process (`AheadJudge._task`)."""

import threading
from pathlib import Path

import pytest

from builders import KEY, build_note
from conftest import store_url
from readmit.errors import Abandoned
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.signing import HmacSha256Signer
from readmit.store import open_store


def test_a_judge_follows_the_task_of_a_return_another_process_decided(
    backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
        stores[0].create_workspace("w", team)
        signer = HmacSha256Signer(KEY)
        first, second = (
            Service(s, signer=signer, verifier=make_verifier("builtin")) for s in stores
        )
        away, other = (Caller(workspace="w", agent=agent) for agent in team)
        judge = first.judge_ahead(30.0, quiet=3600.0)  # no pass of its own in this test
        try:
            first.record(other, [build_note("a1", 0)])
            first.depart(away)
            first.return_(away, "ops", "p")  # the first process hears of this task
            first.depart(away)
            second.return_(away, "sales", "q")  # a later return, through the other process
            second.depart(away)  # naming no task: its latest return's is the one

            assert judge._task("w", "a0") == ("sales", "q")
            # A return through its own process after that is followed again.
            first.return_(away, "billing", "r")
            assert judge._task("w", "a0") == ("billing", "r")
        finally:
            judge.close()
            for store in stores:
                store.close()


def test_a_return_that_recorded_nothing_does_not_hide_another_process_s_later_one(
    backend: str, tmp_path: Path
) -> None:
    """A return noted before its turn that then stops (its client went away) made no
    decision: another process's return after it is the agent's latest, and its task the
    one judged ahead for."""
    with store_url(backend, tmp_path) as url:
        stores = open_store(url), open_store(url)
        team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
        stores[0].create_workspace("w", team)
        signer = HmacSha256Signer(KEY)
        first, second = (
            Service(s, signer=signer, verifier=make_verifier("builtin")) for s in stores
        )
        away, other = (Caller(workspace="w", agent=agent) for agent in team)
        judge = first.judge_ahead(30.0, quiet=3600.0)  # no pass of its own in this test
        gone = threading.Event()
        gone.set()
        try:
            first.record(other, [build_note("a1", 0)])
            first.depart(away)
            first.return_(away, "ops", "p")
            first.depart(away)
            with pytest.raises(Abandoned):
                first.return_(away, "billing", "r", cancel=gone)  # records nothing
            second.return_(away, "sales", "q")  # the agent's latest return
            second.depart(away)  # naming no task: its latest return's is the one

            assert judge._task("w", "a0") == ("sales", "q")
        finally:
            judge.close()
            for store in stores:
                store.close()
