"""Shared fixtures: a real SQLite store per test, a test signer, hypothesis profiles."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from builders import KEY
from readmit.examples.travel import travel_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore, open_store

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[WorkStateStore]:
    """An empty SQLite store on disk, closed after the test."""
    s = open_store(f"sqlite:///{tmp_path}/readmit.db")
    yield s
    s.close()


@pytest.fixture
def signer() -> HmacSha256Signer:
    return HmacSha256Signer(KEY)


@pytest.fixture
def travel() -> dict[str, Any]:
    return travel_scenario()
