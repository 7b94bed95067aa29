"""The portability study: TRACE on the same episodes through readmit, LangGraph and Mem0.

Offline: LangGraph's ``InMemoryStore``, a Mem0 bank on in-memory Qdrant with a local
embedder and ``infer=False``, the builtin verifier.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from readmit.bench.backends.study import Played, play, run
from readmit.bench.episode import Episode
from readmit.bench.generators import returns
from readmit.bench.history import History
from readmit.bench.loaders import memora
from readmit.bench.methods import methods
from readmit.bench.runner import run as run_methods
from readmit.cli import cli
from readmit.errors import ConfigError
from readmit.plugins import make_verifier

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")

DATA = Path(__file__).parents[1] / "data"
BACKENDS = ("readmit", "langgraph", "mem0")


def scores(played: list[Played]) -> dict[tuple[str, str], tuple[float, float]]:
    return {(p.episode, p.backend): (p.via, p.iir) for p in played}


def test_returns_episodes_score_the_same_through_every_backend_as_through_readmit() -> None:
    episodes = [
        e for c in returns.CONDITIONS for e in returns.episodes(1, (4,)) if e.condition == c
    ]
    verifier = make_verifier("builtin")

    played = run(episodes, BACKENDS, verifier)

    assert all(p.error is None and not p.gaps for p in played), played
    got = scores(played)
    for e in episodes:
        assert got[(e.id, "langgraph")] == got[(e.id, "readmit")], e.id
        assert got[(e.id, "mem0")] == got[(e.id, "readmit")], e.id
    # readmit's own store is the baseline the methods bench reports for TRACE
    rows = run_methods(episodes, methods(["TRACE"], verifier))
    assert {r.episode: (r.via, r.iir) for r in rows} == {
        e.id: got[(e.id, "readmit")] for e in episodes
    }
    assert {p.condition for p in played if (p.via, p.iir) == (1.0, 1.0)} == set(returns.CONDITIONS)


def test_memora_sample_scores_the_same_through_every_backend() -> None:
    persona = DATA / "memora-sample" / "weekly" / "software_engineer"
    episodes = memora.episodes(persona)[:2]

    played = run(episodes, BACKENDS, make_verifier("builtin"))

    assert all(p.error is None for p in played), played
    got = scores(played)
    for e in episodes:
        assert got[(e.id, "langgraph")] == got[(e.id, "readmit")], e.id
        assert got[(e.id, "mem0")] == got[(e.id, "readmit")], e.id


def path_collision() -> Episode:
    """T1 writes under the key that names A0's unkeyed fact's path, then revokes that fact.

    The LangGraph path of an unkeyed item is its id, so the new item overwrites the
    old one there: the revoke has no value left to delete.
    """
    h = History("gap", [("A0", "acme", "planner"), ("T1", "acme", "member")])
    h.item("A0", "old", "The launch date is 14 May.")
    h.add("depart", agent="A0")
    h.item("T1", "new", "The launch date is 21 May.", key="old")
    h.add("revoke", author="T1", target="old", why="replaced")
    return Episode(
        id="gap",
        suite="gap",
        condition="gap",
        scenario=h.scenario(),
        returner="A0",
        valid=frozenset({"new"}),
        invalid=frozenset({"old"}),
    )


@pytest.mark.parametrize("backend", ["langgraph", "mem0"])
def test_an_event_a_backend_cannot_express_is_named_as_a_gap(backend: str) -> None:
    episode = path_collision()

    baseline = play(episode, "readmit", make_verifier("builtin"))
    played = play(episode, backend, make_verifier("builtin"))

    assert baseline.gaps == []
    expected = ["revoke of old: its path holds a later value"] if backend == "langgraph" else []
    assert played.gaps == expected
    assert (played.via, played.iir) == (baseline.via, baseline.iir) == (1.0, 1.0)


def test_an_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown backend 'chroma'"):
        run(returns.episodes(1, (4,))[:1], ["chroma"], None)


def test_bench_backend_writes_the_backends_side_by_side(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["bench", "--suite", "returns", "--seeds", "1", "--sample", "1", "--out", str(out)]
    backends = [a for b in BACKENDS for a in ("--backend", b)]

    result = CliRunner().invoke(cli, [*args, *backends])

    assert result.exit_code == 0, result.output
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert document["meta"]["backends"] == list(BACKENDS)
    assert document["agreement"] == dict.fromkeys(BACKENDS, 1.0)
    assert [c["backend"] for c in document["costs"]] == list(BACKENDS)
    assert all(c["failed"] == 0 for c in document["costs"])
    table = (out / "results.md").read_text(encoding="utf-8")
    assert "| langgraph VIA | langgraph IIR | mem0 VIA | mem0 IIR |" in table


def test_bench_through_one_backend_without_the_baseline_agrees_with_nothing(
    tmp_path: Path,
) -> None:
    """``--backend langgraph`` alone ended with ``internal: KeyError`` (no readmit baseline)."""
    out = tmp_path / "out"
    args = ["bench", "--suite", "returns", "--seeds", "1", "--sample", "1", "--out", str(out)]

    result = CliRunner().invoke(cli, [*args, "--backend", "langgraph"])

    assert result.exit_code == 0, result.output
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert document["agreement"] == {"langgraph": None}
    assert document["meta"]["skipped_rows"] == []


def test_bench_refuses_an_unknown_backend(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["bench", "--backend", "chroma", "--out", str(tmp_path)])

    assert result.exit_code == 2
    assert "chroma" in result.output
