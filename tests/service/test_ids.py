"""Ids over the service: what an agent names is stored under its own name, so an id another
principal holds answers exactly like a free one, and a reference to a hidden id exactly like
a reference to nothing."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from readmit.service.app import create_app
from readmit.store import open_store
from readmit.wire import parse_event
from servicekit import Team, make_team, serving

PROBE = "n1"
"""The id the probing agent (A1, of the family) tries; the hidden world holds it, the other not."""

World = Callable[[Team, httpx.Client, str], None]
"""Fills a fresh workspace with another principal's things named after the id it is given."""


def _ok(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text


def agency_over_http(team: Team, client: httpx.Client, name: str) -> None:
    """X1 (the agency) records evidence, an item, an obligation and a memory, all named ``name``."""
    x1 = team.auth("X1")
    events = [
        {
            "id": name,
            "op": "evidence",
            "author": "X1",
            "source": {"id": f"{name}-src", "text": "s"},
        },
        {
            "id": f"{name}-e2",
            "op": "assert",
            "author": "X1",
            "item": {
                "id": name,
                "text": "Agency note.",
                "key": "note",
                "cites": [f"{name}-src"],
                "readers": {"principals": ["agency"]},
            },
        },
        {
            "id": f"{name}-e3",
            "op": "obligation",
            "author": "X1",
            "obligation": {
                "id": f"{name}-o",
                "text": "Follow up.",
                "role": "partner",
                "requires": ["d_x"],
                "frontier": {"id": f"{name}-f", "text": "Open."},
            },
        },
    ]
    _ok(client.post("/v1/events", json={"events": events}, headers=x1))
    memory = {"id": f"{name}-m", "text": "Private.", "source": name}
    _ok(client.post("/v1/memories", json=memory, headers=x1))


def agency_by_the_operator(team: Team, client: httpx.Client, name: str) -> None:
    """The same things with plain ids, as a scenario replayed by the operator records them."""
    raw = [
        {"at": "2026-05-01T08:00:00Z", "id": name, "op": "evidence", "author": "X1"}
        | {"source": {"id": f"{name}-src", "text": "s"}},
        {
            "at": "2026-05-01T08:00:00Z",
            "id": f"{name}-e2",
            "op": "assert",
            "author": "X1",
            "item": {"id": name, "text": "Agency note.", "readers": {"principals": ["agency"]}},
        },
        {
            "at": "2026-05-01T08:00:00Z",
            "id": f"{name}-e3",
            "op": "obligation",
            "author": "X1",
            "obligation": {
                "id": f"{name}-o",
                "text": "Follow up.",
                "role": "partner",
                "requires": ["d_x"],
                "frontier": {"id": f"{name}-f", "text": "Open."},
            },
        },
    ]
    team.service.store.append("trip", [parse_event(e, i) for i, e in enumerate(raw)])


WORLDS = [agency_over_http, agency_by_the_operator]


@contextmanager
def world(fill: World, name: str) -> Iterator[tuple[Team, httpx.Client]]:
    """A fresh travel team over loopback HTTP, with the agency's things named ``name``."""
    store = open_store("sqlite://:memory:")
    team = make_team(store)
    try:
        with serving(create_app(team.service)) as url, httpx.Client(base_url=url, timeout=60) as c:
            fill(team, c, name)
            yield team, c
    finally:
        store.close()


def answers(fill: World, name: str, requests: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """What A1 is answered, request by request, in a world whose agency things are ``name``."""
    with world(fill, name) as (team, client):
        out = []
        for path, body in requests:
            response = client.post(path, json=body, headers=team.auth("A1"))
            out.append((response.status_code, response.content))
        return out


def a1(op: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "/v1/events", {"events": [{"op": op, "author": "A1", **fields}]}


CREATIONS = [
    a1("evidence", id=PROBE, source={"id": f"{PROBE}-src", "text": "Our source."}),
    a1(
        "assert",
        id=f"{PROBE}-e2",
        item={"id": PROBE, "text": "Our note.", "key": "note", "cites": [f"{PROBE}-src"]},
    ),
    a1(
        "obligation",
        id=f"{PROBE}-e3",
        obligation={
            "id": f"{PROBE}-o",
            "text": "Ours.",
            "role": "itinerary",
            "requires": ["d_x"],
            "frontier": {"id": f"{PROBE}-f", "text": "Open."},
        },
    ),
    ("/v1/memories", {"id": f"{PROBE}-m", "text": "Mine.", "source": PROBE}),
]


@pytest.mark.parametrize("fill", WORLDS)
def test_an_id_another_principal_holds_is_answered_like_a_free_one(fill: World) -> None:
    held = answers(fill, PROBE, CREATIONS)
    free = answers(fill, "zz", CREATIONS)

    assert held == free
    assert [status for status, _ in held] == [200] * len(CREATIONS)


def test_the_agency_keeps_its_things_when_a1_reuses_their_names() -> None:
    with world(agency_over_http, PROBE) as (team, client):
        before = client.get("/v1/state", headers=team.auth("X1")).json()
        for path, body in CREATIONS:
            _ok(client.post(path, json=body, headers=team.auth("A1")))

        after = client.get("/v1/state", headers=team.auth("X1")).json()
        memories = client.get("/v1/memories", headers=team.auth("X1")).json()["memories"]

    assert after == before
    assert "X1/n1" in {i["id"] for i in after["items"]}
    assert [m["id"] for m in memories] == ["X1/n1-m"]


def _references(prefix: str) -> list[tuple[str, dict[str, Any]]]:
    """A1's references to the agency's things, each spelled ``prefix + name``."""
    ref = f"{prefix}{PROBE}"
    return [
        a1("revoke", id="r", target=ref, why="x"),
        a1("close", id="r", target=ref),
        a1("supersede", id="r", target=ref, item={"id": "mine", "text": "Ours now."}),
        a1("assert", id="r", item={"id": "mine", "text": "Ours.", "depends_on": [ref]}),
        a1("assert", id="r", item={"id": "mine", "text": "Ours.", "cites": [f"{ref}-src"]}),
        a1("resolve", id="r", target=f"{ref}-o"),
        ("/v1/memories", {"id": "m", "text": "Mine.", "source": ref}),
        ("/v1/memories", {"id": "m", "text": "Mine.", "source": f"{ref}-o"}),
        ("/v1/memories", {"id": "m", "text": "Mine.", "source": f"{ref}-f"}),
    ]


@pytest.mark.parametrize(
    ("fill", "prefix"), [(agency_over_http, "X1/"), (agency_by_the_operator, "/")]
)
def test_a_reference_to_a_hidden_id_is_answered_like_one_to_nothing(
    fill: World, prefix: str
) -> None:
    requests = _references(prefix)

    held = answers(fill, PROBE, requests)
    free = answers(fill, "zz", requests)

    assert held == free
    assert {status for status, _ in held} == {422}


def test_a_bare_reference_is_your_own_and_a_full_one_names_a_teammates(
    client: httpx.Client, team: Team
) -> None:
    a2 = [
        {"op": "evidence", "author": "A2", "source": {"id": "src", "text": "Booking mail."}},
        {
            "op": "assert",
            "author": "A2",
            "item": {"id": "h0", "text": "Sunrise.", "cites": ["src"]},
        },
        {"op": "assert", "author": "A2", "item": {"id": "t0", "text": "Train at 9."}},
    ]
    _ok(client.post("/v1/events", json={"events": a2}, headers=team.auth("A2")))
    mine = [
        {"op": "assert", "author": "A1", "item": {"id": "h0", "text": "My hotel note."}},
        {"op": "revoke", "author": "A1", "target": "A2/t0", "why": "cancelled"},
        {
            "op": "assert",
            "author": "A1",
            "item": {"id": "p0", "text": "Pickup.", "depends_on": ["h0", "A2/h0"]},
        },
    ]

    recorded = client.post("/v1/events", json={"events": mine}, headers=team.auth("A1"))
    memory = client.post(
        "/v1/memories",
        json={"id": "x", "text": "Quiet.", "source": "A2/h0"},
        headers=team.auth("A1"),
    )

    _ok(recorded)
    _ok(memory)
    assert memory.json()["id"] == "A1/x"
    assert memory.json()["source"] == "A2/h0"
    state = {i["id"]: i for i in client.get("/v1/state", headers=team.auth("A1")).json()["items"]}
    assert set(state) == {"A2/h0", "A1/h0", "A1/p0"}
    assert state["A1/h0"]["text"] == "My hotel note."


def test_a_plain_id_from_a_replayed_scenario_is_named_with_a_leading_slash(
    client: httpx.Client, team: Team
) -> None:
    raw = {
        "at": "2026-05-01T08:00:00Z",
        "id": "e0",
        "op": "assert",
        "author": "A2",
        "item": {"id": "h0", "text": "Sunrise."},
    }
    team.service.store.append("trip", [parse_event(raw, 0)])

    bare = client.post(
        "/v1/events",
        json={"events": [{"op": "revoke", "author": "A1", "target": "h0", "why": "x"}]},
        headers=team.auth("A1"),
    )
    rooted = client.post(
        "/v1/events",
        json={"events": [{"op": "revoke", "author": "A1", "target": "/h0", "why": "x"}]},
        headers=team.auth("A1"),
    )

    assert bare.status_code == 422
    assert "'A1/h0'" in bare.json()["message"]
    _ok(rooted)
    assert client.get("/v1/state", headers=team.auth("A2")).json()["items"] == []


def test_ids_come_back_as_stored(client: httpx.Client, team: Team) -> None:
    events = [
        {"id": "e1", "op": "assert", "author": "A1", "item": {"id": "c", "text": "Quiet hotel."}},
        {"id": "A1/e2", "op": "assert", "author": "A1", "item": {"id": "A1/d", "text": "Budget."}},
        {"op": "assert", "author": "A1", "item": {"id": "e", "text": "Near the station."}},
    ]

    recorded = client.post("/v1/events", json={"events": events}, headers=team.auth("A1"))

    _ok(recorded)
    ids = [r["id"] for r in recorded.json()["recorded"]]
    assert ids[:2] == ["A1/e1", "A1/e2"]
    assert ids[2].startswith("ev-")  # the server's own ids are random, never the agent's
    state = client.get("/v1/state", headers=team.auth("A1")).json()["items"]
    assert {i["id"] for i in state} == {"A1/c", "A1/d", "A1/e"}


@pytest.mark.parametrize(
    ("where", "bad"),
    [
        ("event", {"id": "X1/e1", "item": {"id": "a", "text": "t"}}),
        ("item", {"item": {"id": "X1/n1", "text": "t"}}),
        ("item", {"item": {"id": "A1/a/b", "text": "t"}}),
        ("item", {"item": {"id": "/n1", "text": "t"}}),
        ("item", {"item": {"id": "n" * 198, "text": "t"}}),
    ],
)
def test_a_new_id_outside_your_own_names_is_refused(
    client: httpx.Client, team: Team, where: str, bad: dict[str, Any]
) -> None:
    event = {"op": "assert", "author": "A1", **bad}

    response = client.post("/v1/events", json={"events": [event]}, headers=team.auth("A1"))

    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_event"
    assert client.get("/v1/state", headers=team.auth("A1")).json()["items"] == []


def test_a_new_memory_id_outside_your_own_names_is_refused(
    client: httpx.Client, team: Team
) -> None:
    _ok(
        client.post(
            "/v1/events",
            json={
                "events": [{"op": "assert", "author": "A1", "item": {"id": "c", "text": "Quiet."}}]
            },
            headers=team.auth("A1"),
        )
    )

    response = client.post(
        "/v1/memories", json={"id": "X1/m", "text": "t", "source": "c"}, headers=team.auth("A1")
    )

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_input"  # a memory is no event
    assert response.json()["message"].startswith("memory 'X1/m': new id 'X1/m': ")
    assert response.json()["details"] is None
    assert client.get("/v1/memories", headers=team.auth("A1")).json()["memories"] == []


def test_a_bare_reference_that_names_nothing_gets_the_hint_in_a_memory_and_a_resolve(
    client: httpx.Client, team: Team
) -> None:
    hint = "(a bare id is your own; name a teammate's as AUTHOR/ID, as /v1/state shows it)"
    memory = {"id": "m", "text": "t", "source": "fact"}
    resolve = {"op": "resolve", "author": "A1", "target": "o"}

    remembered = client.post("/v1/memories", json=memory, headers=team.auth("A1"))
    resolved = client.post("/v1/events", json={"events": [resolve]}, headers=team.auth("A1"))

    assert remembered.json()["message"] == (
        f"memory 'm': experience source 'A1/fact' is no known item {hint}"
    )
    assert resolved.json()["message"] == f"events[0]: no open obligation 'A1/o' {hint}"


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["A1", "A2", "X1"]),
            st.sampled_from(["a", "b", "A1/a", "X1/b"]),
            st.sampled_from([None, {"principals": ["agency"]}, {"principals": "*"}]),
        ),
        max_size=8,
    )
)
def test_only_your_own_earlier_ids_are_ever_taken(
    steps: list[tuple[str, str, dict[str, Any] | None]],
) -> None:
    store = open_store("sqlite://:memory:")
    team = make_team(store)
    taken: set[str] = set()
    with TestClient(create_app(team.service)) as client:
        for agent, name, readers in steps:
            item: dict[str, Any] = {"id": name, "text": "A note."}
            if readers is not None:
                item["readers"] = readers
            event = {"op": "assert", "author": agent, "item": item}

            response = client.post("/v1/events", json={"events": [event]}, headers=team.auth(agent))

            local = name.removeprefix(f"{agent}/")
            if "/" in local:
                assert response.status_code == 422, response.text  # another's namespace
            elif f"{agent}/{local}" in taken:
                assert response.status_code == 422, response.text
                assert "already used" in response.text
            else:
                assert response.status_code == 200, response.text
                taken.add(f"{agent}/{local}")
    store.close()
