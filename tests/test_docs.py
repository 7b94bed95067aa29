"""Every reason code, error code and command is documented (the docs are part of the contract)."""

from pathlib import Path

import pytest
from click.testing import CliRunner

import readmit.errors
from readmit.cli import cli
from readmit.errors import ReadmitError
from readmit.reasons import REASON_HELP, Reason
from readmit.service.app import create_app
from readmit.store import open_store
from servicekit import make_team, serving

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
REASONS_DOC = (ROOT / "docs" / "reason-codes.md").read_text(encoding="utf-8")


def error_classes() -> list[type[ReadmitError]]:
    return [
        c
        for c in vars(readmit.errors).values()
        if isinstance(c, type) and issubclass(c, ReadmitError)
    ]


@pytest.mark.parametrize("reason", list(Reason))
def test_every_reason_code_is_documented(reason: Reason) -> None:
    assert f"`{reason.value}`" in REASONS_DOC
    assert reason in REASON_HELP


@pytest.mark.parametrize("error", error_classes(), ids=lambda c: c.code)
def test_every_error_code_is_documented(error: type[ReadmitError]) -> None:
    assert f"`{error.code}`" in REASONS_DOC


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_has_help_and_is_in_the_readme(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])

    assert result.exit_code == 0
    assert len(result.output.splitlines()) > 2
    assert f"readmit {command}" in README


def test_reason_codes_in_the_readme_table() -> None:
    for reason in Reason:
        assert f"`{reason.value}`" in README


def python_blocks(text: str) -> list[str]:
    parts = text.split("```python\n")[1:]
    return [p.split("```", 1)[0] for p in parts]


@pytest.mark.parametrize("block", python_blocks(README))
def test_readme_python_examples_run(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store("sqlite://:memory:")
    team = make_team(store)
    monkeypatch.setenv("READMIT_AGENT_KEY", team.keys["A1"])
    monkeypatch.setenv("READMIT_AGENT", "A1")

    with serving(create_app(team.service)) as url:
        monkeypatch.setenv("READMIT_URL", url)
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    store.close()
