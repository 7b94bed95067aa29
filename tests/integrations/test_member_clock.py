"""Library members on machines whose clocks are apart, over one PostgreSQL, date as one.

A `Member` left with its default clock dates departures, returns and events by the store's
(the database's on PostgreSQL), as `readmit serve` does (`tests/store/test_multiprocess.py`).
"""

import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest

from conftest import fresh_postgres_schema
from readmit.events import Assert
from readmit.integrations.team import Member
from readmit.model import Agent
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

AHEAD = 600
"""Seconds the other machine's wall clock runs ahead of (or behind) this one's."""

_AWAY = textwrap.dedent(
    """
    import sys
    from datetime import timedelta

    import readmit.clock as clock

    real = clock.now
    clock.now = lambda: real() + timedelta(seconds=float(sys.argv[2]))  # before readmit loads

    from readmit.events import Assert, ItemDraft
    from readmit.integrations.team import Member
    from readmit.signing import HmacSha256Signer
    from readmit.store import open_store

    store = open_store(sys.argv[1])
    member = Member(store, "trip", "a1", HmacSha256Signer(b"k" * 32))
    draft = ItemDraft(id="pickup", text="Pickup at 8:00 from the Sunrise Hotel.")
    member.record([Assert(id="e1", at=clock.now(), author="a1", item=draft)])
    member.depart()
    store.close()
    """
)


@pytest.mark.postgres
def test_a_member_returns_after_a_departure_through_a_machine_whose_clock_runs_ahead() -> None:
    """By its machine's clock the departure was 600 s ahead of this machine's, and the return
    here was refused: the agent "has not departed" (a review)."""
    with fresh_postgres_schema() as url:
        store = open_store(url)
        store.create_workspace("trip", [Agent(id="a1", principal="family", role="planner")])
        subprocess.run([sys.executable, "-c", _AWAY, url, str(AHEAD)], check=True, timeout=300)
        here = Member(store, "trip", "a1", HmacSha256Signer(b"k" * 32))

        assert here.owes_return()
        decided = here.return_()

        assert [i.id for i in decided.context.items] == ["pickup"]
        [(_, recorded)] = [(r.epoch, r.event.at) for r in store.events("trip")]
        assert recorded <= decided.context.returner.at <= store.now()
        store.close()


_BEHIND = textwrap.dedent(
    """
    import sys
    from datetime import timedelta

    import readmit.clock as clock

    real = clock.now
    clock.now = lambda: real() - timedelta(seconds=float(sys.argv[2]))  # before readmit loads

    import sqlite3

    from langgraph.store.sqlite import SqliteStore

    from readmit.integrations.langgraph import ReadmitStore
    from readmit.integrations.team import Member
    from readmit.signing import HmacSha256Signer
    from readmit.store import open_store

    store = open_store(sys.argv[1])
    member = Member(store, "trip", "a1", HmacSha256Signer(b"k" * 32))
    inner = SqliteStore(sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None))
    inner.setup()  # it sweeps what a TTL ends
    ReadmitStore(inner, member).put(("trip",), "hotel", {"name": "Sunrise"}, ttl=5)
    store.close()
    """
)


@pytest.mark.postgres
def test_a_langgraph_ttl_put_through_a_machine_whose_clock_runs_behind_is_valid_as_long() -> None:
    """Its end was dated by the machine's clock: five minutes before the database recorded it,
    so no return ever admitted it (a review)."""
    with fresh_postgres_schema() as url:
        store = open_store(url)
        store.create_workspace("trip", [Agent(id="a1", principal="family", role="planner")])
        subprocess.run([sys.executable, "-c", _BEHIND, url, str(AHEAD)], check=True, timeout=300)

        [recorded] = store.events("trip")
        assert isinstance(recorded.event, Assert)
        end = recorded.event.item.validity.valid_to
        assert end is not None
        assert timedelta(minutes=4) < end - recorded.event.at <= timedelta(minutes=5)
        store.close()
