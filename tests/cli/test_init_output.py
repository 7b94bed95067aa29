"""What ``readmit init`` says of the workspace it wrote, pinned where a mutation round
(helper, stop 60) found a change no other test saw."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from readmit.cli import cli


def _init(runner: CliRunner, file: Path) -> list[str]:
    made = runner.invoke(cli, ["init", str(file)])
    assert made.exit_code == 0, made.output
    return made.output.splitlines()


@pytest.mark.parametrize("stem", ["release", "starter"])
def test_a_starter_named_after_its_file_says_so_and_adds_no_note(
    runner: CliRunner, tmp_path: Path, stem: str
) -> None:
    """The workspace is the stem (``starter.json``'s too, though it is also the default):
    the output names it, and the note about a stem that is no name is left out."""
    file = tmp_path / f"{stem}.json"

    said = _init(runner, file)

    assert said[0] == (
        f"wrote {file} (the scenario, workspace {stem!r}) and {file.with_suffix('.md')} "
        "(what each event does)"
    )
    assert said[1].startswith("next: readmit replay ")
    assert len(said) == 2


def test_a_stem_that_is_no_name_is_told_with_the_workspace_written(
    runner: CliRunner, tmp_path: Path
) -> None:
    """The ``wrote`` line names the workspace the file holds (``starter``), not the stem it
    could not be."""
    file = tmp_path / " spaced.json"

    said = _init(runner, file)

    assert said[0].startswith(f"wrote {file} (the scenario, workspace 'starter') and ")
    assert said[1] == "note: ' spaced' is no workspace name, so the workspace is 'starter'"
