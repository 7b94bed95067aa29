"""Two ``readmit serve`` processes over one PostgreSQL decide as one process does, and
concurrent writers through both get gap-free epochs (``bench/multiprocess.py``)."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import postgres_url

SCRIPT = Path(__file__).parent.parent.parent / "bench" / "multiprocess.py"


@pytest.mark.postgres
def test_two_server_processes_decide_as_one_and_keep_epochs_gap_free() -> None:
    url = postgres_url()
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--postgres", url, "--rounds", "12"],
        capture_output=True,
        text=True,
        timeout=600,  # three server starts and ~50 requests: generous on a busy machine
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "identical" in run.stdout
    assert "gap-free" in run.stdout
