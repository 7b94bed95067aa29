"""The store's one-pass encoding writes exactly what the generic encoders write.

`readmit.store.encoding` builds an appended event's log text, its item's receipt digest
and its item row body by joining pre-encoded strings; every byte must match
`canonical_json(event_to_wire(event))`, `text_digest` and `json.dumps(item_to_json(item))`,
so stored rows and digests are the same as before and readable by the same readers.
"""

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from readmit.canonical import canonical_json
from readmit.errors import InvalidInput
from readmit.events import Assert, Event, ItemDraft, text_digest
from readmit.store.connection import stamp
from readmit.store.encoding import encode, item_body, receipt_digest
from readmit.wire import event_to_wire
from readmit.wire.codec import item_from_json, item_to_json
from strategies import drafts, events, texts


@given(events())
def test_an_events_log_text_is_its_canonical_wire_json(event: Event) -> None:
    text, stamped, _ = encode(event)

    assert text == canonical_json(event_to_wire(event))
    assert stamped == stamp(event.at)


@given(drafts(), texts, texts, texts, st.integers(min_value=1, max_value=2**62))
def test_an_items_body_and_receipt_are_what_the_materialized_item_gives(
    draft: ItemDraft, event_id: str, author: str, principal: str, epoch: int
) -> None:
    event = Assert(id=event_id, at=datetime(2026, 1, 1, tzinfo=UTC), author=author, item=draft)
    item = draft.materialize(event_id=event_id, author=author, principal=principal, epoch=epoch)
    encoded = encode(event).item
    assert encoded is not None

    receipt = receipt_digest(encoded)
    body = item_body(
        draft,
        encoded,
        event_id=event_id,
        author=author,
        principal=principal,
        epoch=epoch,
        receipt=receipt,
    )

    assert receipt == text_digest(draft.id, draft.text)
    assert body == json.dumps(item_to_json(item))
    assert item_from_json(json.loads(body)) == item


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"id": " "}, "item id must not be empty"),
        ({"principals": frozenset()}, "readers.principals must not be empty"),
        ({"roles": frozenset()}, "readers.roles must not be empty"),
        ({"purposes": frozenset()}, "purposes must not be empty"),
    ],
)
def test_a_draft_that_could_not_materialize_is_refused_when_made(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        ItemDraft(**{"id": "i", "text": "t", **fields})  # type: ignore[arg-type]
