"""Shared buckets under racing takes: two processes' throttles (two store objects over one
database), many threads each, take exactly the burst between them, never more or less."""

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import store_url
from readmit.errors import RateLimited
from readmit.model import Agent
from readmit.service.limits import Limits
from readmit.service.shared_limits import SharedThrottle
from readmit.store import SqlStore, open_store

BURST = 40
LIMITS = Limits(rate=1e-6, burst=BURST, concurrent_returns=3, shared=True)  # no refill


@pytest.fixture
def stores(backend: str, tmp_path: Path) -> Iterator[tuple[SqlStore, SqlStore]]:
    with store_url(backend, tmp_path) as url:
        made = open_store(url), open_store(url)
        made[0].create_workspace("w", [Agent(id="A1", principal="org", role="r")])
        try:
            yield made
        finally:
            for store in made:
                store.close()


def test_racing_requests_through_two_processes_take_exactly_the_burst(
    stores: tuple[SqlStore, SqlStore],
) -> None:
    throttles = [SharedThrottle(LIMITS, s, clock=lambda: 1_000.0) for s in stores]

    def take(n: int) -> bool:
        try:
            throttles[n % 2].admit_request(("w", "A1"))
        except RateLimited:
            return False
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        taken = list(pool.map(take, range(3 * BURST)))

    assert sum(taken) == BURST


def test_racing_returns_through_two_processes_hold_at_most_the_limit(
    stores: tuple[SqlStore, SqlStore],
) -> None:
    throttles = [SharedThrottle(LIMITS, s) for s in stores]
    tried = threading.Barrier(8)  # every claim made before any slot is given back

    def claim(n: int) -> bool:
        try:
            with throttles[n % 2].return_slot(("w", "A1")):
                tried.wait(60)
                return True
        except RateLimited:
            tried.wait(60)
            return False

    with ThreadPoolExecutor(max_workers=8) as pool:
        held = list(pool.map(claim, range(8)))
    for throttle in throttles:
        throttle.close()

    assert sum(held) == LIMITS.concurrent_returns
