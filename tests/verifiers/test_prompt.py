"""What the OpenAI-compatible verifier asks, and how it is configured (no server needed)."""

import pytest

from builders import item
from readmit.admission.invalidation.implicit import Later, Pair
from readmit.errors import ConfigError
from readmit.verifiers.openai_compat import DECIDE_AT_ENV, TIMEOUT_ENV, factory, question

LATER = Later(event_id="e9", epoch=9, op="assert", text="Answer to the current question: Yes")


def test_the_question_shows_what_the_earlier_note_relies_on() -> None:
    answer = item("a0", "Answer to the current question: No")
    pair = Pair(later=LATER, earlier=answer, premises=("Current question: Is Mars blue?",))

    asked = question(pair)

    assert 'relies on: "Current question: Is Mars blue?"' in asked
    assert "relies on" not in question(Pair(later=LATER, earlier=answer))


def test_the_cut_off_comes_from_the_settings() -> None:
    spec = "m@http://127.0.0.1:1/v1"

    assert factory(spec, {}).decide_at == 0.5
    assert factory(spec, {DECIDE_AT_ENV: "0.425"}).decide_at == 0.425


@pytest.mark.parametrize("bad", ["", "high", "1.5", "-0.1", "nan"])
def test_a_bad_cut_off_is_a_config_error_naming_the_variable(bad: str) -> None:
    with pytest.raises(ConfigError, match=DECIDE_AT_ENV):
        factory("m@http://127.0.0.1:1/v1", {DECIDE_AT_ENV: bad})


def test_the_timeout_comes_from_the_settings() -> None:
    spec = "m@http://127.0.0.1:1/v1"

    assert factory(spec, {}).client.timeout == 60.0
    assert factory(spec, {TIMEOUT_ENV: "900"}).client.timeout == 900.0
    with pytest.raises(ConfigError, match=TIMEOUT_ENV):
        factory(spec, {TIMEOUT_ENV: "0"})
