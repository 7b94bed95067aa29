"""The pieces canonical JSON is joined from write what `canonical_json` writes.

The store's log and the benchmark's raw INSERT build fixed-shape documents from
`json_string`, `json_strings` and `digest_text`; every byte must match the generic
encoder, or stored digests would change.
"""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from readmit.canonical import canonical_json, digest, digest_text, json_string, json_strings

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
