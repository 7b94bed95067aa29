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
