"""The explain command replay prints names ``--db`` only when the store was given by the
flag: a store from READMIT_DB is found by the printed command the same way."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from readmit.cli import cli


def test_a_store_from_the_environment_is_not_named_in_the_printed_command(
    runner: CliRunner, scenario_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("READMIT_DB", f"sqlite:///{tmp_path / 'env.db'}")

    replayed = runner.invoke(cli, ["replay", str(scenario_file)])

    assert replayed.exit_code == 0, replayed.output
    commands = re.findall(r"stored as decision (\d+): (readmit explain .*)", replayed.stdout)
    assert commands
    for n, command in commands:
        assert command == f"readmit explain {n} --workspace family-trip"
        explained = runner.invoke(cli, command.split()[1:])
        assert explained.exit_code == 0, explained.output
