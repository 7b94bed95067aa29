"""``readmit judge-ahead``: an away agent's return judged now, for a store no server serves."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner, Result

from builders import KEY, build_note, spent
from readmit.admission.invalidation.implicit import Verdict
from readmit.ahead import LEASE, WANTED
from readmit.cli import cli
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.service.operations import Service
from readmit.service.reading import Caller
from readmit.signing import HmacSha256Signer
from readmit.store import SqlStore, open_store
from readmit.testing import FunctionVerifier


def _service(db: str) -> Service:
    return Service(open_store(db), signer=HmacSha256Signer(KEY), verifier=make_verifier("builtin"))


def _away_after_changes(
    tmp_path: Path, returned: bool = True, said: tuple[str, str] | None = None
) -> str:
    """a0 away (having returned once, if ``returned``; its departure saying what it returns
    to, if ``said``) while a1 replaced what it holds."""
    db = f"sqlite:///{tmp_path / 'readmit.db'}"
    service = _service(db)
    team = [Agent(id=f"a{n}", principal="org", role="r") for n in range(2)]
    service.store.create_workspace("w", team)
    away, other = (Caller("w", agent) for agent in team)
    for n in range(6):
        service.record(other, [build_note("a1", n)])
    service.depart(away)
    if returned:
        service.return_(away, "ops", "p")
    if returned or said:
        service.depart(away, returning_to=said)
    for n in range(6, 9):
        service.record(other, [build_note("a1", n)])
    service.close()
    return db


def _judge(db: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["judge-ahead", "--db", db, "--workspace", "w", *args])


def _calls_at_return(db: str) -> int:
    """The verifier calls a0's return makes now, as the operator's record of it says
    (`spent`: the agent's copy does not)."""
    service = _service(db)
    try:
        judgment = service.return_(
            Caller("w", Agent(id="a0", principal="org", role="r")), "ops", "p"
        )["judgment"]
        calls: int = spent(service.store, "w", "a0")["calls"]
    finally:
        service.close()
    assert judgment is not None
    return calls


def test_an_away_agent_judged_ahead_returns_without_judging(tmp_path: Path) -> None:
    db = _away_after_changes(tmp_path)

    result = _judge(db)

    assert result.exit_code == 0, result.output
    said, judged = result.output.splitlines()
    assert said == "not away, so not judged: a1"  # named, not passed over in silence
    assert judged.startswith("a0: ")
    assert " 0 calls" not in judged
    assert _calls_at_return(db) == 0


def test_what_judging_ahead_judged_is_kept_in_the_stores_judgment_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a server's verifier does: a pair judged again (by a next pass, a return, another
    process) is answered from the store, not asked of a model again. (The built-in
    verifier is not cached: judging is cheaper for it.)"""
    db = _away_after_changes(tmp_path)
    model = FunctionVerifier(lambda pair: Verdict(invalidates=False, confidence=0.9, reason="no"))
    monkeypatch.setattr("readmit.cli.ahead.make_verifier", lambda spec, env: model)

    _judge(db)
    asked = sum(map(len, model.calls))
    _judge(db)  # nothing new: a pass asks the model nothing it answered

    store = open_store(db)
    try:
        [(kept,)] = store.conn.execute("SELECT count(*) FROM judgments").fetchall()
    finally:
        store.close()
    assert asked > 0
    assert kept == asked
    assert sum(map(len, model.calls)) == asked


def test_without_judging_ahead_the_return_judges(tmp_path: Path) -> None:
    """The control of the test above."""
    assert _calls_at_return(_away_after_changes(tmp_path)) > 0


def test_an_agent_whose_task_is_unknown_is_skipped_unless_given(tmp_path: Path) -> None:
    db = _away_after_changes(tmp_path, returned=False)

    skipped = _judge(db)
    named = _judge(db, "--agent", "a0")
    given = _judge(db, "--task", "ops", "--purpose", "p")

    assert skipped.exit_code == 0, skipped.output
    assert "a0: skipped" in skipped.output
    assert named.exit_code == 2  # named, so a cron job notices it was not judged
    assert "a0: its departure did not say" in named.output
    assert given.exit_code == 0, given.output
    assert _calls_at_return(db) == 0


def test_an_agent_whose_departure_said_its_task_is_judged_for_it(tmp_path: Path) -> None:
    db = _away_after_changes(tmp_path, returned=False, said=("ops", "p"))

    result = _judge(db)

    assert result.exit_code == 0, result.output
    assert "skipped" not in result.output
    assert _calls_at_return(db) == 0


def test_an_agent_that_is_not_away_is_refused(tmp_path: Path) -> None:
    result = _judge(_away_after_changes(tmp_path), "--agent", "a1")

    assert result.exit_code == 2
    assert "'a1' of 'w' is not away" in result.output


def test_a_task_without_a_purpose_is_refused(tmp_path: Path) -> None:
    result = _judge(_away_after_changes(tmp_path), "--task", "ops")

    assert result.exit_code == 2
    assert "give --task and --purpose together" in result.output


def test_an_unknown_workspace_or_agent_is_named_as_such(tmp_path: Path) -> None:
    db = _away_after_changes(tmp_path)

    workspace = CliRunner().invoke(cli, ["judge-ahead", "--db", db, "--workspace", "nope"])
    agent = _judge(db, "--agent", "a9")

    assert workspace.exit_code == 4
    assert "no workspace 'nope'" in workspace.output
    assert agent.exit_code == 4  # not_found, as `keys create` says it
    assert "no agent 'a9' in workspace 'w'" in agent.output


def test_a_policy_file_nesting_too_deep_is_one_config_error_line(tmp_path: Path) -> None:
    """It was ``error [internal]: RecursionError`` with exit 1 (``tomllib`` recursing)."""
    policy = tmp_path / "policy.toml"
    policy.write_text("gamma = " + "[" * 5000 + "]" * 5000, encoding="utf-8")

    result = _judge(_away_after_changes(tmp_path), "--policy", str(policy))

    assert result.exit_code == 2
    assert result.output == (
        f"error [config_error]: policy file {policy} nests deeper than 64 levels: "
        "it is read no deeper\n"
    )


def test_nobody_away_is_said(tmp_path: Path) -> None:
    db = _away_after_changes(tmp_path)
    assert _calls_at_return(db) > 0  # a0 is back

    result = _judge(db)

    assert result.exit_code == 0
    assert "no agent of 'w' is away" in result.output


def _given_back_once_waited_for(
    monkeypatch: pytest.MonkeyPatch, server: SqlStore, name: str, holder: str
) -> None:
    """The other process gives ``name`` back when the command first waits for it: the test
    does not depend on how fast a busy machine reaches the wait."""

    def sleep(seconds: float) -> None:
        server.lease("w", name, holder, 0)

    monkeypatch.setattr("readmit.cli.ahead.time", SimpleNamespace(sleep=sleep))


def test_it_waits_while_another_process_judges_the_workspace_and_gives_the_lease_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _away_after_changes(tmp_path)
    server = open_store(db)
    try:
        assert server.lease("w", LEASE, "a server", 60)
        _given_back_once_waited_for(monkeypatch, server, LEASE, "a server")

        result = _judge(db)

        assert result.exit_code == 0, result.output
        assert "another process is judging 'w' ahead: waiting for it" in result.output
        assert server.lease("w", LEASE, "a server", 30)  # given back when done
    finally:
        server.close()
    assert _calls_at_return(db) == 0


def test_it_gives_way_to_a_servers_return_and_judges_once_it_is_decided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's return asks for the workspace through the store while it is decided
    (`readmit.service.ahead.asking`): the pass stops, waits, and judges again after."""
    db = _away_after_changes(tmp_path)
    server = open_store(db)
    try:
        assert server.lease("w", f"{WANTED}r1", "r1", 60)  # a return being decided
        _given_back_once_waited_for(monkeypatch, server, f"{WANTED}r1", "r1")

        result = _judge(db)
    finally:
        server.close()

    assert result.exit_code == 0, result.output
    assert "a0: a return is being decided in 'w': waiting for it" in result.output
    assert result.output.count("a0: ") == 2  # the wait, then the pass
    assert _calls_at_return(db) == 0
