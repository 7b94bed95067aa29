"""``GET /v1/state`` answers a page at a time: a 100k-item workspace answered whole was
tens of megabytes of JSON at every call, by any agent."""

from typing import Any

import httpx
import pytest

from builders import T0
from readmit.events import Assert, ItemDraft, Revoke
from readmit.model import Agent
from readmit.store import WorkStateStore
from servicekit import Team, pages

IDS = ["Zeta", "alpha", "b-9", "b-10", "éclair", "Ωmega", "z"]
"""Ids as code points sort them (uppercase first, accents after): whatever a PostgreSQL
collation would say, the pages are in the order `sorted` gives."""


def _noted(client: httpx.Client, team: Team, ids: list[str], agency: set[str]) -> None:
    """A2 records an item per id; those in ``agency`` only the agency may read."""
    events = [
        {
            "at": f"2026-05-01T08:{n:02}:00Z",
            "op": "assert",
            "author": "A2",
            "item": {"id": i, "text": f"Note {i}."}
            | ({"readers": {"principals": ["agency"]}} if i in agency else {}),
        }
        for n, i in enumerate(ids)
    ]
    response = client.post("/v1/events", json={"events": events}, headers=team.auth("A2"))
    assert response.status_code == 200, response.text


def test_pages_list_every_item_the_agent_may_read_once_in_code_point_order(
    client: httpx.Client, team: Team
) -> None:
    _noted(client, team, IDS, agency={"b-9", "z"})
    shown = sorted(f"A2/{i}" for i in IDS if i not in {"b-9", "z"})

    assert pages(client, team, "/v1/state", limit=2) == [shown[:2], shown[2:4], shown[4:]]
    assert pages(client, team, "/v1/state", limit=5) == [shown]
    whole = client.get("/v1/state", headers=team.auth("A1")).json()  # 1,000 unless asked
    assert ([i["id"] for i in whole["items"]], whole["next"]) == (shown, None)


def test_a_page_past_the_last_item_is_empty(client: httpx.Client, team: Team) -> None:
    _noted(client, team, ["a", "b"], agency=set())

    answer = client.get("/v1/state", params={"after": "A2/b"}, headers=team.auth("A1"))

    assert answer.json() == {"items": [], "next": None}


@pytest.mark.parametrize(
    "query",
    [
        "limit=1&limit=2",  # FastAPI kept the last: a gateway may read the first
        "after=a&after=b",
        "lmit=5",  # a typo read as no limit at all
        "limit=1.0",
        "limit=%2B5",
        "limit=%205",
        "limit=1_0",
        "after=a%00b",
        "after=a%E2%80%8Bb",  # a zero-width space
        "after=%ff%fe",  # not UTF-8 once decoded: read as U+FFFD, silently (a probe)
        "after=a%C3",
        "%ff=1",
    ],
)
def test_a_query_is_read_as_strictly_as_a_body(
    client: httpx.Client, team: Team, query: str
) -> None:
    answer = client.get(f"/v1/state?{query}", headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["code"] == "invalid_request"


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 10_001}, {"after": "x" * 1025}])
def test_a_page_out_of_bounds_is_refused(
    client: httpx.Client, team: Team, params: dict[str, Any]
) -> None:
    answer = client.get("/v1/state", params=params, headers=team.auth("A1"))

    assert answer.status_code == 422
    assert answer.json()["code"] == "invalid_request"


def test_a_page_holds_the_items_the_agent_may_read_however_far_apart(
    store: WorkStateStore,
) -> None:
    """Readable items far apart among unreadable ones fill a page in id order. A page is cut
    from every item the agent may read: decoding until it was full took longer the more
    unreadable ids followed ``after``, which told them a letter at a time (a review)."""
    store.create_workspace(
        "w", [Agent(id="a", principal="p", role="r"), Agent(id="b", principal="q", role="r")]
    )
    shared = frozenset({"p", "q"})
    events = [
        Assert(
            id=f"e{n}",
            at=T0,
            author="b",
            item=ItemDraft(id=f"i{n:03}", text=f"Note {n}.", principals=None if n % 70 else shared),
        )
        for n in range(300)
    ]
    store.append("w", events)
    readable = [f"i{n:03}" for n in range(0, 300, 70)]

    assert [i.id for i in store.visible_state("w", "a")] == readable
    assert [i.id for i in store.visible_state("w", "a", limit=2)] == readable[:2]
    assert [i.id for i in store.visible_state("w", "a", after="i000", limit=3)] == readable[1:4]
    assert [i.id for i in store.visible_state("w", "a", after="i280")] == []


def test_a_page_after_a_write_shows_it(store: WorkStateStore) -> None:
    """What a reader may read is remembered by epoch, and every change is an event."""
    store.create_workspace("w", [Agent(id="a", principal="p", role="r")])
    store.append("w", [Assert(id="e1", at=T0, author="a", item=ItemDraft(id="i1", text="One."))])
    assert [i.id for i in store.visible_state("w", "a", limit=5)] == ["i1"]

    store.append("w", [Assert(id="e2", at=T0, author="a", item=ItemDraft(id="i0", text="Two."))])
    assert [i.id for i in store.visible_state("w", "a", limit=5)] == ["i0", "i1"]

    store.append("w", [Revoke(id="e3", at=T0, author="a", target="i1", why="gone")])
    assert [i.id for i in store.visible_state("w", "a", limit=5)] == ["i0"]


def test_a_page_of_long_texts_ends_at_its_characters_and_the_walk_still_lists_them_all(
    client: httpx.Client, team: Team
) -> None:
    """Counted in items alone, 10,000 items of 16,384 characters made one page 161 MB (a
    probe): a page also ends once its texts pass `PAGE_CHARS`, with a cursor as ever."""
    text = "A long note. " * 1230  # 15,990 characters: 66 of them pass 1 Mi
    events = [
        {
            "at": "2026-05-01T08:00:00Z",
            "op": "assert",
            "author": "A2",
            "item": {"id": f"n{n:02}", "text": text},
        }
        for n in range(70)
    ]
    response = client.post("/v1/events", json={"events": events}, headers=team.auth("A2"))
    assert response.status_code == 200, response.text

    walked = pages(client, team, "/v1/state", limit=1000)

    assert [len(page) for page in walked] == [65, 5]  # 65 notes with their ids fit in 1 Mi
    assert [i for page in walked for i in page] == [f"A2/n{n:02}" for n in range(70)]
