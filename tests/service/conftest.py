"""A real service per test: every backend, in-process and over real loopback HTTP."""

from collections.abc import Iterator
from typing import cast

import httpx
import pytest
from fastapi.testclient import TestClient

from readmit.service.app import create_app
from readmit.store import SqlStore
from servicekit import Team, make_team, serving


@pytest.fixture
def team(store: SqlStore) -> Team:
    return make_team(store)


@pytest.fixture(params=["in-process", "loopback"])
def client(request: pytest.FixtureRequest, team: Team) -> Iterator[httpx.Client]:
    """An HTTP client of the service: in-process (ASGI) or over real loopback HTTP."""
    app = create_app(team.service)
    if request.param == "in-process":
        with TestClient(app) as c:
            yield cast(httpx.Client, c)  # a TestClient is an httpx.Client over ASGI
        return
    with serving(app) as url, httpx.Client(base_url=url, timeout=30) as c:
        yield c
