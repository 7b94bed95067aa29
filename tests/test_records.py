import copy
from dataclasses import FrozenInstanceError, InitVar, dataclass, field, replace
from datetime import UTC, datetime

import pytest

from readmit.errors import InvalidInput
from readmit.model import Item, Kind, Receipt, Scope, Validity
from readmit.reasons import Exclusion, Reason, Stage
from readmit.records import positional

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _both() -> tuple[Item, Item]:
    receipt = Receipt(event_id="e1", author="A1", epoch=3, digest="sha256:ab")
    scope = Scope(principals=frozenset({"p"}))
    validity = Validity(valid_from=NOW)
    made = positional(Item)(
        "m1", "Room Atlas is booked", Kind.CONSTRAINT, 3, "A1", scope, validity, "room",
        positional(Receipt)("e1", "A1", 3, "sha256:ab"), frozenset({"m0"}), frozenset({"d"}),
        frozenset(), None,
    )  # fmt: skip
    own = Item(
        id="m1",
        text="Room Atlas is booked",
        kind=Kind.CONSTRAINT,
        epoch=3,
        author="A1",
        scope=scope,
        validity=validity,
        key="room",
        receipt=receipt,
        depends_on=frozenset({"m0"}),
        supports=frozenset({"d"}),
    )
    return made, own


def test_a_value_it_makes_is_the_one_the_class_makes() -> None:
    made, own = _both()

    assert type(made) is Item
    assert made == own
    assert hash(made) == hash(own)
    assert repr(made) == repr(own)
    assert copy.deepcopy(made) == own
    assert replace(made, text="Room Beacon is booked") == replace(own, text="Room Beacon is booked")


def test_a_value_it_makes_is_frozen() -> None:
    made, _ = _both()

    with pytest.raises(FrozenInstanceError):
        made.text = "changed"  # type: ignore[misc]


def test_it_runs_the_classs_checks() -> None:
    with pytest.raises(InvalidInput, match="receipt epoch"):
        positional(Receipt)("e1", "A1", 0, "sha256:ab")


def test_a_class_without_checks_is_made_as_is() -> None:
    made = positional(Exclusion)("m1", Reason.NOT_SELECTED, Stage.SELECTION, (), "", None, ())

    assert made == Exclusion(item="m1", reason=Reason.NOT_SELECTED, stage=Stage.SELECTION)


@dataclass(slots=True)
class _Unfrozen:
    value: int


@dataclass(frozen=True)
class _NoSlots:
    value: int


@pytest.mark.parametrize("cls", [_Unfrozen, _NoSlots, int])
def test_only_a_frozen_dataclass_with_slots_is_accepted(cls: type) -> None:
    with pytest.raises(TypeError, match="not a frozen dataclass with slots"):
        positional(cls)


@dataclass(frozen=True, slots=True)
class _Scaled:
    value: int
    scale: InitVar[int]

    def __post_init__(self, scale: int) -> None:
        pass


@dataclass(frozen=True, slots=True)
class _Derived:
    value: int
    count: int = field(default=0, init=False)


@dataclass(frozen=True, slots=True)
class _Child(_Derived):
    more: int = 0


@pytest.mark.parametrize("cls", [_Scaled, _Derived, _Child])
def test_a_class_whose_init_is_not_its_fields_or_which_has_a_base_is_refused(cls: type) -> None:
    with pytest.raises(TypeError, match="cannot be built positionally"):
        positional(cls)
