"""What the OpenAI-compatible verifier asks, and how it is configured (no server needed)."""

import pytest

from builders import item
from readmit.admission.invalidation.implicit import Later, Pair
from readmit.errors import ConfigError
from readmit.verifiers.openai_compat import DECIDE_AT_ENV, TIMEOUT_ENV, factory, question
from readmit.verifiers.prompt import ONE_WORD_ASK, messages

LATER = Later(event_id="e9", epoch=9, op="assert", text="Answer to the current question: Yes")


def test_the_question_shows_what_the_earlier_note_relies_on() -> None:
    answer = item("a0", "Answer to the current question: No")
    pair = Pair(later=LATER, earlier=answer, premises=("Current question: Is Mars blue?",))

    asked = question(pair)

    assert 'relies on: "Current question: Is Mars blue?"' in asked
    assert "relies on" not in question(Pair(later=LATER, earlier=answer))


def test_the_worked_examples_are_chat_turns_answered_yes_and_no_before_the_question() -> None:
    chat = messages("EARLIER: a\nLATER: b\nDoes LATER invalidate EARLIER?", ONE_WORD_ASK)

    turns = chat[1:-1]

    assert chat[0]["role"] == "system"
    assert ONE_WORD_ASK in chat[0]["content"]
    assert [t["role"] for t in turns] == ["user", "assistant"] * (len(turns) // 2)
    assert {t["content"] for t in turns[1::2]} == {"yes", "no"}
    assert chat[-1]["content"].startswith("EARLIER: a")


def test_the_fixed_prefix_does_not_grow_unnoticed() -> None:
    """Every call carries it (726 tokens with the 1.5B model); see results-verifiers, stop 19."""
    fixed = messages("", ONE_WORD_ASK)

    assert sum(len(m["content"]) for m in fixed) < 2_500


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
