"""A batch sent again over HTTP after its answer was lost: the epochs it was recorded at."""

import httpx

from servicekit import Team


def test_a_batch_sent_again_with_its_ids_is_answered_with_its_epochs(
    client: httpx.Client, team: Team
) -> None:
    events = [
        {"id": "e1", "op": "assert", "author": "A1", "item": {"id": "c", "text": "Quiet hotel."}},
        {"id": "e2", "op": "revoke", "author": "A1", "target": "c", "why": "booked out"},
    ]
    first = client.post("/v1/events", json={"events": events}, headers=team.auth("A1"))
    again = client.post("/v1/events", json={"events": events}, headers=team.auth("A1"))

    assert first.status_code == again.status_code == 200, again.text
    assert again.json()["recorded"] == first.json()["recorded"]
    assert [r.event.id for r in team.service.store.events("trip")] == ["A1/e1", "A1/e2"]


def test_an_id_sent_again_with_other_words_is_still_refused(
    client: httpx.Client, team: Team
) -> None:
    event = {"id": "e1", "op": "assert", "author": "A1", "item": {"id": "c", "text": "Quiet."}}
    client.post("/v1/events", json={"events": [event]}, headers=team.auth("A1"))
    event["item"] = {"id": "c", "text": "Loud."}

    refused = client.post("/v1/events", json={"events": [event]}, headers=team.auth("A1"))

    assert refused.status_code == 422, refused.text
    assert "already" in refused.json()["message"]
