"""The audit log keeps a return's ``not_selected`` as "the rest of its checkpoint's candidates"
where it is exactly that, so a record grows with what changed, not with the store; every
reader, in this process or another, gets the ids back in the order the return listed them."""

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from builders import KEY, T0
from conftest import store_url
from readmit.decide import Decided, decide
from readmit.events import Assert, ItemDraft, ReturnRequest, Revoke
from readmit.model import Agent
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import audit, open_store
from readmit.store.sql import SqlStore

AGENTS = [Agent(id="A1", principal="p", role="ops"), Agent(id="A2", principal="p", role="dev")]


def fact(n: int, item: str) -> Assert:
    draft = ItemDraft(id=item, text=f"Fact {item} number {n}.")
    return Assert(id=f"e{n}", at=T0 + timedelta(minutes=n), author="A2", item=draft)


def returned(store: SqlStore) -> Decided:
    """A1's return with room for two items: most candidates are left out as not selected."""
    request = ReturnRequest(id="r", at=T0 + timedelta(hours=1), agent="A1", task="t", purpose="p")
    return decide(
        store,
        "ws",
        request,
        policy=Policy(max_items=2, complete_view_gate=False),
        verifier=None,
        signer=HmacSha256Signer(KEY),
    )


def stored_body(store: SqlStore, number: int) -> dict[str, Any]:
    (body,) = store.conn.execute(
        "SELECT body FROM decisions WHERE workspace = 'ws' AND number = ?", (number,)
    ).fetchone()
    loaded: dict[str, Any] = json.loads(audit.unpacked(body))
    return loaded


def test_not_selected_is_stored_as_the_rest_of_the_checkpoint_and_read_back_whole(
    backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as url:
        first, second = open_store(url), open_store(url)  # two processes' caches
        try:
            first.create_workspace("ws", AGENTS)
            # Ids out of code point order, so D_a's order (sorted) is not the log's.
            first.append("ws", [fact(n, f"m{(7 * n) % 23:02d}") for n in range(1, 21)])
            first.depart("ws", "A1", T0 + timedelta(minutes=30))
            revoke = Revoke(
                id="e40", at=T0 + timedelta(minutes=40), author="A2", target="m07", why="gone"
            )
            first.append("ws", [fact(31, "z1"), revoke, fact(41, "a1")])

            decided = returned(first)

            record = {k: v for k, v in decided.record.items() if k != "id"}
            assert len(record["not_selected"]) == 22 - 2 - 1  # C, less selected and revoked
            assert stored_body(first, decided.id)["not_selected"] == {audit.REST_OF_CHECKPOINT: 1}
            assert first.decision(decided.id, "ws") == record
            assert second.decision(decided.id, "ws") == record  # read, not remembered

            # A process that did not make the return finds its checkpoint in the store.
            at = decided.context.returner.at
            again = second.record_decision("ws", "A1", at, record["epoch"], "issued", record)
            assert stored_body(second, again)["not_selected"] == {audit.REST_OF_CHECKPOINT: 1}
            assert first.decision(again, "ws") == record
        finally:
            first.close()
            second.close()


def test_a_not_selected_that_is_not_the_rest_is_stored_as_it_is(
    backend: str, tmp_path: Path
) -> None:
    with store_url(backend, tmp_path) as url:
        store = open_store(url)
        try:
            store.create_workspace("ws", AGENTS)
            store.append("ws", [fact(n, f"m{n:02d}") for n in range(1, 6)])
            store.depart("ws", "A1", T0 + timedelta(minutes=30))
            record = {k: v for k, v in returned(store).record.items() if k != "id"}
            left = record["not_selected"]
            for odd in (left[::-1], left[1:], [*left, "m99"]):
                changed = {**record, "not_selected": odd}

                number = store.record_decision(
                    "ws", "A1", T0 + timedelta(hours=1), record["epoch"], "issued", changed
                )

                assert stored_body(store, number)["not_selected"] == odd
                assert store.decision(number, "ws") == changed
        finally:
            store.close()
