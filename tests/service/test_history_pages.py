"""``GET /v1/decisions`` and ``GET /v1/memories`` answer a page at a time.

Both grow with an agent's history: a year of returns answered whole was every row of the
audit log at every call, and ``explain`` read every one of them to find one.
"""

from typing import Any

import httpx
import pytest

from builders import T0
from readmit.events import Assert, ItemDraft, RecordExperience
from servicekit import Team, pages

RETURNS = 5


def _returns(client: httpx.Client, team: Team, n: int) -> list[int]:
    """A1 departs and returns ``n`` times; the numbers its returns answered with."""
    headers = team.auth("A1")
    fact = {"op": "assert", "author": "A1", "item": {"id": "f", "text": "Room 12 is free."}}
    assert client.post("/v1/events", json={"events": [fact]}, headers=headers).status_code == 200
    numbers = []
    for i in range(n):
        team.clock.set(f"2026-05-0{1 + i}T09:00:00Z")
        assert client.post("/v1/depart", headers=headers).status_code == 200
        team.clock.set(f"2026-05-0{1 + i}T10:00:00Z")
        answer = client.post("/v1/return", json={"task": "t", "purpose": "p"}, headers=headers)
        assert answer.status_code == 200, answer.text
        numbers.append(answer.json()["decision"])
    return numbers


def test_decisions_come_in_pages_numbered_as_the_returns_were(
    client: httpx.Client, team: Team
) -> None:
    numbers = _returns(client, team, RETURNS)

    assert numbers == [1, 2, 3, 4, 5]
    assert pages(client, team, "/v1/decisions", limit=2) == [[1, 2], [3, 4], [5]]
    assert pages(client, team, "/v1/decisions", limit=5) == [[1, 2, 3, 4, 5]]
    whole = client.get("/v1/decisions", headers=team.auth("A1")).json()  # 1,000 unless asked
    assert ([d["id"] for d in whole["decisions"]], whole["next"]) == (numbers, None)
    later = client.get("/v1/decisions", params={"after": 3}, headers=team.auth("A1")).json()
    assert later["decisions"] == whole["decisions"][3:]
    past = client.get("/v1/decisions", params={"after": 10**30}, headers=team.auth("A1"))
    assert past.json() == {"decisions": [], "next": None}


def test_each_decision_is_explained_by_its_number_alone(client: httpx.Client, team: Team) -> None:
    numbers = _returns(client, team, 3)
    listed = client.get("/v1/decisions", headers=team.auth("A1")).json()["decisions"]

    for n, summary in zip(numbers, listed, strict=True):
        explained = client.get(f"/v1/decisions/{n}", headers=team.auth("A1")).json()
        assert (explained["decision"], explained["epoch"]) == (n, summary["epoch"])
    for missing in (0, 4, 10**30):
        answer = client.get(f"/v1/decisions/{missing}", headers=team.auth("A1"))
        assert (answer.status_code, answer.json()["code"]) == (404, "not_found"), missing


def test_another_agents_decisions_are_neither_listed_nor_counted(
    client: httpx.Client, team: Team
) -> None:
    _returns(client, team, 2)

    answer = client.get("/v1/decisions", params={"limit": 1}, headers=team.auth("A2"))

    assert answer.json() == {"decisions": [], "next": None}


def test_memories_come_in_pages_oldest_first_with_the_last_id_as_cursor(
    client: httpx.Client, team: Team
) -> None:
    headers = team.auth("A1")
    fact = {"op": "assert", "author": "A1", "item": {"id": "f", "text": "Room 12 is free."}}
    assert client.post("/v1/events", json={"events": [fact]}, headers=headers).status_code == 200
    for memory in ["m3", "m1", "m2"]:  # one epoch: in id order
        said = {"id": memory, "text": f"I noted {memory}.", "source": "f"}
        assert client.post("/v1/memories", json=said, headers=headers).status_code == 200
    later = {"op": "assert", "author": "A1", "item": {"id": "g", "text": "Room 14 is free."}}
    assert client.post("/v1/events", json={"events": [later]}, headers=headers).status_code == 200
    said = {"id": "m0", "text": "I noted m0.", "source": "g"}  # a later epoch: after the rest
    assert client.post("/v1/memories", json=said, headers=headers).status_code == 200

    shown = ["A1/m1", "A1/m2", "A1/m3", "A1/m0"]  # as stored (`readmit.service.ids`)
    assert pages(client, team, "/v1/memories", limit=2) == [shown[:2], shown[2:]]
    assert pages(client, team, "/v1/memories", limit=4) == [shown]
    as_given = client.get("/v1/memories", params={"after": "m2"}, headers=headers).json()
    assert [m["id"] for m in as_given["memories"]] == shown[2:]  # ``m2`` as A1 named it
    answer = client.get("/v1/memories", params={"after": "A1/m9"}, headers=headers)
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_input")
    assert "you have no memory 'A1/m9'" in answer.json()["message"]
    other = client.get("/v1/memories", params={"after": "A1/m1"}, headers=team.auth("A2"))
    assert other.status_code == 422  # A2's bank is its own: A1's memory is none of its


@pytest.mark.parametrize("path", ["/v1/decisions", "/v1/memories"])
@pytest.mark.parametrize(
    "query",
    [
        "limit=1&limit=2",
        "lmit=5",
        "limit=0",
        "limit=10001",
        "limit=1.0",
        "limit=%2B5",
        "limit=1_0",
        "after=a%00b",
    ],
)
def test_a_page_query_is_read_strictly(
    client: httpx.Client, team: Team, path: str, query: str
) -> None:
    answer = client.get(f"{path}?{query}", headers=team.auth("A1"))

    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] in {"invalid_request", "invalid_input"}


@pytest.mark.parametrize("query", ["after=-1", "after=1.0", "after=%2B1", "after=x", "x=1"])
def test_a_decisions_cursor_is_a_number_of_yours(
    client: httpx.Client, team: Team, query: str
) -> None:
    answer = client.get(f"/v1/decisions?{query}", headers=team.auth("A1"))

    assert answer.status_code == 422, answer.text


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/return?task=t&purpose=p"),  # was read as no task: the departure's
        ("POST", "/v1/depart?at=2026-05-01T09:00:00Z"),
        ("POST", "/v1/events?dry_run=1"),
        ("GET", "/v1/decisions/1?verbose=1"),
    ],
)
def test_a_route_that_takes_no_query_refuses_one(
    client: httpx.Client, team: Team, method: str, path: str
) -> None:
    answer = client.request(method, path, json={"events": []}, headers=team.auth("A1"))

    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_request"), answer.text
    assert "query: unknown parameter" in answer.json()["message"]


@pytest.mark.parametrize("number", ["+1", "1_0", "1.0", "%201", "01x"])
def test_a_decision_number_in_the_path_is_read_in_digits_alone(
    client: httpx.Client, team: Team, number: str
) -> None:
    _returns(client, team, 1)

    answer = client.get(f"/v1/decisions/{number}", headers=team.auth("A1"))

    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_request"), answer.text


def test_a_page_walks_past_any_id_the_server_took(client: httpx.Client, team: Team) -> None:
    """An id may hold a private-use or unassigned character (``isprintable`` says no): a
    cursor that was such an id was refused, and the walk stopped there."""
    headers = team.auth("A1")
    fact = {"op": "assert", "author": "A1", "item": {"id": "f", "text": "Room 12 is free."}}
    assert client.post("/v1/events", json={"events": [fact]}, headers=headers).status_code == 200
    for memory in ["m1", "m2\ue000", "m3\u0378", "m4"]:
        said = {"id": memory, "text": "Noted.", "source": "f"}
        assert client.post("/v1/memories", json=said, headers=headers).status_code == 200
    odd = [{"id": f"b{c}", "text": "Shared."} for c in ("\u0378", "\ue000", "z")]
    events = [{"op": "assert", "author": "A2", "item": item} for item in odd]
    assert client.post("/v1/events", json={"events": events}, headers=team.auth("A2")).is_success

    memories = pages(client, team, "/v1/memories", limit=1)
    assert memories == [["A1/m1"], ["A1/m2\ue000"], ["A1/m3\u0378"], ["A1/m4"]]
    state = [i for page in pages(client, team, "/v1/state", limit=1) for i in page]
    assert state == sorted(["A1/f", "A2/b\u0378", "A2/b\ue000", "A2/bz"])
    invisible = client.get("/v1/state", params={"after": "a\u200bb"}, headers=headers)
    assert invisible.status_code == 422  # a zero-width space: no id holds one


def test_memories_sort_by_code_point_on_either_database(client: httpx.Client, team: Team) -> None:
    """Pages list a bank by id in code point order on both backends (the order under a
    PostgreSQL collation that says otherwise: tests/store/test_bank_order.py)."""
    headers = team.auth("A1")
    fact = {"op": "assert", "author": "A1", "item": {"id": "f", "text": "Room 12 is free."}}
    assert client.post("/v1/events", json={"events": [fact]}, headers=headers).status_code == 200
    ids = ["b", "Z", "a_1", "é", "B", "a1"]
    for memory in ids:
        said = {"id": memory, "text": "Noted.", "source": "f"}
        assert client.post("/v1/memories", json=said, headers=headers).status_code == 200

    walked = [i for page in pages(client, team, "/v1/memories", limit=2) for i in page]

    assert walked == sorted(f"A1/{i}" for i in ids)


def test_a_bank_replayed_from_a_scenario_is_walked_by_its_plain_ids(
    client: httpx.Client, team: Team
) -> None:
    """``readmit replay`` stores memory ids as the scenario wrote them (``tip``, no owner):
    the cursor ``tip`` was read back as the caller's ``A1/tip``, and the walk stopped."""
    store = team.service.store
    fact = ItemDraft(id="f", text="Room 12 is free.")
    store.append("trip", [Assert(id="e", at=T0, author="A1", item=fact)])
    for memory in ("tip", "tip2", "/odd"):
        said = RecordExperience(
            id=f"x{memory}", at=T0, agent="A1", experience_id=memory, text="Noted.", source="f"
        )
        store.record_experience("trip", said)

    walked = pages(client, team, "/v1/memories", limit=1)

    assert walked == [["/odd"], ["tip"], ["tip2"]]


LONG = "A long memory. " * 1066
"""15,990 characters: 65 such memories, with their ids and sources, fill a page (1 Mi)."""


def _bank(client: httpx.Client, team: Team, texts: list[str]) -> None:
    """A1's bank: a memory ``m{n:04}`` of each text, in order, on the item ``f``.

    Through the service: the byte rate would space so many POSTs out.
    """
    headers = team.auth("A1")
    fact = {"op": "assert", "author": "A1", "item": {"id": "f", "text": "Room 12 is free."}}
    assert client.post("/v1/events", json={"events": [fact]}, headers=headers).status_code == 200
    caller = team.service.authenticate(team.keys["A1"])
    for n, text in enumerate(texts):
        team.service.remember(caller, f"m{n:04}", text, "f")


def _runs(team: Team, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The memories each read of the bank returns, from now on."""
    runs: list[int] = []
    experiences = team.service.store.experiences

    def counted(*args: Any) -> Any:
        found = experiences(*args)
        runs.append(len(found))
        return found

    monkeypatch.setattr(team.service.store, "experiences", counted)
    return runs


def test_a_page_of_long_memories_ends_at_its_characters_and_the_walk_still_lists_them_all(
    client: httpx.Client, team: Team
) -> None:
    """As a page of ``/v1/state`` does (`PAGE_CHARS`): 10,000 memories of 16,384 characters
    made one page some 160 MB."""
    _bank(client, team, [LONG] * 70)

    walked = pages(client, team, "/v1/memories", limit=1000)

    assert [len(page) for page in walked] == [65, 5]
    assert [i for page in walked for i in page] == [f"A1/m{n:04}" for n in range(70)]


def test_a_page_of_long_memories_reads_little_more_of_the_bank_than_it_shows(
    client: httpx.Client, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read at once, 10,000 memories of 16 KB were 160 MB read for a page of 65 (a review)."""
    _bank(client, team, [LONG] * 200)
    runs = _runs(team, monkeypatch)

    answer = client.get("/v1/memories", params={"limit": 10_000}, headers=team.auth("A1"))

    assert len(answer.json()["memories"]) == 65
    assert sum(runs) <= 70  # not the 200 of the bank


def test_short_memories_after_long_ones_are_read_in_few_runs(
    client: httpx.Client, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sized by the average of all it had read, a page's runs stayed a few memories long
    after some long ones: 293 queries for one page of 63 long memories and 12,000 short."""
    _bank(client, team, [LONG] * 63 + ["Short."] * 1000)
    runs = _runs(team, monkeypatch)

    answer = client.get("/v1/memories", params={"limit": 10_000}, headers=team.auth("A1"))

    assert len(answer.json()["memories"]) == 1063  # 1,008,000 characters long, 19,000 short
    assert len(runs) <= 12
