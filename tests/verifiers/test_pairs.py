"""The pair files' loader: every row validated, a bad file a config error naming it."""

import json
from pathlib import Path
from typing import Any

import pytest

from readmit.errors import ConfigError
from readmit.verifiers.pairs import load_pairs, packaged_pairs
from readmit.verifiers.probes import PROBES

ROW: dict[str, Any] = {
    "id": "x/withdrawn_reference",
    "domain": "travel",
    "kind": "withdrawn_reference",
    "invalidates": True,
    "earlier": {"id": "p0", "text": "Pickup at 8:00 from Sunrise Hotel."},
    "later": {
        "event_id": "e9",
        "op": "revoke",
        "text": "No longer valid: Sunrise Hotel is booked.",
        "withdrawn_text": "Sunrise Hotel is booked.",
    },
}


def write(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"about": "test pairs", "pairs": list(rows)}))
    return path


def test_a_row_becomes_a_judged_pair_with_a_sourced_earlier_item(tmp_path: Path) -> None:
    [labeled] = load_pairs(write(tmp_path, ROW))

    later = labeled.pair.later
    assert (later.op, later.withdrawn_id, later.withdrawn_text) == (
        "revoke",
        "w",
        "Sunrise Hotel is booked.",
    )
    assert (later.epoch, labeled.pair.earlier.epoch) == (9, 1)
    assert labeled.pair.earlier.receipt is not None
    assert labeled.split is None


def test_the_check_pairs_ship_with_the_package_one_or_more_of_each_kind() -> None:
    assert packaged_pairs("check_pairs.json") == PROBES
    assert len(PROBES) == 8
    assert {p.kind for p in PROBES} == {
        "withdrawn_reference",
        "premise_change",
        "unrelated",
        "same_topic",
        "near_miss",
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"invalidates": False}, "withdrawn_reference pair must have invalidates=true"),
        ({"kind": "sideways"}, "kind"),
        ({"split": "train"}, "split"),
        ({"colour": "red"}, "colour"),
        ({"invalidates": "yes"}, "invalidates"),
        ({"later": {**ROW["later"], "op": "assert"}}, "withdrawn_text is not allowed"),
        ({"later": {**ROW["later"], "op": "supersede"}}, "replacement_text is required"),
        ({"later": {"event_id": "e9", "op": "close", "text": "t"}}, "withdrawn_text is required"),
        ({"earlier": {"id": "p0"}}, "earlier.text"),
    ],
)
def test_an_invalid_row_is_a_config_error_naming_the_file(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    path = write(tmp_path, {**ROW, **change})

    with pytest.raises(ConfigError, match=message) as raised:
        load_pairs(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("value", ["", "  ", "a\x00b", "\u200b"])
@pytest.mark.parametrize(
    "field",
    [
        "id",
        "domain",
        "earlier.id",
        "earlier.text",
        "later.event_id",
        "later.text",
        "later.withdrawn_text",
        "later.replacement_text",
    ],
)
def test_a_blank_or_unstorable_id_or_text_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, field: str, value: str
) -> None:
    """Each would make an item or event no store holds (or, before, a pair judged on nothing)."""
    row = json.loads(json.dumps(ROW))
    row["later"] = {**row["later"], "op": "supersede", "replacement_text": "Riverside Hotel."}
    *parents, name = field.split(".")
    part = row
    for parent in parents:
        part = part[parent]
    part[name] = value
    path = write(tmp_path, row)

    with pytest.raises(ConfigError) as raised:
        load_pairs(path)
    assert str(raised.value).startswith(f"{path}: pairs[0].{field}: ")


def test_a_repeated_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="repeats"):
        load_pairs(write(tmp_path, ROW, ROW))


@pytest.mark.parametrize(
    "text",
    ["{", '{"pairs": []}', "[]", b'{"about": "\xff", "pairs": []}', '{"pairs": [], "pairs": []}'],
)
def test_a_file_that_is_not_a_pair_file_is_a_config_error(
    tmp_path: Path, text: str | bytes
) -> None:
    path = tmp_path / "pairs.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())

    with pytest.raises(ConfigError, match=r"pairs\.json"):
        load_pairs(path)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nowhere\.json"):
        load_pairs(tmp_path / "nowhere.json")
