"""The command line, in-process with click's runner and once as a real subprocess."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from readmit.cli import cli
from readmit.cli.verifiers import _clipped
from servicekit import free_port


def test_demo_prints_both_returns_offline(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["demo"])

    assert result.exit_code == 0, result.output
    assert "BLOCKED" in result.output
    assert "ISSUED" in result.output
    assert "obligations 0.50 (needs 1.00), critical 0.75 (needs 1.00)" in result.output
    assert "implicitly_invalidated" in result.output
    assert "private memories readmitted: x_quiet" in result.output
    assert "judgment: 2 verifier calls (budget 32; builtin); 1 new and 0 standing" in result.output


def test_replay_json_matches_the_spec_shape(runner: CliRunner, scenario_file: Path) -> None:
    result = runner.invoke(cli, ["replay", str(scenario_file), "--json"])

    assert result.exit_code == 0, result.output
    decisions = json.loads(result.stdout)["decisions"]
    assert [d["outcome"] for d in decisions] == ["blocked", "issued"]
    for d in decisions:
        assert {
            "agent",
            "at",
            "outcome",
            "coverage",
            "items",
            "excluded",
            "readmitted",
            "withheld",
            "view",
        } <= d.keys()
        assert all({"item", "reason", "stage", "evidence"} <= e.keys() for e in d["excluded"])


def test_a_replayed_view_verifies_and_a_tampered_one_does_not(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    decisions = json.loads(runner.invoke(cli, ["replay", str(scenario_file), "--json"]).stdout)
    good = tmp_path / "view.json"
    good.write_text(json.dumps(decisions["decisions"][1]), encoding="utf-8")
    view = decisions["decisions"][1]["view"]
    view["items"][4]["text"] = "The train now departs at 10:30."
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(view), encoding="utf-8")

    ok = runner.invoke(cli, ["verify", str(good), "--at", "2026-05-03T14:10:00Z"])
    expired = runner.invoke(cli, ["verify", str(good)])
    tampered = runner.invoke(cli, ["verify", str(bad), "--at", "2026-05-03T14:10:00Z"])

    assert ok.exit_code == 0
    assert ok.output.startswith("ok: view")
    assert expired.exit_code == 3
    assert "not valid at" in expired.output
    assert "give --at TIME" in expired.output
    assert tampered.exit_code == 3
    assert "view_rejected" in tampered.output


def test_verify_needs_the_signing_key(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("READMIT_SIGNING_KEY")
    path = tmp_path / "v.json"
    path.write_text("{}", encoding="utf-8")

    result = runner.invoke(cli, ["verify", str(path)])

    assert result.exit_code == 2
    assert "READMIT_SIGNING_KEY" in result.output


def test_audit_and_explain_read_the_stored_decisions(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/audit.db"
    runner.invoke(cli, ["replay", str(scenario_file), "--db", db])

    audit = runner.invoke(cli, ["audit", "--db", db])
    explain = runner.invoke(cli, ["explain", "2", "--db", db])
    missing = runner.invoke(cli, ["explain", "99", "--db", db])

    assert audit.exit_code == 0
    assert [line.split()[-1] for line in audit.output.splitlines()] == ["blocked", "issued"]
    assert [line.split()[4] for line in audit.output.splitlines()] == ["#1", "#2"]
    assert all(line.split()[1].endswith("Z") for line in audit.output.splitlines())  # as explain
    assert explain.exit_code == 0
    assert "p0    implicitly_invalidated" in explain.output
    assert "returned to task 'trip', purpose 'itinerary'" in explain.output
    assert "Sunrise" in explain.output
    assert "n1" in explain.output
    assert missing.exit_code == 4
    assert "error [not_found]: no decision 99" in missing.output


def test_an_unreachable_dependency_scan_withholds_what_it_could_not_scan(
    runner: CliRunner, scenario_file: Path
) -> None:
    spec = f"openai-compat:m@http://127.0.0.1:{free_port()}/v1"

    result = runner.invoke(cli, ["replay", str(scenario_file), "--json", "--dependency-scan", spec])

    assert result.exit_code == 0, result.output
    decisions = json.loads(result.output[result.output.index("{") :])["decisions"]
    details = [e.get("detail", "") for d in decisions for e in d["excluded"]]
    assert any("dependency scan failed" in detail for detail in details)


def test_an_unknown_dependency_scan_is_a_config_error(
    runner: CliRunner, scenario_file: Path
) -> None:
    result = runner.invoke(cli, ["replay", str(scenario_file), "--dependency-scan", "magic:x"])

    assert result.exit_code == 2
    assert "error [config_error]: unknown dependency scan 'magic:x'" in result.output


def two_trips(runner: CliRunner, travel: dict[str, Any], tmp_path: Path) -> str:
    """A store holding the travel case twice, as workspaces trip-a and trip-b."""
    db = f"sqlite:///{tmp_path}/two.db"
    for workspace in ("trip-a", "trip-b"):
        path = tmp_path / f"{workspace}.json"
        path.write_text(json.dumps({**travel, "workspace": workspace}))
        runner.invoke(cli, ["replay", str(path), "--db", db])
    return db


def test_explain_picks_a_decision_by_its_workspace_when_ids_repeat(
    runner: CliRunner, travel: dict[str, Any], tmp_path: Path
) -> None:
    db = two_trips(runner, travel, tmp_path)

    ambiguous = runner.invoke(cli, ["explain", "2", "--db", db])
    chosen = runner.invoke(cli, ["explain", "2", "--db", db, "--workspace", "trip-b"])

    assert ambiguous.exit_code != 0
    assert "workspace" in ambiguous.output
    assert chosen.exit_code == 0, chosen.output
    assert "p0    implicitly_invalidated" in chosen.output


def test_explain_counts_an_agents_own_decisions_as_the_http_api_does(
    runner: CliRunner, travel: dict[str, Any], tmp_path: Path
) -> None:
    """A3 departs and returns first: A1's second decision is the audit log's third."""
    db = f"sqlite:///{tmp_path}/own.db"
    events = list(travel["events"])
    events[9:9] = [
        {"at": "2026-05-01T09:30:00Z", "op": "depart", "agent": "A3"},
        {"at": "2026-05-01T09:40:00Z", "op": "return", "agent": "A3", "task": "trip",
         "purpose": "budget"},
    ]  # fmt: skip
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**travel, "events": events}))
    runner.invoke(cli, ["replay", str(path), "--db", db])

    own = runner.invoke(cli, ["explain", "2", "--agent", "A1", "--db", db])
    logged = runner.invoke(cli, ["explain", "3", "--db", db])
    past = runner.invoke(cli, ["explain", "3", "--agent", "A1", "--db", db])

    assert own.exit_code == 0, own.output
    assert own.output == logged.output
    assert "return of A1 at 2026-05-03T14:00:00Z" in own.output
    assert past.exit_code != 0
    assert "agent 'A1' has 2 decision(s), not 3" in past.output
    typo = runner.invoke(cli, ["explain", "1", "--agent", "A11", "--db", db])
    said = f"agent 'A11' has no decision (did you mean 'A1'? see 'readmit audit --db {db}')"
    assert said in typo.output
    missing = runner.invoke(cli, ["explain", "9", "--db", db])
    assert f"no decision 9 in the audit log (see 'readmit audit --db {db}')" in missing.output
    env = runner.invoke(cli, ["explain", "9"], env={"READMIT_DB": db})
    assert "no decision 9 in the audit log (see 'readmit audit')" in env.output


def test_explain_of_an_agents_decision_asks_for_the_workspace_when_it_has_several(
    runner: CliRunner, travel: dict[str, Any], tmp_path: Path
) -> None:
    db = two_trips(runner, travel, tmp_path)

    both = runner.invoke(cli, ["explain", "1", "--agent", "A1", "--db", db])
    one = runner.invoke(cli, ["explain", "1", "--agent", "A1", "--db", db, "--workspace", "trip-b"])

    assert both.exit_code != 0
    assert "workspaces trip-a, trip-b: name one with --workspace" in both.output
    assert one.exit_code == 0, one.output


def test_explain_of_a_number_several_workspaces_hold_asks_for_one(
    runner: CliRunner, travel: dict[str, Any], tmp_path: Path
) -> None:
    db = two_trips(runner, travel, tmp_path)

    both = runner.invoke(cli, ["explain", "1", "--db", db])

    assert both.exit_code == 2  # bad input, not a store error
    assert "(trip-a, trip-b): name its workspace with --workspace" in both.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        (
            json.dumps(
                {
                    "format": "readmit.scenario/1",
                    "workspace": "w",
                    "agents": [{"id": "A1", "principal": "p", "role": "r"}],
                    "events": [{"op": "teleport", "at": "2026-01-01T00:00:00Z"}],
                }
            ),
            "events[0]: unknown op 'teleport'",  # its position in the file
        ),
        (
            json.dumps(
                {
                    "format": "readmit.scenario/1",
                    "workspace": "w",
                    "agents": [{"id": "A1", "principal": "p", "role": "r"}],
                    "events": [
                        {
                            "op": "assert",
                            "at": "2026-01-01T00:00:00Z",
                            "author": "A1",
                            "item": {"id": "x", "text": "A fact.", "support": ["d_x"]},
                        }
                    ],
                }
            ),
            "events[0]: item.support: unknown field (did you mean 'supports'?)",
        ),
    ],
)
def test_replay_rejects_bad_files_without_a_traceback(
    runner: CliRunner, tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")

    result = runner.invoke(cli, ["replay", str(path)])

    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_an_unknown_verifier_lists_the_installed_ones(
    runner: CliRunner, scenario_file: Path
) -> None:
    result = runner.invoke(cli, ["replay", str(scenario_file), "--verifier", "oracle"])

    assert result.exit_code == 2
    assert "unknown verifier 'oracle' (installed: builtin" in result.output


def test_a_misspelled_verifier_is_refused_with_the_name_meant_before_the_demo_story(
    runner: CliRunner,
) -> None:
    result = runner.invoke(cli, ["demo", "--verifier", "buitin"])

    assert result.exit_code == 2
    assert result.output.startswith(
        "error [config_error]: unknown verifier 'buitin' (did you mean 'builtin'? installed: "
    )


def test_replay_with_the_packaged_embedder_decides_as_the_builtin_verifier_does(
    runner: CliRunner, scenario_file: Path
) -> None:
    plain = runner.invoke(cli, ["replay", str(scenario_file), "--json"])
    embedded = runner.invoke(
        cli, ["replay", str(scenario_file), "--json", "--embeddings", "wordllama"]
    )

    assert embedded.exit_code == 0, embedded.output
    outcomes = [
        [(d["outcome"], d["items"], d["excluded"]) for d in json.loads(r.stdout)["decisions"]]
        for r in (plain, embedded)
    ]
    assert outcomes[0] == outcomes[1]


def test_verifiers_list_names_the_installed_verifiers(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["verifiers", "list"])

    assert result.exit_code == 0, result.output
    assert {"builtin", "openai-compat", "gguf"} <= set(result.output.split())


def test_verifiers_check_scores_the_builtin_verifier_and_an_embedder(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["verifiers", "check", "builtin", "--embeddings", "wordllama"])

    assert result.exit_code == 0, result.output
    assert "builtin: 6/8 right, 8 answered" in result.output
    assert "MISS premise change" in result.output
    assert "other premise changes need an LLM verifier\n" in result.output  # not cut mid-word
    assert ":l2_supercat_256: 4/4 nearest right among 7 items" in result.output


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("short reason", "short reason"),
        ("word " * 20, "word " * 13 + "word…"),
        ("x" * 100, "x" * 71 + "…"),  # one long token: a URL, JSON
        ("予約" * 50, "予約" * 35 + "予…"),
    ],
)
def test_a_long_reason_is_cut_at_a_word_where_it_has_one(text: str, shown: str) -> None:
    """Cut mid-word before; then a text without spaces showed as only "…" (a review)."""
    assert _clipped(text) == shown


def test_verifiers_check_exits_1_when_the_verifier_cannot_answer(runner: CliRunner) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there

    result = runner.invoke(cli, ["verifiers", "check", f"openai-compat:m@{url}"])
    embedder = runner.invoke(
        cli, ["verifiers", "check", "builtin", "--embeddings", f"openai-compat:m@{url}"]
    )

    assert result.exit_code == 1
    assert result.output.count("unavailable") == 8
    assert ": 0/8 right, 0 answered" in result.output
    assert embedder.exit_code == 1
    assert f"openai-compat:m@{url}: unavailable" in embedder.output


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("word2vec:x", "unknown embedder 'word2vec:x'"),
        ("wordllama:300", "the dimension must be one of (64, 128, 256)"),
        ("openai-compat:nomic", "write MODEL@http(s)://HOST/v1"),
        ("openai-compat:m@http://[::1/v1", "the URL is malformed (Invalid port"),
        ("openai-compat:m@http://exa mple.com/v1", "the URL is malformed"),
        ("openai-compat:m@http://h:99999/v1", "the URL is malformed"),
        ("gguf:/no/such/model.gguf", "no such model file"),
    ],
)
def test_a_bad_embedder_spec_is_a_clear_error(
    runner: CliRunner, scenario_file: Path, spec: str, message: str
) -> None:
    result = runner.invoke(cli, ["replay", str(scenario_file), "--embeddings", spec])

    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["verifiers", "check", "openai-compat:m@http://[::1/v1"],
        ["demo", "--verifier", "openai-compat:m@http://[::1/v1"],
        ["demo", "--verifier", "chain:builtin,openai-compat:m@http://[::1/v1"],
    ],
)
def test_a_malformed_model_url_is_a_config_error_before_anything_runs(
    runner: CliRunner, args: list[str]
) -> None:
    """It was an internal error in some commands, and a demo whose every challenged item
    was withheld as verifier_unavailable in others (a newcomer's finding)."""
    result = runner.invoke(cli, args)

    assert result.exit_code == 2
    assert "error [config_error]" in result.output
    assert "the URL is malformed" in result.output


def test_python_dash_m_runs_the_demo_in_a_real_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "readmit", "demo", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    decisions = json.loads(result.stdout)["decisions"]
    assert decisions[1]["items"] == ["o_h", "f_h", "o_t", "f_t", "t1", "h1", "p1", "c"]


def test_verifiers_check_refuses_a_bad_embedder_name_before_checking_anything(
    runner: CliRunner,
) -> None:
    result = runner.invoke(cli, ["verifiers", "check", "builtin", "--embeddings", "nope"])

    assert result.exit_code == 2
    assert "unknown embedder 'nope'" in result.output
    assert "right" not in result.output  # no verifier pair was judged first
