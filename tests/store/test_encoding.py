"""The store's one-pass encoding writes exactly what the generic encoders write.

`readmit.store.encoding` builds an appended event's log text, its item's receipt digest
and its item row body by joining pre-encoded strings; every byte must match
`canonical_json(event_to_wire(event))`, `text_digest` and `json.dumps(item_to_json(item))`,
so stored rows and digests are the same as before and readable by the same readers.
"""

import json
from datetime import UTC, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from readmit.canonical import canonical_json
from readmit.clock import format_time
from readmit.errors import InvalidInput
from readmit.events import Assert, Event, ItemDraft, text_digest
from readmit.model import Item
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
# DEL is plain ASCII that only json.dumps escapes; a kind given as its plain string.
@example(ItemDraft(id="i\x7f", text="a\x7fb"), "e", "A", "org", 1)
@example(ItemDraft(id="i", text="t", kind="fact"), "e", "A", "org", 1)  # type: ignore[arg-type]
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


@given(drafts(), texts, texts, texts, st.integers(min_value=1, max_value=2**62))
def test_a_body_written_in_full_before_reads_as_the_same_item(
    draft: ItemDraft, event_id: str, author: str, principal: str, epoch: int
) -> None:
    """Stores written before item bodies left out their defaults hold every field."""
    item = draft.materialize(event_id=event_id, author=author, principal=principal, epoch=epoch)

    assert item_from_json(json.loads(json.dumps(_in_full(item)))) == item


def test_a_stored_body_leaves_out_the_fields_at_their_defaults() -> None:
    written_before = (
        '{"id": "i500", "text": "Service svc15 runs version 500.", "kind": "fact", '
        '"epoch": 502, "author": "A2", "key": null, "for_role": null, "principals": ["org"], '
        '"roles": ["*"], "task": "*", "purposes": ["*"], "valid_from": null, "valid_to": null, '
        '"receipt": ["a500", "A2", 502, "sha256:45f7"], "depends_on": [], "supports": [], '
        '"cites": []}'
    )
    item = item_from_json(json.loads(written_before))

    assert json.dumps(item_to_json(item)) == (
        '{"id": "i500", "text": "Service svc15 runs version 500.", "epoch": 502, '
        '"author": "A2", "principals": ["org"], "receipt": ["a500", "A2", 502, "sha256:45f7"]}'
    )
    assert json.dumps(_in_full(item)) == written_before


def _in_full(item: Item) -> dict[str, object]:
    """The body every store wrote before: each field, at its default or not."""
    r, scope, validity = item.receipt, item.scope, item.validity
    return {
        "id": item.id,
        "text": item.text,
        "kind": str(item.kind),
        "epoch": item.epoch,
        "author": item.author,
        "key": item.key,
        "for_role": item.for_role,
        "principals": sorted(scope.principals),
        "roles": sorted(scope.roles),
        "task": scope.task,
        "purposes": sorted(scope.purposes),
        "valid_from": None if validity.valid_from is None else format_time(validity.valid_from),
        "valid_to": None if validity.valid_to is None else format_time(validity.valid_to),
        "receipt": None if r is None else [r.event_id, r.author, r.epoch, r.digest],
        "depends_on": sorted(item.depends_on),
        "supports": sorted(item.supports),
        "cites": sorted(item.cites),
    }


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
