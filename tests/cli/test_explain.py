"""A withheld decision names what is missing, and every withheld memory has a reason.

Text (demo, replay, explain) and JSON agree; HTTP and MCP are tested in tests/service.
"""

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from builders import logged
from readmit.cli import cli
from readmit.cli.render import render_decision
from readmit.model import Agent
from readmit.reasons import MEMORY_REASON_HELP, MemoryReason
from readmit.report import agent_copy, upgrade_record
from readmit.store import SqlStore, audit, open_store

ROOT = Path(__file__).parent.parent.parent
MISSING_D_P = {
    "requirement": "d_p",
    "obligations": ["o_t"],
    "critical": True,
    "supported_by_excluded": [
        {"item": "px", "reason": "missing_receipt"},
        {"item": "p0", "reason": "implicitly_invalidated"},
    ],
}


def blocks(output: str) -> list[str]:
    """The text of each decision (from its "return of" line to the next)."""
    return ["return of" + b for b in output.split("return of")[1:]]


def test_the_json_record_names_what_is_missing_and_why_memories_are_withheld(
    runner: CliRunner, scenario_file: Path
) -> None:
    result = runner.invoke(cli, ["replay", str(scenario_file), "--json"])

    blocked, issued = json.loads(result.stdout)["decisions"]
    assert blocked["missing"] == [MISSING_D_P]
    assert issued["missing"] == []
    by_id = {o["obligation"]: o for o in blocked["obligation_coverage"]}
    assert (by_id["o_h"]["met"], by_id["o_t"]["met"]) == (True, False)
    assert by_id["o_t"]["missing"] == ["d_p"]
    assert blocked["withheld_memories"] == [
        {"id": "x_desk", "source": "h0", "reason": "view_withheld", "source_reason": "revoked"},
        {
            "id": "x_door",
            "source": "p0",
            "reason": "view_withheld",
            "source_reason": "implicitly_invalidated",
        },
        {"id": "x_quiet", "source": "c", "reason": "view_withheld"},
    ]
    assert [(m["id"], m["reason"]) for m in issued["withheld_memories"]] == [
        ("x_desk", "source_not_admitted"),
        ("x_door", "source_not_admitted"),
    ]


def test_the_text_names_what_is_missing_and_why_memories_are_withheld(
    runner: CliRunner,
) -> None:
    result = runner.invoke(cli, ["demo"])

    blocked, issued = blocks(result.output)
    assert "missing (why no view was issued):" in blocked
    assert re.search(
        r"d_p\s+critical\s+o_t\s+px is missing_receipt; p0 is implicitly_invalidated", blocked
    )
    assert re.search(r"x_quiet\s+from c\s+view_withheld: no view was issued", blocked)
    assert re.search(r"x_desk\s+from h0\s+view_withheld: .* \(h0 is revoked\)", blocked)
    assert not re.search(r"^\s+missing[ :]", issued, re.MULTILINE)
    assert re.search(r"x_door\s+from p0\s+source_not_admitted", issued)


def test_the_text_says_what_would_let_the_next_return_issue_a_view(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["demo"])

    blocked, issued = blocks(result.output)
    start = blocked.index("what would let the next return issue a view (then return again)")
    lines = blocked[start:].splitlines()
    assert lines[1].strip() == (
        'd_p: px "Someone said the pickup might move to 8:15." is missing_receipt; '
        "it was asserted with `unconfirmed: true` (hearsay, so no receipt): once it is "
        "confirmed, assert it again without `unconfirmed: true`"
    )
    assert lines[2].strip().startswith('d_p: p0 "Recommended pickup at 8:00 from Sunrise Hotel."')
    assert lines[3].strip() == "d_p: or a new item with a receipt whose supports lists d_p"
    assert (
        "any item asserted without `unconfirmed: true` whose `cites` were all recorded"
        in (lines[4])
    )
    assert "what would let the next return" not in issued


def test_an_item_whose_cited_evidence_is_missing_is_told_to_record_it(
    runner: CliRunner,
) -> None:
    """With a receipt, a missing_receipt exclusion names its recording event as evidence."""
    record = json.loads(runner.invoke(cli, ["demo", "--json"]).stdout)["decisions"][0]
    [px] = [e for e in record["excluded"] if e["item"] == "px"]
    px["evidence"] = ["e13"]  # a receipted item whose cited source was never recorded

    text = "\n".join(render_decision(record))

    assert 'px "Someone said the pickup might move to 8:15." is missing_receipt; it cites ' in text
    assert "evidence that was never recorded: record the evidence it cites" in text
    assert "assert it again without" not in text


def test_a_missing_label_nothing_excluded_supports_needs_only_a_new_item(
    runner: CliRunner,
) -> None:
    record = json.loads(runner.invoke(cli, ["demo", "--json"]).stdout)["decisions"][0]
    record["missing"][0]["supported_by_excluded"] = []

    text = "\n".join(render_decision(record))

    assert "    d_p: a new item with a receipt whose supports lists d_p" in text
    assert ": or a new item" not in text


def test_replay_into_a_store_that_has_the_workspace_says_to_use_another(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'trip.db'}"
    assert runner.invoke(cli, ["replay", str(scenario_file), "--db", db]).exit_code == 0

    again = runner.invoke(cli, ["replay", str(scenario_file), "--db", db])

    assert again.exit_code == 2
    [line] = [x for x in again.stderr.splitlines() if x.startswith("error [")]
    assert line.startswith("error [invalid_input]: agent 'A1' already exists in 'family-trip'")
    assert "replay into a new --db file, or give the scenario another workspace name" in line


def test_replay_with_a_db_names_each_decision_and_the_command_that_explains_it(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'trip.db'}"

    replayed = runner.invoke(cli, ["replay", str(scenario_file), "--db", db])

    commands = re.findall(r"stored as decision (\d+): (readmit explain .*)", replayed.stdout)
    assert [n for n, _ in commands] == ["1", "2"]
    for n, command in commands:
        assert command == f"readmit explain {n} --db {db} --workspace family-trip"
        explained = runner.invoke(cli, command.split()[1:])
        assert explained.exit_code == 0, explained.output
    assert "stored as decision" not in runner.invoke(cli, ["replay", str(scenario_file)]).output


def test_replay_json_with_a_db_names_the_commands_on_stderr(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'trip.db'}"

    replayed = runner.invoke(cli, ["replay", str(scenario_file), "--db", db, "--json"])

    assert json.loads(replayed.stdout)["decisions"]
    assert f"stored as decision 2: readmit explain 2 --db {db} --workspace family-trip" in (
        replayed.stderr
    )


def test_a_printed_explain_command_still_works_once_another_workspace_shares_the_store(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'two.db'}"
    first = runner.invoke(cli, ["replay", str(scenario_file), "--db", db])
    other = tmp_path / "other.json"
    scenario = json.loads(scenario_file.read_text())
    other.write_text(json.dumps({**scenario, "workspace": "other-trip"}))
    assert runner.invoke(cli, ["replay", str(other), "--db", db]).exit_code == 0

    command = re.findall(r"stored as decision 1: (readmit explain .*)", first.stdout)[0]
    explained = runner.invoke(cli, command.split()[1:])

    assert explained.exit_code == 0, explained.output  # not "in several workspaces"
    assert explained.output.startswith("return of A1")


def test_explain_shows_what_replay_showed(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'trip.db'}"
    replayed = runner.invoke(cli, ["replay", str(scenario_file), "--db", db])

    explained = runner.invoke(cli, ["explain", "1", "--db", db])

    assert explained.exit_code == 0, explained.output
    first = blocks(replayed.output)[0]
    wanted = [line for line in first.splitlines() if "d_p" in line or "from " in line]
    assert len(wanted) == 7  # the missing label, how to unblock it (3), the memories (3)
    for line in wanted:
        assert line in explained.output


def test_explain_to_a_page_it_cannot_write_prints_nothing_but_the_error(
    runner: CliRunner, scenario_file: Path, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'trip.db'}"
    runner.invoke(cli, ["replay", str(scenario_file), "--db", db])
    page = tmp_path / "no-such-dir" / "d1.html"

    explained = runner.invoke(cli, ["explain", "1", "--db", db, "--html", str(page)])

    assert explained.exit_code == 2
    assert f"--html: cannot write {page}: No such file or directory" in explained.output
    assert "return of" not in explained.output


def test_explain_reads_a_decision_logged_before_not_selected_was_split_out(
    runner: CliRunner, tmp_path: Path, travel: dict[str, Any]
) -> None:
    """An older readmit logged a full ``not_selected`` exclusion per item, and no judgment."""
    first = travel["events"][0]
    travel["events"] = [
        {**first, "item": {"id": f"spare{n}", "text": f"Spare note number {n}."}}
        for n in range(40)  # more than the view's 32 items
    ] + travel["events"]
    path = tmp_path / "spare.json"
    path.write_text(json.dumps(travel), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'trip.db'}"
    assert runner.invoke(cli, ["replay", str(path), "--db", db]).exit_code == 0
    store = open_store(db)
    [summary, *_] = store.decisions()
    record = store.decision(summary.id)
    left = record.pop("not_selected")
    record["excluded"] += [
        {"item": i, "reason": "not_selected", "stage": "selection", "evidence": []} for i in left
    ]
    for key in (  # and "hidden": the first readmit's record
        "hidden",
        "judgment",
        "missing",
        "obligation_coverage",
        "withheld_memories",
        "texts",
        "thresholds",
    ):
        del record[key]
    number = store.record_decision(
        summary.workspace, summary.agent, summary.at, summary.epoch, summary.outcome, record
    )
    store.close()

    explained = runner.invoke(
        cli, ["explain", str(number), "--db", db, "--html", str(tmp_path / "old.html")]
    )

    assert explained.exit_code == 0, explained.output
    assert left
    assert "not_selected" not in explained.output
    assert f"not selected (valid, but the view's budget did not need or fit them): {left[0]}" in (
        explained.output
    )
    # The policy it was decided under is not known: no threshold is guessed.
    assert "(needs" not in explained.output
    assert "critical 0.75 (this record, logged by an older readmit, does not say what " in (
        explained.output
    )
    assert "the policy's default is 1.00 for obligations and 1.00 for critical" in (
        explained.output
    )
    page = (tmp_path / "old.html").read_text(encoding="utf-8")
    assert "(needs" not in page
    assert "does not say what coverage its policy needed" in page


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ({"hello": 1}, "it has no 'workspace'"),
        (logged(excluded=5), "its 'excluded' is int"),
        (logged(excluded=[{"item": "h0"}]), "an exclusion is {'item': 'h0'}"),
    ],
)
def test_a_record_readmit_never_logged_is_refused_by_explain_with_what_is_wrong(
    runner: CliRunner, tmp_path: Path, record: dict[str, Any], said: str
) -> None:
    """Stored by a library caller before `record_decision` checked a record's shape."""
    db = f"sqlite:///{tmp_path / 'made-up.db'}"
    store = open_store(db)
    store.create_workspace("ws", [Agent(id="A1", principal="p", role="r")])
    at = datetime(2026, 5, 1, tzinfo=UTC)
    assert isinstance(store, SqlStore)
    with store.conn.transaction():
        text = audit.packed(json.dumps(record), "sqlite")
        audit.insert_decision(store.conn, "ws", "A1", at, 0, "issued", text)
    store.close()

    explained = runner.invoke(cli, ["explain", "1", "--db", db])

    assert explained.exit_code == 4
    assert explained.output == (
        f"error [store_error]: a logged decision record is not in the shape readmit logs: {said}\n"
    )


def test_every_memory_reason_is_documented() -> None:
    doc = (ROOT / "docs" / "reason-codes.md").read_text(encoding="utf-8")

    for reason in MemoryReason:
        assert f"`{reason.value}`" in doc
        assert MEMORY_REASON_HELP[reason]


def test_items_left_out_by_the_budget_are_listed_by_id_and_counted_in_the_text(
    runner: CliRunner, tmp_path: Path, travel: dict[str, Any]
) -> None:
    """``not_selected`` items are ids in the record, not one full exclusion entry each."""
    travel["policy"] = {**travel.get("policy", {}), "max_items": 5, "max_chars": 100_000}
    spare = [
        {
            "at": travel["events"][0]["at"],
            "author": travel["events"][0]["author"],
            "op": "assert",
            "item": {"id": f"spare{n}", "text": f"Spare note number {n}."},
        }
        for n in range(12)
    ]
    travel["events"] = spare + travel["events"]
    path = tmp_path / "spare.json"
    path.write_text(json.dumps(travel), encoding="utf-8")

    records = json.loads(runner.invoke(cli, ["replay", str(path), "--json"]).stdout)["decisions"]
    left = {i for r in records for i in r["not_selected"]}
    assert {f"spare{n}" for n in range(12)} <= left
    assert all(e["reason"] != "not_selected" for r in records for e in r["excluded"])

    text = runner.invoke(cli, ["replay", str(path)]).output
    shown = re.findall(
        r"not selected \(valid, but the view's budget of 5 items and 100000 characters did "
        r"not need or fit them\): (.*)",
        text,
    )
    assert shown
    assert any(re.search(r", … and \d+ more$", line) for line in shown)


def test_explain_shows_the_thresholds_of_the_policy_each_decision_was_made_under(
    runner: CliRunner, tmp_path: Path, travel: dict[str, Any]
) -> None:
    """Not the default policy's: the scenario's, and a return's own overrides."""
    travel["policy"] = {**travel.get("policy", {}), "gamma": 0.9, "rho": 0.8, "threshold": 0.7}
    second = [i for i, e in enumerate(travel["events"]) if e["op"] == "return"][1]
    travel["events"][second]["policy"] = {"gamma": 0.25}
    path = tmp_path / "strict.json"
    path.write_text(json.dumps(travel), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'trip.db'}"
    assert runner.invoke(cli, ["replay", str(path), "--db", db]).exit_code == 0

    first = runner.invoke(cli, ["explain", "1", "--db", db, "--html", str(tmp_path / "1.html")])
    then = runner.invoke(cli, ["explain", "2", "--db", db])

    assert first.exit_code == 0, first.output
    assert "coverage: obligations 0.50 (needs 0.90), critical 0.75 (needs 0.80)" in first.output
    assert "[confidence 0.90, threshold τ 0.70]" in first.output  # why p0 counted as stale
    page = (tmp_path / "1.html").read_text(encoding="utf-8")
    assert "Coverage: obligations 0.50 (needs 0.90), critical 0.75 (needs 0.80)" in page
    assert "confidence 0.90, threshold τ 0.70" in page
    assert "coverage: obligations 1.00 (needs 0.25), critical 1.00 (needs 0.80)" in then.output


def test_an_item_over_the_size_budget_names_the_limit(
    runner: CliRunner, travel: dict[str, Any], tmp_path: Path
) -> None:
    travel["policy"] = {**travel.get("policy", {}), "max_item_chars": 40}
    path = tmp_path / "short.json"
    path.write_text(json.dumps(travel), encoding="utf-8")

    result = runner.invoke(cli, ["replay", str(path), "--html", str(tmp_path / "pages")])

    assert result.exit_code == 0, result.output
    assert "over_item_budget" in result.output
    assert "[the limit is 40 characters (max_item_chars)]" in result.output
    page = (tmp_path / "pages" / "decision-1.html").read_text(encoding="utf-8")
    assert "(the limit is 40 characters (max_item_chars))" in page


def test_a_time_budget_is_recorded_and_shown_with_the_time_spent(
    runner: CliRunner, travel: dict[str, Any], tmp_path: Path
) -> None:
    timed = tmp_path / "timed.json"
    timed.write_text(json.dumps({**travel, "policy": {"max_judgment_seconds": 30}}), "utf-8")
    untimed = tmp_path / "untimed.json"
    untimed.write_text(json.dumps(travel), "utf-8")

    [record, *_] = json.loads(runner.invoke(cli, ["replay", str(timed), "--json"]).stdout)[
        "decisions"
    ]
    [plain, *_] = json.loads(runner.invoke(cli, ["replay", str(untimed), "--json"]).stdout)[
        "decisions"
    ]

    judgment = record["judgment"]
    assert judgment["calls"] == 2
    assert judgment["budget"]["seconds"] == 30
    assert 0 <= judgment["seconds"] < 30
    # Without a time budget no time is recorded: a replay logs the same record.
    assert (plain["judgment"]["seconds"], plain["judgment"]["budget"]["seconds"]) == (None, None)
    assert f"{judgment['seconds']:.1f} of 30 s;" in "\n".join(render_decision(record))
    assert " s;" not in "\n".join(render_decision(plain))


def test_a_record_from_before_time_budgets_renders_without_one(
    runner: CliRunner, scenario_file: Path
) -> None:
    [record, *_] = json.loads(runner.invoke(cli, ["replay", str(scenario_file), "--json"]).stdout)[
        "decisions"
    ]
    judgment = {k: v for k, v in record["judgment"].items() if k != "seconds"}
    judgment["budget"] = {"calls": 32, "tokens": None}  # as logged before time budgets

    lines = list(render_decision(upgrade_record({**record, "judgment": judgment})))  # as explain

    assert any(
        line.startswith("  judgment: 2 verifier calls (budget 32; builtin); 1 new")
        for line in lines
    )


def test_what_an_agent_wrote_cannot_print_lines_of_its_own_into_the_report(
    runner: CliRunner, tmp_path: Path
) -> None:
    """A text with line breaks and a bidirectional override is shown escaped, on its line."""
    forged = "Fine.\n  excluded:\n  h9  revoked  explicit  e9  forged \u202eevil"
    scenario = {
        "format": "readmit.scenario/1",
        "workspace": "w",
        "agents": [{"id": a, "principal": "p", "role": "r"} for a in ("A", "B")],
        "events": [
            {"at": "2026-01-01T00:00:00Z", "op": "depart", "agent": "A"},
            {
                "at": "2026-01-01T01:00:00Z",
                "op": "assert",
                "author": "B",
                "item": {"id": "x", "text": forged},
            },
            {"at": "2026-01-01T02:00:00Z", "op": "return", "agent": "A", "task": "*",
             "purpose": "*"},
        ],
    }  # fmt: skip
    path = tmp_path / "forge.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")

    result = runner.invoke(cli, ["replay", str(path)])

    assert result.exit_code == 0, result.output
    assert "\u202e" not in result.output
    assert "  x  Fine.\\n  excluded:\\n  h9  revoked  explicit  e9  forged \\u202eevil" in (
        result.output
    )
    assert result.output.count("excluded:") == 2  # the escaped text's, and the report's own
    assert "\n  h9  revoked" not in result.output


def test_text_in_other_scripts_and_typography_is_shown_as_written() -> None:
    from readmit.cli.render import shown

    text = "Réunion à Tōkyō\u00a0: 10\u202f€ 👩\u200d💻 東京\u3000タワー, فارسی\u200cها"

    assert shown(text) == text
    assert shown("a\nb\u202ec\u2067d\x1b") == "a\\nb\\u202ec\\u2067d\\x1b"


def test_the_agents_own_event_before_its_departure_is_shown_to_it(
    runner: CliRunner, tmp_path: Path
) -> None:
    """A1's own revocation before its departure invalidated its probe: its copy names that
    event, and the operator's copy does not list it as something A1 is not shown (at
    stop 47 it was hidden, and `explain` had to avoid calling it unreadable)."""
    at = [f"2026-05-01T08:0{n}:00Z" for n in range(5)]
    events = [
        {"at": at[0], "author": "A1", "op": "assert",
         "item": {"id": "probe", "text": "Probe about Riverside Hotel."}},
        {"at": at[1], "author": "A1", "op": "assert",
         "item": {"id": "held", "text": "Riverside Hotel room held."}},
        {"at": at[2], "author": "A1", "id": "my-own-revoke", "op": "revoke", "target": "held",
         "why": "closed"},
        {"at": at[3], "op": "depart", "agent": "A1"},
        {"at": at[4], "op": "return", "agent": "A1", "task": "trip", "purpose": "plan"},
    ]  # fmt: skip
    made = {
        "format": "readmit.scenario/1",
        "workspace": "trip",
        "agents": [{"id": "A1", "principal": "family", "role": "r"}],
        "events": events,
    }
    path, db = tmp_path / "own.json", f"sqlite:///{tmp_path / 'own.db'}"
    path.write_text(json.dumps(made), encoding="utf-8")
    assert runner.invoke(cli, ["replay", str(path), "--db", db]).exit_code == 0

    explained = runner.invoke(cli, ["explain", "1", "--db", db])

    assert explained.exit_code == 0
    assert "my-own-revoke" in explained.output
    assert not [x for x in explained.output.splitlines() if "is not shown" in x]
    store = open_store(db)
    record = store.decision(1, "trip")
    store.close()
    [probe] = [e for e in agent_copy(record)["excluded"] if e["item"] == "probe"]
    assert probe["evidence"] == ["my-own-revoke"]
