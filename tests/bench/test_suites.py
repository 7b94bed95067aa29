"""The offline suites reproduce the expected shape; loaders read the shipped samples."""

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean

import pytest

from readmit.bench.generators import drift, returns
from readmit.bench.generators import stale as synthetic
from readmit.bench.loaders import manbench, memora, stale
from readmit.bench.methods import methods
from readmit.bench.runner import Row, context, run
from readmit.model import Agent
from readmit.plugins import make_verifier
from readmit.store.sqlite import SQLiteStore

DATA = Path(__file__).parents[1] / "data"  # unmodified samples, with their licences
ALL = methods(None, make_verifier("builtin"))


def means(rows: list[Row]) -> dict[tuple[str, str], dict[str, float]]:
    blocks: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        blocks[(row.condition, row.method)].append(row)
    return {
        k: {
            "VIA": fmean(r.via for r in b),
            "IIR": fmean(r.iir for r in b),
            "acc": fmean(r.accuracy or 0.0 for r in b),
        }
        for k, b in blocks.items()
    }


def test_full_reversal_puts_stale_memory_below_no_memory_and_trace_near_one() -> None:
    m = means(run(drift.episodes(seeds=10), ALL))

    no_memory = m[("full_reversal", "Reset")]["acc"]
    assert m[("full_reversal", "Static")]["acc"] < no_memory
    assert m[("full_reversal", "MemStrata")]["acc"] < no_memory
    assert m[("full_reversal", "TRACE")]["acc"] >= 0.95
    assert m[("full_reversal", "TRACE w/o I")]["acc"] < m[("full_reversal", "TRACE")]["acc"]
    assert m[("stable", "TRACE")] == {"VIA": 1.0, "IIR": 1.0, "acc": 1.0}


def test_only_trace_is_high_on_both_axes_of_the_balanced_pair() -> None:
    m = means(run(returns.episodes(seeds=4, teams=(4, 16)), ALL))

    def pair(method: str, axis: str) -> float:
        return (m[("explicit", method)][axis] + m[("propagated", method)][axis]) / 2

    assert (pair("Reset", "VIA"), pair("Reset", "IIR")) == (0.0, 1.0)
    assert (pair("Restore", "VIA"), pair("Restore", "IIR")) == (0.5, 0.5)
    assert (pair("Static", "VIA"), pair("Static", "IIR")) == (0.5, 0.5)
    assert (pair("TRACE", "VIA"), pair("TRACE", "IIR")) == (1.0, 1.0)
    assert m[("implicit", "TRACE")]["IIR"] == 1.0
    assert m[("implicit", "TRACE w/o I")]["IIR"] == 0.0
    assert m[("implicit", "TRACE w/o SBPR")]["IIR"] == 0.0
    assert m[("crowded", "TRACE")]["VIA"] == 1.0
    assert m[("crowded", "TRACE w/o OAS")]["VIA"] == 0.0


def test_every_method_sees_the_same_checkpoint() -> None:
    episode = returns.implicit(0, 4)

    first, second = context(episode), context(episode)

    assert first.departure.item_ids == second.departure.item_ids
    assert [r.event.id for r in first.delta] == [r.event.id for r in second.delta]


def test_each_episode_is_replayed_once_for_every_method(monkeypatch: pytest.MonkeyPatch) -> None:
    episodes = [returns.implicit(0, 4), returns.implicit(1, 4)]
    created: list[str] = []
    create = SQLiteStore.create_workspace

    def counted(store: SQLiteStore, workspace: str, agents: Sequence[Agent]) -> None:
        created.append(workspace)
        create(store, workspace, agents)

    monkeypatch.setattr(SQLiteStore, "create_workspace", counted)  # the real one, counted

    rows = run(episodes, ALL)

    assert len(rows) == len(episodes) * len(ALL)
    assert len(created) == len(episodes)


def test_the_stale_shaped_generator_round_trips_through_the_loader(tmp_path: Path) -> None:
    path = synthetic.write(tmp_path / "stale.json", count=6)

    episodes = stale.episodes(path)

    assert len(episodes) == 6
    assert all(e.valid and e.invalid for e in episodes)
    assert all("M_old" in e.judge for e in episodes)
    rows = run(episodes, methods(["Static", "TRACE"], make_verifier("builtin")))
    assert all(r.accuracy is None for r in rows)  # answer-level needs an LLM


def test_stale_records_are_validated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"uid": "x"}]', encoding="utf-8")

    records, [skipped] = stale.read_records(bad)  # skipped, not fatal to the run

    assert records == []
    assert str(skipped).startswith(f"{bad} record 0 (uid x): M_old: Field required")


def test_manbench_sample_episodes() -> None:
    episodes = manbench.episodes(DATA / "manbench-sample" / "bbh_all_small", per_task=4)

    assert len(episodes) == 16
    assert {e.condition for e in episodes} == {"old_valid", "old_stale"}
    m = means(run(episodes, methods(["Restore", "TRACE"], make_verifier("builtin"))))
    assert m[("old_stale", "TRACE")]["IIR"] == 1.0  # the superseded question drops the answer
    assert m[("old_valid", "Restore")] == {"VIA": 1.0, "IIR": 1.0, "acc": 1.0}


def test_memora_sample_episodes_keep_evaluator_fields_from_agents() -> None:
    persona = DATA / "memora-sample" / "weekly" / "software_engineer"

    episodes = memora.episodes(persona)

    assert {e.condition for e in episodes} == {"25%", "50%", "75%"}
    texts = " ".join(str(ev) for e in episodes for ev in e.scenario["events"])
    assert "share_memory" not in texts
    assert "memory_evidence" not in texts
    rows = run(episodes[:3], methods(["Static"], make_verifier("builtin")))
    assert all("FAMA" in r.extra for r in rows)


class _Broken:
    name = "Broken"

    def view(self, ctx: object, query: str, policy: object) -> object:
        raise RuntimeError("backend down")


def test_a_failing_method_stays_in_the_denominator_with_zero_scores() -> None:
    [row] = run([returns.explicit(0, 4)], [_Broken()])  # type: ignore[list-item]

    assert (row.outcome, row.via, row.iir, row.accuracy) == ("failed", 0.0, 0.0, 0.0)
    assert row.error == "RuntimeError: backend down"
