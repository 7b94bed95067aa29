"""Fuzzing: the HTTP API from its own OpenAPI schema, and the event parser.

No input may cause a 5xx or a crash, and a rejected request stores nothing.
"""

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import positive_data_acceptance

from readmit.errors import InvalidEvent
from readmit.examples.travel import travel_scenario
from readmit.service.app import create_app
from readmit.store import SqlStore, open_store
from readmit.wire import parse_step
from servicekit import Team, make_team


@pytest.fixture(scope="module")
def fuzz_team() -> Iterator[Team]:
    store = open_store("sqlite://:memory:")
    yield make_team(store)
    store.close()


@pytest.fixture(scope="module")
def api_schema(fuzz_team: Team) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(fuzz_team.service))


def stored(store: SqlStore) -> tuple[int, ...]:
    tables = ("events", "items", "experiences", "checkpoints", "decisions")
    return tuple(store.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables)  # noqa: S608


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_api_never_fails_on_any_input(
    data: st.DataObject, api_schema: Any, fuzz_team: Team
) -> None:
    case = data.draw(api_schema.as_strategy())
    before = stored(fuzz_team.service.store)

    # A schema-valid event can still name an unknown target or come before a departure:
    # those are rightly 422, so "valid data must be accepted" is not a check for this API.
    response = case.call_and_validate(
        headers=fuzz_team.auth("A2"), excluded_checks=[positive_data_acceptance]
    )

    assert response.status_code < 500
    if response.status_code >= 400:
        assert stored(fuzz_team.service.store) == before


def outcome(raw: object) -> str:
    """ "accepted", or the problem InvalidEvent named; any other exception fails the test."""
    try:
        parse_step(raw, 3)
    except InvalidEvent as exc:
        return exc.problem
    return "accepted"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
VALID = travel_scenario()["events"]


@given(JSON)
def test_the_parser_rejects_any_json_cleanly(raw: object) -> None:
    assert outcome(raw)


@given(st.sampled_from(VALID), st.data())
def test_the_parser_rejects_mutated_events_cleanly(
    event: dict[str, Any], data: st.DataObject
) -> None:
    mutated: dict[str, Any] = json.loads(json.dumps(event))
    target = mutated
    nested = [k for k, v in mutated.items() if isinstance(v, dict)]
    go_deeper = data.draw(st.booleans())
    if nested and go_deeper:
        target = mutated[data.draw(st.sampled_from(nested))]
    key = data.draw(st.sampled_from(sorted(target)))
    target[key] = data.draw(JSON)

    assert outcome(mutated)
