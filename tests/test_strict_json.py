"""strict_json.loads refuses ambiguous or unbounded JSON with InvalidInput, never a traceback."""

import json
from dataclasses import dataclass

import pytest

from readmit import strict_json
from readmit.errors import InvalidInput, NotJson, RepeatedKey


@dataclass(frozen=True)
class Case:
    id: str
    data: str | bytes
    message: str


CASES = [
    Case("duplicate key", '{"a": 1, "a": 2}', "repeats the key 'a'"),
    Case("nested duplicate key", '{"x": [{"items": [], "items": [1]}]}', "repeats the key 'items'"),
    Case("invalid utf-8", b'{"a": "\xff"}', "not valid UTF-8"),
    Case("overlong utf-8", b'{"a": "\xc0\xaf"}', "not valid UTF-8"),
    Case("utf-8 BOM", b'\xef\xbb\xbf{"a": 1}', "starts with a byte order mark"),
    Case("utf-16", '{"a": 1}'.encode("utf-16"), "not valid UTF-8"),
    Case("deep arrays", "[" * 65 + "]" * 65, "deeper than 64"),
    Case("deep objects", '{"a":' * 65 + "1" + "}" * 65, "deeper than 64"),
    Case("very deep", "[" * 100_000 + "]" * 100_000, "deeper than 64"),
    Case("4300-digit integer", "1" * 4301, "longer than 100"),
    Case("long float", "0." + "1" * 200, "longer than 100"),
    Case("float overflow", "1e400", "out of range"),
    Case("NaN", '{"a": NaN}', "NaN"),
    Case("Infinity", "[Infinity]", "Infinity"),
    Case("-Infinity", "[-Infinity]", "-Infinity"),
    Case("lone surrogate value", '["\\ud800"]', "lone surrogate"),
    Case("lone surrogate key", '{"\\udfff": 1}', "lone surrogate"),
    Case("not json", "{", "not JSON"),
    Case("empty", b"", "not JSON"),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_hostile_json_is_refused_with_a_clear_message(case: Case) -> None:
    with pytest.raises(InvalidInput) as raised:
        strict_json.loads(case.data)

    assert case.message in str(raised.value)
    assert raised.value.code == "invalid_input"
    assert isinstance(raised.value, RepeatedKey) == ("repeats the key" in case.message)


def test_text_that_is_not_json_says_what_and_where_apart_from_its_words() -> None:
    with pytest.raises(NotJson) as raised:
        strict_json.loads('{"a": 1,}')

    assert (raised.value.problem, raised.value.at) == (
        "Expecting property name enclosed in double quotes",
        8,
    )
    assert str(raised.value).startswith("not JSON: Expecting property name")


def test_a_repeated_key_is_told_by_its_type_and_named() -> None:
    """Callers (``/v1/verify``) tell it from JSON that is not JSON by its type, not its words."""
    with pytest.raises(RepeatedKey) as raised:
        strict_json.loads('{"x": [{"items": [], "items": [1]}]}')

    assert raised.value.key == "items"
    assert str(raised.value) == "JSON object repeats the key 'items'"


def test_ordinary_json_parses_as_json_loads_does() -> None:
    text = '{"a": [1, 2.5, "é", null, true], "b": {"c": -3}, "d": "\\ud83d\\ude00"}'

    assert (
        strict_json.loads(text)
        == strict_json.loads(text.encode())
        == {
            "a": [1, 2.5, "é", None, True],
            "b": {"c": -3},
            "d": "\U0001f600",
        }
    )


def test_nesting_at_the_limit_is_accepted() -> None:
    assert strict_json.loads("[" * 64 + "]" * 64) is not None


@pytest.mark.parametrize(
    ("text", "deeper"),
    [
        ("1", False),
        ("[" * 64 + "]" * 64, False),
        ("[" * 65 + "]" * 65, True),
        ('{"a":' * 64 + "1" + "}" * 64, False),
        ('{"a":' * 64 + "[]" + "}" * 64, True),
        ("[1, [2, [3]], " + "[" * 64 + "]" * 64 + "]", True),
    ],
)
def test_nesting_is_measured_as_loads_limits_it(text: str, deeper: bool) -> None:
    assert strict_json.nests_deeper(json.loads(text)) is deeper
    if deeper:
        with pytest.raises(InvalidInput, match="deeper than 64"):
            strict_json.loads(text)
    else:
        strict_json.loads(text)


def test_nesting_past_the_recursion_limit_is_measured() -> None:
    value: list[object] = []
    for _ in range(5000):
        value = [value]

    assert strict_json.nests_deeper(value) is True
    assert strict_json.nests_deeper(value, limit=5001) is False
