"""The error-code table of docs/reason-codes.md is the contract: each class of
`readmit.errors` has a row whose CLI exit and HTTP status are what the code does."""

from pathlib import Path

import pytest

import readmit.errors
from readmit.cli import exit_code
from readmit.errors import ReadmitError
from readmit.service.answers import status_of

DOC = Path(__file__).parents[2] / "docs" / "reason-codes.md"


def table() -> dict[str, list[str]]:
    """The error-code table's rows by code: [class, CLI exit, HTTP, meaning]."""
    text = DOC.read_text(encoding="utf-8").split("## Error codes", 1)[1]
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    return {c[0].strip("`"): c[1:] for c in cells}


CLASSES = [
    c for c in vars(readmit.errors).values() if isinstance(c, type) and issubclass(c, ReadmitError)
]
ERRORS = sorted((c for c in CLASSES if "code" in vars(c)), key=lambda c: c.code)
"""The classes that name a code; a subclass that keeps its parent's code shares its row."""
REFINED = [c for c in CLASSES if "code" not in vars(c)]


@pytest.mark.parametrize("error", ERRORS, ids=lambda c: c.code)
def test_each_error_class_has_a_true_row(error: type[ReadmitError]) -> None:
    row = table()[error.code]
    instance = error.__new__(error)  # only its class matters to the mappings

    assert row[0] == f"`{error.__name__}`"
    assert row[1] == str(exit_code(instance))
    assert row[2] == str(status_of(instance))
    assert row[3]


@pytest.mark.parametrize("error", REFINED, ids=lambda c: c.__name__)
def test_an_error_that_keeps_its_parents_code_is_answered_as_its_parent(
    error: type[ReadmitError],
) -> None:
    parent = next(c for c in error.__mro__[1:] if issubclass(c, ReadmitError) and "code" in vars(c))
    instance, of_parent = error.__new__(error), parent.__new__(parent)

    assert exit_code(instance) == exit_code(of_parent)
    assert status_of(instance) == status_of(of_parent)


def test_the_service_spells_its_codes_through_the_classes() -> None:
    service = Path(readmit.errors.__file__).parent / "service"
    for path in service.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for code in ("internal", "invalid_request", "payload_too_large", "rate_limited"):
            assert f'"{code}"' not in text, (path, code)
