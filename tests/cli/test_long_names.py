"""A path no file system takes (a name over 255 bytes) ends every command in one error line.

``Path.exists()`` and ``is_dir()`` raise ``OSError`` (ENAMETOOLONG) for such a name rather
than answer False: ``init``, ``replay --db`` and ``gguf:PATH`` let it through as
``error [internal]: OSError`` with exit 1, where the other commands said what was wrong.
"""

import errno
import json
import os
from importlib.util import find_spec
from pathlib import Path

import pytest
from click.testing import CliRunner

from readmit.cli import cli
from readmit.examples.travel import travel_scenario

LONG = "a" * 300
"""A file name longer than any file system's limit (255 bytes on Linux and macOS)."""

TOO_LONG = os.strerror(errno.ENAMETOOLONG)
STORE = "sqlite:///{tmp}/t.db"
"""A store the travel case was replayed into."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the travel case (``trip.json``) and a store it was replayed into."""
    folder = tmp_path_factory.mktemp("long")
    (folder / "trip.json").write_text(json.dumps(travel_scenario()), encoding="utf-8")
    made = CliRunner().invoke(
        cli, ["replay", str(folder / "trip.json"), "--db", STORE.format(tmp=folder)]
    )
    assert made.exit_code == 0, made.output
    return folder


DB = [
    ["audit"],
    ["explain", "1"],
    ["judge-ahead", "--workspace", "trip"],
    ["keys", "create", "trip", "A1"],
    ["keys", "list"],
    ["keys", "revoke", "trip", "A1"],
    ["serve", "--port", "1"],
    ["mcp"],
    ["replay", "{tmp}/trip.json"],
    ["workspace", "create", "w", "--agent", "A:p:r"],
]
GGUF = [["replay", "{tmp}/trip.json", "--verifier"], ["replay", "{tmp}/trip.json", "--embeddings"]]
CASES = [
    (["init", f"{LONG}.json"], "invalid_input"),
    (["init", f"{{tmp}}/{LONG}/x.json"], "invalid_input"),
    *[([*args, "--db", f"sqlite:///{LONG}.db"], "config_error") for args in DB],
    *[([*args, "--db", f"sqlite:///{{tmp}}/{LONG}/x.db"], "config_error") for args in DB],
    *[([*args, f"gguf:{LONG}"], "config_error") for args in GGUF],
    (["replay", "{tmp}/trip.json", "--html", f"{LONG}"], "invalid_input"),
    (["verify", f"{LONG}.json"], "invalid_input"),
    (["bench", "--suite", "drift", "--out", LONG], "invalid_input"),
    (["explain", "1", "--db", STORE, "--html", f"{LONG}.html"], "invalid_input"),
    (["serve", "--port", "1", "--db", STORE, "--policy", f"{LONG}.toml"], "config_error"),
    (
        ["judge-ahead", "--workspace", "trip", "--db", STORE, "--policy", f"{LONG}.toml"],
        "config_error",
    ),
    (["verifiers", "calibrate", "builtin", f"{LONG}.json"], "config_error"),
]


_NEEDS_GGUF = pytest.mark.skipif(
    find_spec("xllamacpp") is None, reason="gguf:PATH is looked at once xllamacpp is installed"
)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        pytest.param(
            args,
            code,
            id=" ".join(args).replace(LONG, "LONG"),
            marks=[_NEEDS_GGUF] if "gguf:" in args[-1] else [],
        )
        for args, code in CASES
    ],
)
def test_a_name_too_long_for_the_file_system_is_one_error_line(
    runner: CliRunner,
    folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    code: str,
) -> None:
    monkeypatch.chdir(tmp_path)

    result = runner.invoke(cli, [a.replace("{tmp}", str(folder)) for a in args])

    errors = [line for line in result.stderr.splitlines() if line.startswith("error [")]
    assert result.exit_code == 2, result.output
    assert errors == [result.stderr.splitlines()[-1]], result.stderr
    assert errors[0].startswith(f"error [{code}]: "), errors
    assert TOO_LONG in errors[0]
    assert list(tmp_path.iterdir()) == []  # nothing written, no database made
