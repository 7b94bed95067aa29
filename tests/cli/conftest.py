"""Fixtures of the CLI tests: a runner with the signing key set, the travel case as a file."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from builders import KEY


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("READMIT_SIGNING_KEY", KEY.decode())
    monkeypatch.delenv("READMIT_DB", raising=False)
    return CliRunner()


@pytest.fixture
def scenario_file(tmp_path: Path, travel: dict[str, Any]) -> Path:
    path = tmp_path / "trip.json"
    path.write_text(json.dumps(travel), encoding="utf-8")
    return path
