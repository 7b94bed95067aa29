"""The operator's policy and the server's clock: what a returning agent may no longer choose."""

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from fastapi.testclient import TestClient

from readmit.errors import ConfigError, InvalidInput
from readmit.policy import Policy
from readmit.service.app import create_app
from readmit.service.limits import Limits
from readmit.service.operations import Service
from readmit.service.settings import limits_from_flags, load_policy
from readmit.store import SqlStore
from readmit.strict_json import MAX_DEPTH
from servicekit import Team

T = "2026-05-01T08:00:00Z"
HOTEL = {
    "op": "assert",
    "author": "A2",
    "item": {
        "id": "h0",
        "text": "Sunrise Hotel is booked.",
        "key": "hotel",
        "readers": {"principals": "*"},
        "valid_to": "2026-05-01T09:00:00Z",
    },
}


def post(client: httpx.Client, team: Team, agent: str, path: str, body: Any) -> httpx.Response:
    return client.post(path, json=body, headers=team.auth(agent))


def departed(client: httpx.Client, team: Team) -> None:
    team.clock.set(T)
    assert post(client, team, "A2", "/v1/events", {"events": [HOTEL]}).status_code == 200
    assert post(client, team, "A1", "/v1/depart", {}).status_code == 200


@pytest.mark.parametrize(
    "policy",
    [
        {"complete_view_gate": False, "implicit": False, "view_ttl_seconds": 315360000},
        {"gamma": 0, "rho": 0},
        {},
        None,
    ],
)
def test_a_returning_agent_cannot_choose_its_policy(
    client: httpx.Client, team: Team, policy: Any
) -> None:
    departed(client, team)

    response = post(
        client, team, "A1", "/v1/return", {"task": "t", "purpose": "p", "policy": policy}
    )

    assert response.status_code == 422
    assert response.json()["code"] == "policy_not_accepted"
    assert team.service.store.decisions("trip", "A1") == []


def test_the_view_names_the_operators_policy_under_its_signature(
    client: httpx.Client, team: Team
) -> None:
    team.service.policy = Policy(gamma=0.5, rho=0.5)
    departed(client, team)

    view = post(client, team, "A1", "/v1/return", {"task": "t", "purpose": "p"}).json()["view"]
    forged = {**view, "policy": Policy().digest}

    assert view["policy"] == Policy(gamma=0.5, rho=0.5).digest != Policy().digest
    assert client.post("/v1/verify", json={"view": view, "at": T}).json()["valid"] is True
    assert client.post("/v1/verify", json={"view": forged, "at": T}).json()["valid"] is False


@pytest.mark.parametrize("ttl", [1e300, math.nan, math.inf, "3600", None, -1, 0, True, 10**400])
def test_a_bad_view_ttl_is_a_config_error(ttl: object) -> None:
    with pytest.raises(ConfigError, match="view_ttl_seconds"):
        Policy().with_overrides({"view_ttl_seconds": ttl})


def test_the_policy_file_sets_the_servers_policy(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(json.dumps({"gamma": 0.5, "view_ttl_seconds": 600}))
    (tmp_path / "p.toml").write_text("gamma = 0.5\nview_ttl_seconds = 600\n")

    expected = Policy().with_overrides({"gamma": 0.5, "view_ttl_seconds": 600})

    assert load_policy(str(tmp_path / "p.json")) == expected
    assert load_policy(str(tmp_path / "p.toml")) == expected
    assert load_policy(None) == Policy()


@pytest.mark.parametrize(
    "content", ["[1]", "{nope", '{"gamma": 2}', '{"view_ttl_seconds": "3600"}', '{"x": 1}']
)
def test_a_bad_policy_file_is_a_config_error(tmp_path: Path, content: str) -> None:
    (tmp_path / "p.json").write_text(content)

    with pytest.raises(ConfigError):
        load_policy(str(tmp_path / "p.json"))


def test_a_policy_ttl_over_the_servers_cap_is_refused_at_startup(store: SqlStore) -> None:
    from builders import KEY
    from readmit.signing import HmacSha256Signer

    long = Policy().with_overrides({"view_ttl_seconds": 2 * 86400})

    with pytest.raises(ConfigError) as raised:
        Service(store, signer=HmacSha256Signer(KEY), verifier=None, policy=long)

    assert str(raised.value) == (
        "the policy's view_ttl_seconds (172800) is over the server's cap of 86400 s: "
        "lower it, or raise the cap (--max-view-ttl)"
    )


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("p.yaml", "max_items: 4", "not JSON (or TOML, named *.toml): Expecting value (at char"),
        ("p.toml", "max_items =", "not TOML: "),
    ],
)
def test_a_policy_file_that_does_not_parse_says_what_it_must_be(
    tmp_path: Path, name: str, content: str, said: str
) -> None:
    (tmp_path / name).write_text(content)

    with pytest.raises(ConfigError) as raised:
        load_policy(str(tmp_path / name))

    assert str(raised.value).startswith(f"policy file {tmp_path / name}: {said}")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("p.toml", "gamma = " + "[" * 5000 + "]" * 5000),
        ("p.toml", "gamma = " + "{ a = " * 5000 + "1" + " }" * 5000),
        ("p.toml", "gamma = " + "[" * 65 + "]" * 65),
        ("p.json", '{"gamma": ' + "[" * 5000 + "]" * 5000 + "}"),
    ],
)
def test_a_policy_file_nesting_too_deep_is_a_config_error_whatever_its_kind(
    tmp_path: Path, name: str, content: str
) -> None:
    """``tomllib`` recursed until a RecursionError (``error [internal]``) where the JSON
    reader stops at `MAX_DEPTH`; a TOML file is now read no deeper than a JSON one."""
    (tmp_path / name).write_text(content, encoding="utf-8")

    with pytest.raises(ConfigError) as raised:
        load_policy(str(tmp_path / name))

    assert str(raised.value) == (
        f"policy file {tmp_path / name} nests deeper than {MAX_DEPTH} levels: it is read no deeper"
    )


@pytest.mark.parametrize("seconds", [math.nan, -1.0, 1e300])
def test_bad_clock_and_ttl_flags_are_config_errors(seconds: float) -> None:
    with pytest.raises(ConfigError):
        limits_from_flags(clock_skew=seconds)
    with pytest.raises(ConfigError):
        limits_from_flags(max_view_ttl=seconds)


def test_an_event_from_the_far_future_is_refused_and_does_not_poison_the_timeline(
    client: httpx.Client, team: Team
) -> None:
    team.clock.set(T)
    far = {**HOTEL, "at": "9999-12-31T23:59:59Z"}

    refused = post(client, team, "A2", "/v1/events", {"events": [far]})
    dated = post(client, team, "A2", "/v1/events", {"events": [{**HOTEL, "at": T}]})
    note = {"op": "assert", "author": "A2", "item": {"id": "n1", "text": "Undated."}}
    undated = post(client, team, "A2", "/v1/events", {"events": [note]})

    assert refused.status_code == 422
    assert refused.json()["code"] == "clock_skew"
    assert dated.status_code == 200
    assert undated.status_code == 200
    stored = [r.event.at.year for r in team.service.store.events("trip")]
    assert stored == [2026, 2026]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/depart", {"at": "2026-05-01T08:06:00Z"}),
        ("/v1/memories", {"id": "m", "text": "x", "source": "h0", "at": "2026-05-01T08:06:00Z"}),
        ("/v1/return", {"task": "t", "purpose": "p", "at": "2026-05-01T08:06:00Z"}),
        ("/v1/return", {"task": "t", "purpose": "p", "at": "2026-05-01T07:54:00Z"}),
    ],
)
def test_times_beyond_the_skew_are_refused(
    client: httpx.Client, team: Team, path: str, body: dict[str, Any]
) -> None:
    departed(client, team)
    before = len(team.service.store.decisions("trip"))

    response = post(client, team, "A1", path, body)

    assert response.status_code == 422
    assert response.json()["code"] == "clock_skew"
    assert len(team.service.store.decisions("trip")) == before


def test_a_return_is_decided_at_the_servers_time_so_backdating_admits_nothing_expired(
    client: httpx.Client, team: Team
) -> None:
    departed(client, team)
    team.clock.set("2026-05-01T09:02:00Z")  # the hotel note expired two minutes ago

    backdated = {"task": "t", "purpose": "p", "at": "2026-05-01T08:59:00Z"}
    returned = post(client, team, "A1", "/v1/return", backdated).json()

    assert returned["outcome"] == "issued"
    assert "A2/h0" not in returned["items"]
    assert returned["view"]["issued_at"] == "2026-05-01T09:02:00Z"
    assert {e["item"]: e["reason"] for e in returned["excluded"]}["A2/h0"] == "expired"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/events", {"events": [{**HOTEL, "at": "0001-01-01T00:00:00Z"}]}),
        ("/v1/events", {"events": [{**HOTEL, "at": "9999-12-31T23:59:59.999999Z"}]}),
        ("/v1/events", {"events": [{**HOTEL, "at": "0001-01-01T00:00:00+14:00"}]}),
        ("/v1/depart", {"at": "0001-01-01T00:00:00Z"}),
        ("/v1/depart", {"at": "9999-12-31T23:59:59-12:00"}),
        ("/v1/return", {"task": "t", "purpose": "p", "at": "0001-01-01T00:00:00Z"}),
        ("/v1/return", {"task": "t", "purpose": "p", "at": "9999-12-31T23:59:59Z"}),
        ("/v1/verify", {"view": {"format": "readmit.view/1"}, "at": "9999-12-31T23:59:59Z"}),
    ],
)
def test_dates_at_the_calendars_ends_are_never_a_500(
    client: httpx.Client, team: Team, path: str, body: dict[str, Any]
) -> None:
    team.clock.set(T)

    response = post(client, team, "A2", path, body)

    assert response.status_code < 500, response.text
    assert "code" in response.json() or response.status_code == 200


def test_a_view_that_would_expire_after_the_year_9999_is_a_4xx(store: SqlStore) -> None:
    from builders import KEY
    from readmit.signing import HmacSha256Signer
    from servicekit import make_team

    team = make_team(store)
    team.service = Service(
        store,
        signer=HmacSha256Signer(KEY),
        verifier=None,
        clock=team.clock,
        limits=Limits(),
    )
    team.clock.set("9999-12-31T23:30:00Z")
    with TestClient(create_app(team.service)) as test_client:
        client = cast(httpx.Client, test_client)
        assert post(client, team, "A1", "/v1/depart", {}).status_code == 200
        response = post(client, team, "A1", "/v1/return", {"task": "t", "purpose": "p"})

    assert response.status_code == 422
    assert "9999" in response.json()["message"]


@pytest.mark.parametrize("field", ["valid_from", "valid_to"])
def test_a_validity_outside_the_calendar_in_utc_is_a_4xx(
    client: httpx.Client, team: Team, field: str
) -> None:
    team.clock.set(T)
    edge = {"valid_from": "0001-01-01T00:00:00+14:00", "valid_to": "9999-12-31T23:59:59-12:00"}
    item = {"id": "h0", "text": "Sunrise Hotel is booked.", field: edge[field]}
    event = {"op": "assert", "author": "A2", "item": item}

    response = post(client, team, "A2", "/v1/events", {"events": [event]})

    assert response.status_code == 422, response.text
    assert team.service.store.events("trip") == []


@pytest.mark.parametrize("what", ["depart", "remember", "return"])
def test_a_library_callers_time_without_a_zone_is_refused_by_name(
    store: SqlStore, what: str
) -> None:
    from builders import KEY
    from readmit.signing import HmacSha256Signer
    from servicekit import make_team

    team = make_team(store)
    service = Service(store, signer=HmacSha256Signer(KEY), verifier=None)
    caller = service.authenticate(team.keys["A1"])
    naive = datetime(2026, 5, 1, 8, tzinfo=UTC).replace(tzinfo=None)
    if what == "return":
        service.depart(caller)

    calls: dict[str, Callable[[], object]] = {
        "depart": lambda: service.depart(caller, naive),
        "remember": lambda: service.remember(caller, "m", "Quiet.", "h0", naive),
        "return": lambda: service.return_(caller, "trip", "itinerary", naive),
    }

    with pytest.raises(InvalidInput, match="has no time zone"):
        calls[what]()


def test_a_default_return_takes_the_task_of_the_departure_current_in_its_turn(
    store: SqlStore,
) -> None:
    """A departure dated ahead that becomes current while the return waits for its turn is
    the one it is decided against: its task is the one the return is to."""
    from builders import KEY
    from readmit.signing import HmacSha256Signer
    from servicekit import SetClock, make_team

    team = make_team(store)
    clock = SetClock()
    clock.set("2026-05-01T08:00:00Z")
    service = Service(store, signer=HmacSha256Signer(KEY), verifier=None, clock=clock)
    me = service.authenticate(team.keys["A1"])
    service.depart(me, returning_to=("t1", "p1"))
    service.depart(me, datetime(2026, 5, 1, 8, 2, tzinfo=UTC), returning_to=("t2", "p2"))
    assert service.returning_to(me, None, None) == ("t1", "p1")  # before the second is due
    clock.set("2026-05-01T08:03:00Z")

    answer = service.return_(me, None, None)

    assert (answer.get("task"), answer.get("purpose")) == ("t2", "p2")


def test_a_policy_file_may_be_named_by_a_path_or_a_string(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("max_items = 3\n", encoding="utf-8")

    assert load_policy(path).max_items == load_policy(str(path)).max_items == 3


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("missing.toml", None, "cannot read policy file {}: No such file or directory"),
        ("p.json", b"\xff{}", "policy file {}: not UTF-8 text"),
    ],
)
def test_a_policy_file_that_cannot_be_read_says_why_in_words(
    tmp_path: Path, name: str, content: bytes | None, said: str
) -> None:
    """A missing file was said as "[Errno 2] No such file or directory: 'p'" (a newcomer)."""
    if content is not None:
        (tmp_path / name).write_bytes(content)

    with pytest.raises(ConfigError) as raised:
        load_policy(str(tmp_path / name))

    assert str(raised.value) == said.format(tmp_path / name)
