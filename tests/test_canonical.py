"""The pieces canonical JSON is joined from write what `canonical_json` writes.

The store's log, the benchmark's raw INSERT and a view's item entries build
fixed-shape documents from `json_string`, `json_strings` and `digest_text`; every
byte must match the generic encoder, or stored digests would change.
"""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from readmit.admission.entries import entry_digest
from readmit.canonical import canonical_json, digest, digest_text, json_string, json_strings
from readmit.events import text_digest

_text = st.text(st.characters(codec="utf-8"), max_size=20)
_json: Any = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=10,
)


@given(_text)
def test_a_string_is_encoded_as_canonical_json_encodes_it(value: str) -> None:
    assert json_string(value) == canonical_json(value)


@given(st.frozensets(_text, max_size=5))
def test_a_set_of_strings_is_its_sorted_list(values: frozenset[str]) -> None:
    assert json_strings(values) == canonical_json(sorted(values))


@given(_json)
def test_the_digest_of_canonical_text_is_the_digest_of_its_value(value: Any) -> None:
    assert digest_text(canonical_json(value)) == digest(value)


_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text
_receipt = (
    st.none()
    | st.fixed_dictionaries(
        {"event": _text, "author": _text, "epoch": st.integers(), "digest": _text}
    )
    | st.dictionaries(st.sampled_from(["event", "author", "epoch", "digest", "x"]), _scalar)
)
_entry = st.fixed_dictionaries(
    {
        "id": _text,
        "kind": _text,
        "text": _text,
        "epoch": st.integers(),
        "supports": st.lists(_text, max_size=3),
        "receipt": _receipt,
    }
)


@given(_entry | st.dictionaries(st.sampled_from(["id", "kind", "text", "epoch"]), _scalar))
def test_a_view_entry_is_digested_as_canonical_json_digests_it(entry: dict[str, Any]) -> None:
    assert entry_digest(entry) == digest(entry)


@given(_entry, st.sampled_from(["id", "kind", "text", "epoch", "supports"]), _scalar)
def test_an_entry_value_of_another_type_is_digested_as_canonical_json_digests_it(
    entry: dict[str, Any], field: str, value: Any
) -> None:
    entry[field] = value
    assert entry_digest(entry) == digest(entry)


@given(_text, _text)
def test_a_receipts_text_digest_is_the_digest_of_its_id_and_text(item_id: str, text: str) -> None:
    assert text_digest(item_id, text) == digest({"id": item_id, "text": text})
