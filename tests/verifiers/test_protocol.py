"""The LLM clients' protocol, in milliseconds: the verifier's format fallback, refusals,
malformed answers and counters; the embedder's batches; the dependency scan's numbers;
the bench reader's counters. A scripted server (httpx's MockTransport) answers."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from readmit.admission.invalidation.cache import CachedVerifier
from readmit.admission.invalidation.implicit import Later
from readmit.bench.llm import ChatModel
from readmit.errors import VerifierUnavailable
from readmit.store import open_store
from readmit.verifiers.answers import token_confidence
from readmit.verifiers.embedders import OpenAICompatEmbedder
from readmit.verifiers.llm_scan import OpenAICompatScan
from readmit.verifiers.openai_compat import OpenAICompatVerifier
from readmit.verifiers.probes import PROBES
from verifiers.scripted import Scripted, completion, status

USAGE = {"prompt_tokens": 300, "completion_tokens": 1, "total_tokens": 301}
PAIR = PROBES[0].pair


def verifier(server: Scripted, **kw: Any) -> OpenAICompatVerifier:
    return OpenAICompatVerifier(
        model="m", base_url="http://model.test/v1", http=server.http(), **kw
    )


def mode_of(body: dict[str, Any]) -> str:
    if "response_format" in body:
        return str(body["response_format"]["type"])
    return "token" if body["max_tokens"] == 1 else "plain"


def test_a_one_token_verdict_reads_p_yes_and_counts_one_call() -> None:
    server = Scripted([completion("Yes", top=[("Yes", 0.6), ("No", 0.2)], usage=USAGE)])
    v = verifier(server)

    [verdict] = v.judge([PAIR])

    assert verdict.invalidates
    assert verdict.confidence == pytest.approx(0.75)
    assert verdict.reason == "P(yes) = 0.75"
    assert (v.calls, v.tokens_used, v.generated_tokens) == (1, 301, 1)
    [body] = server.bodies
    assert (body["max_tokens"], body["logprobs"], body["temperature"]) == (1, True, 0)
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][-1]["content"].startswith("EARLIER: ")


def test_the_cut_off_moves_the_verdict_not_the_probability() -> None:
    answer = completion("No", top=[("No", 0.7), ("Yes", 0.3)])

    low = verifier(Scripted([answer]), decide_at=0.25).judge([PAIR])[0]
    high = verifier(Scripted([answer])).judge([PAIR])[0]

    assert low.invalidates
    assert low.confidence == pytest.approx(0.3)
    assert not high.invalidates
    assert high.confidence == pytest.approx(0.7)


def test_a_reason_is_asked_only_for_an_invalidation() -> None:
    server = Scripted(
        [
            completion("yes", top=[("yes", 0.9), ("no", 0.1)]),
            completion("The hotel booking was cancelled."),
            completion("no", top=[("no", 0.9), ("yes", 0.1)]),
        ]
    )
    v = verifier(server, explain=True)

    first, second = v.judge([PAIR, PROBES[1].pair])

    assert first.reason == "The hotel booking was cancelled."
    assert second.reason == "P(yes) = 0.10"
    assert v.calls == 3
    follow_up = server.bodies[1]["messages"]
    assert follow_up[-2] == {"role": "assistant", "content": "yes"}


def test_formats_fall_back_token_json_schema_json_object_plain() -> None:
    # No log-probabilities for the one-token ask; the structured formats refused (400, 500).
    answers = {
        "token": completion("yes"),
        "json_schema": status(400),
        "json_object": status(500),
        "plain": completion('{"verdict": "invalidates", "reason": "gone", "confidence": 0.9}'),
    }
    server = Scripted([lambda body: answers[mode_of(body)]])
    v = verifier(server)

    [verdict] = v.judge([PAIR])

    assert [mode_of(b) for b in server.bodies] == ["token", "json_schema", "json_object", "plain"]
    assert v.mode == "plain"
    assert (verdict.invalidates, verdict.confidence, verdict.reason) == (True, 0.9, "gone")
    assert v.calls == 4  # a refusal is one answer, never retried
    assert server.bodies[1]["response_format"]["json_schema"]["strict"] is True
    [v.judge([PAIR])]
    assert [mode_of(b) for b in server.bodies][4:] == ["plain"]  # the verifier remembers


def test_a_structured_answer_takes_its_confidence_from_the_verdict_token() -> None:
    content = '{"verdict": "compatible", "reason": "a detail"}'
    server = Scripted([completion(content, top=[("compatible", 0.8), ("invalidates", 0.2)])])
    v = verifier(server, mode="json_schema")

    [verdict] = v.judge([PAIR])

    assert not verdict.invalidates
    assert verdict.confidence == pytest.approx(0.8)


def test_a_structured_answer_without_any_confidence_gets_one_half() -> None:
    server = Scripted([completion('{"verdict": "invalidates", "reason": "r"}')])

    [verdict] = verifier(server, mode="json_object").judge([PAIR])

    assert (verdict.invalidates, verdict.confidence) == (True, 0.5)


def test_judging_from_several_threads_steps_down_each_format_once() -> None:
    answers = {
        "json_schema": status(400),
        "json_object": status(422),
        "plain": completion("compatible: a detail", usage=USAGE),
    }
    server = Scripted([lambda body: answers[mode_of(body)]])
    v = verifier(server, mode="json_schema")
    pairs = [p.pair for p in PROBES[:2]]

    with ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = [x for batch in pool.map(v.judge, [pairs] * 4) for x in batch]

    assert len(verdicts) == 8
    assert v.mode == "plain"
    plain = sum(mode_of(b) == "plain" for b in server.bodies)
    assert plain == 8
    assert 8 + 2 <= v.calls <= 8 + 4 * 2
    assert v.calls == len(server.requests)
    assert v.tokens_used == 8 * 301


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (completion("I", top=[("I", 0.8), ("Sorry", 0.2)]), "neither yes nor no"),
        (status(503), "HTTP 503"),
        (httpx.ReadTimeout("slow"), "ReadTimeout"),
        (httpx.Response(200, text="not json"), "not JSON"),
    ],
)
def test_a_refusal_or_a_broken_answer_is_unavailable(
    answer: httpx.Response | Exception, message: str
) -> None:
    server = Scripted([answer])

    with pytest.raises(VerifierUnavailable, match=message):
        verifier(server, retries=1).judge([PAIR])


@pytest.mark.parametrize(
    "content",
    ["I cannot help with that.", "maybe", '{"verdict": "perhaps"}', "invalidates or compatible"],
)
def test_a_plain_refusal_or_nonsense_is_unavailable(content: str) -> None:
    server = Scripted([completion(content)])

    with pytest.raises(VerifierUnavailable):
        verifier(server, mode="plain").judge([PAIR])


@pytest.mark.parametrize(
    "body", [{"choices": []}, {"choices": [{"message": None}]}, {"nothing": True}]
)
def test_a_malformed_completion_is_unavailable(body: dict[str, Any]) -> None:
    server = Scripted([httpx.Response(200, json=body)])

    with pytest.raises(VerifierUnavailable, match="malformed completion"):
        verifier(server, mode="plain").judge([PAIR])


def test_a_plain_answer_that_leads_with_yes_is_a_verdict() -> None:
    server = Scripted([completion("Yes. The booking it names was cancelled.")])

    [verdict] = verifier(server, mode="plain").judge([PAIR])

    assert (verdict.invalidates, verdict.confidence) == (True, 0.5)


def embedding(vectors: dict[int, list[float]], usage: dict[str, int]) -> httpx.Response:
    data = [{"index": i, "embedding": v} for i, v in vectors.items()]
    return httpx.Response(200, json={"data": data, "usage": usage})


def test_embeddings_come_in_batches_in_input_order_and_are_kept() -> None:
    server = Scripted(
        [
            embedding({1: [0.0, 1.0], 0: [1.0, 0.0]}, {"prompt_tokens": 4}),
            embedding({0: [0.5, 0.5]}, {"prompt_tokens": 2, "total_tokens": 2}),
        ]
    )
    embedder = OpenAICompatEmbedder(
        model="e", base_url="http://model.test/v1", batch=2, http=server.http()
    )

    vectors = embedder.embed(["a", "b", "c"])
    again = embedder.embed(["c", "a"])

    assert [list(v) for v in vectors] == [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    assert [list(v) for v in again] == [[0.5, 0.5], [1.0, 0.0]]
    assert (embedder.calls, embedder.tokens_used) == (2, 6)
    assert [b["input"] for b in server.bodies] == [["a", "b"], ["c"]]


@pytest.mark.parametrize(
    "answer",
    [
        embedding({0: [1.0]}, {}),  # one vector for two texts
        embedding({0: [1.0], 1: []}, {}),
        httpx.Response(200, json={"data": [{"embedding": [1.0]}]}),
        status(404),  # a chat server serves no /embeddings
    ],
)
def test_a_wrong_embeddings_answer_is_unavailable(answer: httpx.Response) -> None:
    embedder = OpenAICompatEmbedder(
        model="e", base_url="http://model.test/v1", http=Scripted([answer]).http()
    )

    with pytest.raises(VerifierUnavailable):
        embedder.embed(["a", "b"])


LATERS = [
    Later(event_id=f"e{n}", epoch=9, op="assert", text=f"Observation {n}.") for n in range(1, 6)
]


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("1, 3", [True, False, True, False]),
        ("0", [False, False, False, False]),
        ("None of them.", [False, False, False, False]),
        ("4", [False, False, False, True]),
    ],
)
def test_the_scan_reads_the_numbers_it_is_given(content: str, named: list[bool]) -> None:
    server = Scripted([completion(content, usage=USAGE)])
    scan = OpenAICompatScan(model="m", base_url="http://model.test/v1", http=server.http())

    found = scan.scan("Pickup at 8:00.", ("The flight lands at 7.",), LATERS)

    assert found == named
    assert (scan.calls, scan.tokens_used, scan.generated_tokens) == (1, 301, 1)
    [body] = server.bodies
    assert body["max_tokens"] == 12
    assert "4. Observation 4." in body["messages"][-1]["content"]
    assert "5. Observation 5." not in body["messages"][-1]["content"]  # a batch of 4
    assert 'relies on: "The flight lands at 7."' in body["messages"][-1]["content"]


@pytest.mark.parametrize(
    "answer",
    [completion("5"), completion("maybe"), completion(""), httpx.Response(200, json={})],
)
def test_an_unusable_scan_answer_is_unavailable(answer: httpx.Response) -> None:
    scan = OpenAICompatScan(
        model="m", base_url="http://model.test/v1", http=Scripted([answer]).http()
    )

    with pytest.raises(VerifierUnavailable):
        scan.scan("Pickup at 8:00.", (), LATERS)


def test_the_bench_reader_counts_under_the_same_names() -> None:
    server = Scripted([completion(" Friday. ", usage={"total_tokens": 11})])
    model = ChatModel(model="m", base_url="http://model.test/v1", http=server.http())

    answer = model.complete("When?")

    assert answer == "Friday."
    assert (model.calls, model.tokens_used) == (1, 11)
    assert server.bodies[0]["messages"][-1] == {"role": "user", "content": "When?"}


def test_a_malformed_reader_answer_is_unavailable() -> None:
    model = ChatModel(
        model="m", base_url="http://model.test/v1", http=Scripted([status(200)]).http()
    )

    with pytest.raises(VerifierUnavailable, match="malformed completion"):
        model.complete("When?")


def test_two_reports_of_one_refused_format_step_down_once() -> None:
    # Two worker threads both saw json_schema refused; the second report arrives after the
    # first moved on, and must not skip json_object.
    v = OpenAICompatVerifier(model="m", base_url="http://127.0.0.1:9/v1", mode="json_schema")

    v.refused("json_schema")
    v.refused("json_schema")
    assert v.mode == "json_object"

    v.refused("json_object")
    with pytest.raises(VerifierUnavailable, match="no response format works"):
        v.refused("plain")


def test_the_one_token_verdict_is_yes_renormalized_over_yes_and_no() -> None:
    body = completion("Yes", top=[("Yes", 0.6), (" yes", 0.1), ("No", 0.2), ("Maybe", 0.1)])

    assert token_confidence(body.json()) == pytest.approx(0.7 / 0.9)


def test_an_answer_without_log_probabilities_asks_for_another_format() -> None:
    assert token_confidence(completion("yes").json()) is None


def test_the_judgment_cache_answers_repeated_pairs_without_calls(tmp_path: Path) -> None:
    answer = completion("no", top=[("no", 0.8), ("yes", 0.2)], usage=USAGE)
    store = open_store(f"sqlite:///{tmp_path}/cache.db")
    inner = verifier(Scripted([answer]))
    cached = CachedVerifier(inner, store)
    pairs = [p.pair for p in PROBES[:3]]

    first = cached.judge(pairs)
    again_store = open_store(f"sqlite:///{tmp_path}/cache.db")
    second = CachedVerifier(verifier(Scripted([answer])), again_store)
    again = second.judge(pairs)

    assert inner.calls == 3
    assert second.inner.calls == 0  # type: ignore[attr-defined]
    assert [v.invalidates for v in again] == [v.invalidates for v in first]
    assert (cached.misses, second.hits) == (3, 3)
    store.close()
    again_store.close()


@pytest.mark.parametrize("confidence", ["NaN", "Infinity", "-1", "7", '"high"', "true"])
def test_a_stated_confidence_that_is_no_probability_is_unavailable(confidence: str) -> None:
    """Read as none said (one half), an "invalidates" at NaN never excluded (a review)."""
    content = f'{{"verdict": "invalidates", "reason": "gone", "confidence": {confidence}}}'
    server = Scripted([completion(content)])

    with pytest.raises(VerifierUnavailable, match="malformed confidence"):
        verifier(server, mode="json_object").judge([PAIR])
