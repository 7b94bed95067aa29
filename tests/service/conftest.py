"""A real service per test: every backend, in-process; a few tests also over real loopback HTTP.

Every test that takes ``client`` runs in-process (ASGI, the same app and store), which is
fast and steady on a busy machine. A test that needs the wire (chunked bodies, raw
requests, the end-to-end case) is marked ``@pytest.mark.loopback`` and runs over real
loopback HTTP (uvicorn) as well. Tests that open their own connections use
`servicekit.serving` directly.
"""

from collections.abc import Iterator
from typing import cast

import httpx
import pytest
from fastapi.testclient import TestClient

from readmit.service.app import create_app
from readmit.store import SqlStore
from servicekit import Team, make_team, serving


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "client" not in metafunc.fixturenames:
        return
    marked = metafunc.definition.get_closest_marker("loopback") is not None
    if marked:
        metafunc.parametrize("client", ["in-process", "loopback"], indirect=True)


@pytest.fixture
def team(store: SqlStore) -> Team:
    return make_team(store)


@pytest.fixture
def client(request: pytest.FixtureRequest, team: Team) -> Iterator[httpx.Client]:
    """An HTTP client of the service: in-process (ASGI), or over real loopback HTTP for a
    test marked ``loopback`` (its second run)."""
    app = create_app(team.service)
    if getattr(request, "param", "in-process") == "in-process":
        with TestClient(app) as c:
            yield cast(httpx.Client, c)  # a TestClient is an httpx.Client over ASGI
        return
    with serving(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        yield c
