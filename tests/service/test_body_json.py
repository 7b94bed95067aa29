"""How a body route reads JSON before FastAPI does (`readmit.service.strict_route`)."""

import sys

import pytest

from readmit.errors import LongNumber
from readmit.service.strict_route import read_int


def test_a_number_past_pythons_digit_limit_is_told_by_its_type_not_its_words() -> None:
    limit = sys.get_int_max_str_digits()

    with pytest.raises(LongNumber) as raised:
        read_int("9" * (limit + 1))

    assert raised.value.limit == limit


def test_a_sign_is_not_counted_as_a_digit_as_python_does_not() -> None:
    limit = sys.get_int_max_str_digits()

    assert read_int("-" + "9" * limit) == -int("9" * limit)
