"""A library caller's drafts: a list where a set is meant is taken; one string, which would
read as a set of its characters, is refused by name, as HTTP refuses it."""

from enum import StrEnum
from typing import Any, cast

import pytest

from readmit.errors import ConfigError, InvalidInput
from readmit.events import ItemDraft, ObligationDraft
from readmit.model import Agent, Kind, Validity
from readmit.signing import HmacSha256Signer


def obligation(requires: object, critical: object) -> ObligationDraft:
    return ObligationDraft(
        id="o",
        text="Keep it booked.",
        role="booking",
        requires=requires,  # type: ignore[arg-type]
        critical=critical,  # type: ignore[arg-type]
        frontier_id="f",
        frontier_text="Nothing open.",
    )


@pytest.mark.parametrize("field", ["supports", "depends_on", "cites", "principals", "roles"])
def test_a_list_is_held_as_the_set_it_means(field: str) -> None:
    given: dict[str, Any] = {field: ["a", "b", "a"]}  # what the type hints would not allow

    draft = ItemDraft(id="x", text="A fact.", **given)

    assert getattr(draft, field) == frozenset({"a", "b"})


@pytest.mark.parametrize("field", ["supports", "depends_on", "cites", "principals", "purposes"])
def test_one_string_for_a_set_is_refused_by_name(field: str) -> None:
    with pytest.raises(InvalidInput, match=f"item 'x': {field} must be a set of strings, not str"):
        ItemDraft(id="x", text="A fact.", **cast(dict[str, Any], {field: "d_p"}))


@pytest.mark.parametrize("given", [[1], frozenset({1})])
def test_a_set_holding_anything_but_strings_is_refused(given: object) -> None:
    with pytest.raises(InvalidInput, match="depends_on must hold only strings"):
        ItemDraft(id="x", text="A fact.", depends_on=given)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["supports", "depends_on", "roles", "purposes"])
def test_none_is_no_set_but_for_principals(field: str) -> None:
    with pytest.raises(InvalidInput, match=f"{field} must be a set of strings, not NoneType"):
        ItemDraft(id="x", text="A fact.", **cast(dict[str, Any], {field: None}))

    assert ItemDraft(id="x", text="A fact.", principals=None).principals is None


def test_an_obligations_labels_are_compared_as_sets() -> None:
    assert obligation(["a", "b"], ["b"]).critical == frozenset({"b"})
    with pytest.raises(InvalidInput, match="critical must be a subset of requires"):
        obligation(["zz"], ["z"])
    with pytest.raises(InvalidInput, match="requires must be a set of strings, not str"):
        obligation("ab", ["a"])


def test_a_signing_key_given_as_text_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"must be bytes, not str \(e.g. key.encode\(\)\)"):
        HmacSha256Signer("a-long-enough-key-given-as-text-not-bytes")  # type: ignore[arg-type]


def test_a_signing_key_in_a_bytearray_is_taken_as_bytes() -> None:
    signer = HmacSha256Signer(bytearray(b"a-long-enough-key-in-a-bytearray"))  # type: ignore[arg-type]

    assert signer.key == b"a-long-enough-key-in-a-bytearray"


def test_members_of_a_str_enum_are_taken_as_their_strings() -> None:
    class Role(StrEnum):
        OPS = "ops"

    draft = ItemDraft(id="x", text="A fact.", roles=frozenset({Role.OPS}))

    assert draft.roles == frozenset({"ops"})
    assert all(type(r) is str for r in draft.roles)


def test_a_kind_given_as_a_string_is_held_as_the_kind_and_an_unknown_one_refused() -> None:
    """Stored, an unknown kind broke every later read of the workspace."""
    assert ItemDraft(id="a", text="t", kind="constraint").kind is Kind.CONSTRAINT  # type: ignore[arg-type]

    with pytest.raises(InvalidInput, match="kind 'fakt' is not one of fact, constraint"):
        ItemDraft(id="a", text="t", kind="fakt")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: ItemDraft(id=cast(Any, 5), text="t"), "item id must be a string, not 5"),
        (lambda: ItemDraft(id="a", text=cast(Any, None)), "item text must be a string, not None"),
        (lambda: ItemDraft(id="a", text="t", key=cast(Any, 5)), "item key must be a string"),
        (lambda: Agent(id=cast(Any, 1), principal="p", role="r"), "agent id must be a string"),
        (lambda: Agent(id="a", principal=cast(Any, None), role="r"), "agent principal must be"),
        (lambda: Validity(valid_to=cast(Any, "2026-05-01")), "valid_to must be a datetime, not"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_by_name_not_met_by_an_attribute_error(
    make: Any, said: str
) -> None:
    with pytest.raises(InvalidInput, match=said):
        make()
