"""``readmit init`` writes a starter scenario that replays; ``verify --decision N`` picks one."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from readmit.cli import cli


@pytest.fixture
def decisions(runner: CliRunner, tmp_path: Path) -> Path:
    scenario = tmp_path / "start.json"
    assert runner.invoke(cli, ["init", str(scenario)]).exit_code == 0
    out = tmp_path / "decisions.json"
    out.write_text(runner.invoke(cli, ["replay", str(scenario), "--json"]).stdout, "utf-8")
    return out


def test_init_writes_a_starter_and_its_guide_that_replay_cleanly(
    runner: CliRunner, tmp_path: Path
) -> None:
    scenario = tmp_path / "start.json"

    made = runner.invoke(cli, ["init", str(scenario)])
    replayed = runner.invoke(cli, ["replay", str(scenario), "--json"])

    assert made.exit_code == 0, made.output
    assert replayed.exit_code == 0, replayed.output
    outcomes = [d["outcome"] for d in json.loads(replayed.stdout)["decisions"]]
    assert outcomes == ["blocked", "issued"]
    guide = (tmp_path / "start.md").read_text(encoding="utf-8")
    events = json.loads(scenario.read_text(encoding="utf-8"))["events"]
    for n in range(1, len(events) + 1):
        assert f"\n{n}. " in guide  # every event is explained, by its number
    assert "readmit replay start.json" in guide


NAMES = ("release.json", "hotfix.json", " spaced.json")


def test_two_starters_replay_into_one_store_each_in_a_workspace_named_after_its_file(
    runner: CliRunner, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/team.db"
    made = [runner.invoke(cli, ["init", str(tmp_path / name)]) for name in NAMES]
    assert [m.exit_code for m in made] == [0, 0, 0]
    assert "(the scenario, workspace 'release')" in made[0].output
    assert "' spaced' is no workspace name, so the workspace is 'starter'" in made[2].output

    for name in NAMES:
        replayed = runner.invoke(cli, ["replay", str(tmp_path / name), "--db", db])
        assert replayed.exit_code == 0, replayed.output
    audit = runner.invoke(cli, ["audit", "--db", db])

    assert audit.exit_code == 0, audit.output
    named = [
        json.loads((tmp_path / n).read_text("utf-8"))["workspace"]
        for n in ("release.json", " spaced.json")
    ]
    assert named == ["release", "starter"]  # a stem that is no workspace name: the default
    for workspace in ("release", "hotfix", "starter"):
        assert workspace in audit.output


def test_the_guides_commands_verify_the_issued_view(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a newcomer would type them, from the guide (before, it named no way to check
    the view, and ``verify`` without ``--at`` refuses it as expired: its dates are past)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("READMIT_SIGNING_KEY", "a-secret-of-sixteen-or-more")
    assert runner.invoke(cli, ["init", "start.json"]).exit_code == 0
    guide = Path("start.md").read_text(encoding="utf-8")
    commands = [line.split()[1:] for line in guide.splitlines() if line.startswith("    readmit ")]

    said = []
    for args in commands:
        out = args[args.index(">") + 1] if ">" in args else None
        result = runner.invoke(cli, args[: args.index(">")] if out else args)
        assert result.exit_code == 0, result.output
        if out:
            Path(out).write_text(result.stdout, encoding="utf-8")
        said.append(result.stdout)

    assert "\n    export READMIT_SIGNING_KEY=" in guide  # replay and verify share a key
    assert [c[0] for c in commands] == ["replay", "replay", "verify"]
    assert said[-1].startswith("ok: view")


def test_init_never_overwrites_a_file(runner: CliRunner, tmp_path: Path) -> None:
    scenario = tmp_path / "start.json"
    scenario.write_text("mine", encoding="utf-8")

    result = runner.invoke(cli, ["init", str(scenario)])

    assert result.exit_code == 2
    assert "error [invalid_input]:" in result.output
    assert "already exists" in result.output
    assert scenario.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("name", ["trip.yaml", "trip.YML", "trip.toml"])
def test_init_refuses_a_name_of_another_format(
    runner: CliRunner, tmp_path: Path, name: str
) -> None:
    """A newcomer's ``readmit init x.yaml`` wrote JSON into a file named for YAML."""
    result = runner.invoke(cli, ["init", str(tmp_path / name)])

    assert result.exit_code == 2
    assert "a scenario is JSON" in result.output
    assert "trip.json" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "suggested"),
    [
        ("y.md", "y.json"),
        ("notes.txt", "notes.json"),
        ("scenario", "scenario.json"),
        ("release-1.4", "release-1.4.json"),
    ],
)
def test_init_refuses_a_name_not_ending_in_json_and_suggests_one(
    runner: CliRunner, tmp_path: Path, name: str, suggested: str
) -> None:
    """``readmit init y.md`` wrote the JSON scenario into y.md (and its guide to y.guide.md);
    ``readmit init scenario`` wrote it to a file no tool takes for JSON."""
    result = runner.invoke(cli, ["init", str(tmp_path / name)])

    assert result.exit_code == 2
    assert result.output == (
        f"error [invalid_input]: {tmp_path / name}: a scenario is JSON; give a name ending "
        f"in .json, such as {tmp_path / suggested}\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", [".json", " .json", "..json", ".JSON"])
def test_init_refuses_a_json_name_with_nothing_before_it(
    runner: CliRunner, tmp_path: Path, name: str
) -> None:
    """``readmit init .json`` wrote a hidden file ``.json`` and named its workspace '.json'."""
    result = runner.invoke(cli, ["init", str(tmp_path / name)])

    assert result.exit_code == 2
    assert result.output == (
        f"error [invalid_input]: {str(tmp_path / name)!r} has no name before .json: give one, "
        f"such as {tmp_path / 'scenario.json'}\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_init_takes_json_in_capitals(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["init", str(tmp_path / "trip.JSON")])

    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trip.JSON", "trip.md"]


def test_verify_picks_one_decision_out_of_replay_output(runner: CliRunner, decisions: Path) -> None:
    issued = json.loads(decisions.read_text(encoding="utf-8"))["decisions"][1]

    result = runner.invoke(
        cli, ["verify", str(decisions), "--decision", "2", "--at", issued["view"]["issued_at"]]
    )

    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: view")


def test_verify_before_the_view_was_issued_says_when_it_holds(
    runner: CliRunner, decisions: Path
) -> None:
    """A newcomer gave the blocked return's time and read only when the view expires."""
    view = json.loads(decisions.read_text(encoding="utf-8"))["decisions"][1]["view"]
    early = "2026-06-02T13:00:00Z"

    result = runner.invoke(cli, ["verify", str(decisions), "--decision", "2", "--at", early])

    assert result.exit_code == 3
    assert f"holds from {view['issued_at']} until {view['expires_at']}" in result.output


def test_verify_says_a_blocked_decision_has_no_view(runner: CliRunner, decisions: Path) -> None:
    result = runner.invoke(cli, ["verify", str(decisions), "--decision", "1"])

    assert result.exit_code == 2
    assert result.output.startswith("error [invalid_input]: decision 1 ")
    assert "blocked" in result.output
    assert "no view" in result.output


def test_verify_on_replay_output_asks_which_decision(runner: CliRunner, decisions: Path) -> None:
    result = runner.invoke(cli, ["verify", str(decisions)])

    assert result.exit_code == 2
    assert "2 decisions" in result.output
    assert "--decision N" in result.output


def test_verify_names_a_decision_that_is_not_there(runner: CliRunner, decisions: Path) -> None:
    result = runner.invoke(cli, ["verify", str(decisions), "--decision", "3"])

    assert result.exit_code == 2
    assert "no decision 3" in result.output


def test_verify_says_a_single_blocked_decision_has_no_view(
    runner: CliRunner, decisions: Path, tmp_path: Path
) -> None:
    one = tmp_path / "one.json"
    one.write_text(
        json.dumps(json.loads(decisions.read_text(encoding="utf-8"))["decisions"][0]), "utf-8"
    )

    result = runner.invoke(cli, ["verify", str(one)])

    assert result.exit_code == 2
    assert "blocked" in result.output
    assert "no view" in result.output
