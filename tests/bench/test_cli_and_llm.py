"""`readmit bench` end to end, and the LLM reader over real loopback HTTP."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from readmit.bench.generators import returns
from readmit.bench.llm import ChatModel
from readmit.bench.methods import Static
from readmit.bench.runner import context, run
from readmit.cli import cli
from readmit.errors import ConfigError


def test_bench_writes_results_a_table_and_plots(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["bench", "--seeds", "2", "--team", "4,8", "--out", str(tmp_path)]
    )

    assert result.exit_code == 0, result.output
    for name in ("results.json", "results.md", "admission-plane.png", "accuracy-cost.png"):
        assert (tmp_path / name).stat().st_size > 0
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert {r["team_size"] for r in data["rows"]} == {4, 8}
    assert any("Overall not computed for stale" in n for n in data["notes"])
    assert "| Average | TRACE |" in (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "episodes" not in result.stderr  # no bar's label where stderr is no terminal


def test_bench_rejects_a_data_suite_without_a_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["bench", "--suite", "manbench", "--out", str(tmp_path)])

    assert result.exit_code == 2
    assert "manbench:PATH" in result.output


class _Chat(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Chat.requests.append(body)
        prompt = body["messages"][-1]["content"]
        # Answer with the last option the prompt lists: a fixed, checkable policy.
        answer = prompt.rsplit("Answer with exactly one of: ", 1)[-1].split(" | ")[-1]
        reply = {
            "choices": [{"message": {"role": "assistant", "content": f"It is {answer}."}}],
            "usage": {"total_tokens": 11},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def chat_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Chat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_llm_reader_speaks_chat_completions(chat_server: str) -> None:
    model = ChatModel.parse(f"tiny@{chat_server}", {"READMIT_BENCH_API_KEY": "k"})
    episode = returns.propagated(0, 4)

    [row] = run([episode], [Static()], reader=model.reader)

    request = _Chat.requests[-1]
    assert request["model"] == "tiny"
    assert request["temperature"] == 0
    assert "Context:" in request["messages"][-1]["content"]
    assert row.accuracy == float(episode.probes[0].options[-1] == episode.probes[0].answer)
    assert model.tokens_used == 11
    assert row.answer_tokens == 11  # what the reader spent on this row is reported with it
    assert context(episode).returner.agent == "A0"


def test_llm_specs_are_checked() -> None:
    with pytest.raises(ConfigError, match="MODEL@"):
        ChatModel.parse("no-url", {})


def test_an_llm_judge_scores_stale_probes(chat_server: str, tmp_path: Path) -> None:
    from readmit.bench.generators import stale as synthetic
    from readmit.bench.llm import judge_episode
    from readmit.bench.loaders import stale
    from readmit.bench.report import summarize

    model = ChatModel.parse(f"tiny@{chat_server}", {})
    episodes = stale.episodes(synthetic.write(tmp_path / "s.json", count=2))

    rows = run(
        episodes, [Static()], reader=model.reader, judge=lambda e, a: judge_episode(model, e, a)
    )

    assert all({"SR", "PR", "IPA"} <= r.extra.keys() for r in rows)
    assert all(r.accuracy is not None for r in rows)
    [block] = [s for s in summarize(rows) if s["condition"] != "Average"][:1]
    assert {"SR", "PR", "IPA", "LS", "answer_IIR"} <= block.keys()


@pytest.fixture(scope="module")
def bench_summary(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A real run: `returns` has answer scores and ties at 0 and 100; `stale` has neither."""
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path_factory.mktemp("bench")
    result = CliRunner().invoke(
        cli,
        [
            "bench",
            "--seeds",
            "2",
            "--suite",
            "returns",
            "--suite",
            "stale-synth",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    summary: list[dict[str, Any]] = json.loads((out / "results.json").read_text(encoding="utf-8"))[
        "summary"
    ]
    return summary


def _points(ax: Any) -> list[tuple[float, float]]:
    return [tuple(p) for c in ax.collections for p in c.get_offsets()]


def test_the_admission_plane_keeps_every_marker_and_label_inside_its_panel(
    bench_summary: list[dict[str, Any]],
) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from readmit.bench.plots import admission_figure

    fig = admission_figure(bench_summary)
    renderer = fig.canvas.get_renderer()
    methods = {e["method"] for e in bench_summary}

    assert [ax.get_title() for ax in fig.axes] == ["returns (team of 4)", "stale (team of 4)"]
    for ax in fig.axes:
        assert all(0 <= x <= 100 and 0 <= y <= 100 for x, y in _points(ax))
        labels = [t for t in ax.texts if t.get_gid() == "tie-label"]
        named = [m for t in labels for m in t.get_text().replace("\n", " ").split(", ")]
        assert sorted(named) == sorted(methods)  # every method once, ties in one label
        boxes = [Text.get_window_extent(t, renderer) for t in labels]
        assert all(ax.bbox.x0 <= b.x0 and b.x1 <= ax.bbox.x1 for b in boxes)
        assert all(ax.bbox.y0 <= b.y0 and b.y1 <= ax.bbox.y1 for b in boxes)
        assert not any(a.overlaps(b) for n, a in enumerate(boxes) for b in boxes[n + 1 :])
        assert "good" in [t.get_text() for t in ax.texts]  # the good corner is labeled
        [corner] = ax.patches
        assert corner.get_xy() == (90.0, 90.0)
    plt.close(fig)


def test_the_cost_plot_legend_names_only_methods_with_a_marker(
    bench_summary: list[dict[str, Any]],
) -> None:
    import matplotlib.pyplot as plt

    from readmit.bench.plots import cost_figure

    fig = cost_figure(bench_summary)
    assert fig is not None
    [legend] = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    drawn = {c.get_label() for ax in fig.axes for c in ax.collections if len(c.get_offsets())}

    assert [ax.get_title() for ax in fig.axes] == ["returns (team of 4)"]  # stale has no answers
    assert all(entries)
    assert set(entries) == drawn
    assert len(entries) == len(set(entries))
    for ax in fig.axes:
        assert all(0 <= y <= 100 for _, y in _points(ax))
    plt.close(fig)
