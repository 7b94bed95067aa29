"""A Return View's item entries: an item's entry, its canonical JSON and its digest.

An entry is a function of the immutable item alone, and the same items are issued
again at every return that selects them, so `item_entry` remembers each one's JSON and
digest; `entry_digest` makes the digest of any entry afresh, as a verifier does.
"""

from collections.abc import Mapping
from typing import Any

from readmit.admission.memo import keep
from readmit.canonical import canonical_json, digest, digest_text, json_string
from readmit.model import Item


def item_entry(item: Item) -> tuple[dict[str, Any], str]:
    """The view entry of ``item``, and its canonical JSON (remembered per item: `_ENTRIES`)."""
    entry: dict[str, Any] = {
        "id": item.id,
        "kind": str(item.kind),
        "text": item.text,
        "epoch": item.epoch,
        "supports": sorted(item.supports),
        "receipt": None
        if item.receipt is None
        else {
            "event": item.receipt.event_id,
            "author": item.receipt.author,
            "epoch": item.receipt.epoch,
            "digest": item.receipt.digest,
        },
    }
    known = _ENTRIES.get(id(item))
    if known is None:
        body = _entry_json(entry) or canonical_json(entry)
        made = digest_text(body)
        # "digest" sorts before every other key of an entry.
        entry_json = f'{{"digest":{json_string(made)},{body[1:]}'
        known = keep(_ENTRIES, id(item), (item, made, entry_json), _ENTRIES_LIMIT)
    entry["digest"] = known[1]
    return entry, known[2]


_ENTRIES: dict[int, tuple[Item, str, str]] = {}
"""Each item's entry digest and canonical JSON (digest included), by identity: the item
is kept, so while it is remembered no other object has its id."""
_ENTRIES_LIMIT = 1 << 14


def entry_digest(body: Mapping[str, Any]) -> str:
    """``digest(body)`` of a view item's entry (without its digest), the same bytes.

    An entry of the shape `item_entry` builds is joined from canonical pieces (a view
    digests each entry twice, to build and to check it, and ``json.dumps`` of a small
    dict cost more than the rest of the view); any other shape, or a value of another
    type, is serialized by `canonical_json`.
    """
    joined = _entry_json(body)
    return digest(body) if joined is None else digest_text(joined)


_ENTRY_KEYS = frozenset({"id", "kind", "text", "epoch", "supports", "receipt"})
_RECEIPT_KEYS = frozenset({"event", "author", "epoch", "digest"})


def _entry_json(body: Mapping[str, Any]) -> str | None:
    """Canonical JSON of an entry of `item_entry`'s shape and types, else ``None``."""
    if type(body) is not dict or body.keys() != _ENTRY_KEYS:
        return None
    ident, kind, text, epoch = body["id"], body["kind"], body["text"], body["epoch"]
    supports, receipt = body["supports"], body["receipt"]
    if not (
        type(ident) is str
        and type(kind) is str
        and type(text) is str
        and type(epoch) is int
        and type(supports) is list
        and all(type(s) is str for s in supports)
    ):
        return None
    if receipt is None:
        bound = "null"
    elif (
        type(receipt) is dict
        and receipt.keys() == _RECEIPT_KEYS
        and type(receipt["epoch"]) is int
        and type(receipt["event"]) is str
        and type(receipt["author"]) is str
        and type(receipt["digest"]) is str
    ):
        bound = (
            f'{{"author":{json_string(receipt["author"])},'
            f'"digest":{json_string(receipt["digest"])},'
            f'"epoch":{receipt["epoch"]},"event":{json_string(receipt["event"])}}}'
        )
    else:
        return None
    return (
        f'{{"epoch":{epoch},"id":{json_string(ident)},"kind":{json_string(kind)},'
        f'"receipt":{bound},"supports":[{",".join(map(json_string, supports))}],'
        f'"text":{json_string(text)}}}'
    )
