"""Two ``readmit serve`` processes over one PostgreSQL decide as one process does, and
concurrent writers through both get gap-free epochs (``bench/multiprocess.py``)."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import postgres_url

SCRIPT = Path(__file__).parent.parent.parent / "bench" / "multiprocess.py"


def _proof(*flags: str) -> str:
    """``bench/multiprocess.py`` over the test server with ``flags``: its output, once passed."""
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--postgres", postgres_url(), "--rounds", "12", *flags],
        capture_output=True,
        text=True,
        timeout=600,  # three server starts and ~50 requests: generous on a busy machine
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.postgres
def test_two_server_processes_decide_as_one_and_keep_epochs_gap_free() -> None:
    said = _proof()

    assert "identical" in said
    assert "gap-free" in said


@pytest.mark.postgres
def test_server_processes_whose_machines_clocks_are_apart_decide_as_one() -> None:
    """Process 1 reads the wall clock 120 s ahead of process 0: both date by the database's.

    By their own clocks, a departure through the process ahead was in the future of the
    one behind: a return through it was refused ("has not departed") or decided against
    the departure before (a review).
    """
    said = _proof("--clock-apart", "120")

    assert "identical" in said
    assert "gap-free" in said
