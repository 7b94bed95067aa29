"""Shared fixtures: a real SQLite store per test, a test signer, hypothesis profiles."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from builders import KEY
from readmit.bench.schemas import fresh_schema
from readmit.examples.travel import travel_scenario
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, WorkStateStore, open_store

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


POSTGRES_URL = os.environ.get("READMIT_TEST_POSTGRES_URL")
REQUIRE_POSTGRES = os.environ.get("READMIT_REQUIRE_POSTGRES") == "1"


def postgres_url() -> str:
    """The test server's URL, or skip (fail, where .ci/run requires PostgreSQL)."""
    if POSTGRES_URL is None:
        if REQUIRE_POSTGRES:
            pytest.fail("READMIT_REQUIRE_POSTGRES=1 but READMIT_TEST_POSTGRES_URL is not set")
        pytest.skip(
            "READMIT_TEST_POSTGRES_URL not set (scripts/test sets it when PostgreSQL is installed)"
        )
    return POSTGRES_URL


@contextmanager
def fresh_postgres_schema() -> Iterator[str]:
    """A URL whose connections see only a new, empty schema, dropped afterwards."""
    with fresh_schema(postgres_url(), "t") as url:
        yield url


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@contextmanager
def store_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A URL for an empty store of ``backend``."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path}/readmit.db"
    else:
        with fresh_postgres_schema() as url:
            yield url


def before_m033(store: SqlStore) -> None:
    """Undo m033 in ``store``: as a store of the readmit before it is (verdicts by text)."""
    with store.conn.transaction():
        store.conn.execute("DROP INDEX invalidations_by_digest")
        store.conn.execute("ALTER TABLE invalidations DROP COLUMN restore_digest")
        store.conn.execute(
            "CREATE INDEX invalidations_by_text ON invalidations (workspace, restore_text)"
        )
        store.conn.execute(
            "DELETE FROM _readmit_migrations WHERE name = ?", ("m033_verdicts_by_digest",)
        )


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str, tmp_path: Path) -> Iterator[WorkStateStore]:
    """Every backend, each test on an empty store, so contract tests prove they agree."""
    with store_url(backend, tmp_path) as url:
        s = open_store(url)
        yield s
        s.close()


@pytest.fixture
def signer() -> HmacSha256Signer:
    return HmacSha256Signer(KEY)


@pytest.fixture
def travel() -> dict[str, Any]:
    return travel_scenario()
