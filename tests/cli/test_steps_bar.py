"""`readmit.cli.progress.steps_bar`: a bar on a terminal's stderr, nothing elsewhere (click's
own bar prints its label once where it cannot draw)."""

import io
import sys

import pytest

from readmit.cli.progress import steps_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_written_where_stderr_is_no_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)

    with steps_bar(3, "episodes") as advance:
        for _ in range(3):
            advance(1)

    assert err.getvalue() == ""


def test_a_terminal_is_drawn_the_bar_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)

    with steps_bar(4, "episodes") as advance:
        advance(1)
        advance(3)

    drawn = err.getvalue()
    assert "episodes" in drawn
    assert "100%" in drawn
