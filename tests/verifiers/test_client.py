"""The shared OpenAI-compatible client: retries, backoff, timeouts, counters, answers."""

import gc

import httpx
import pytest

from readmit.errors import ConfigError, VerifierUnavailable
from readmit.verifiers.client import OpenAICompatClient, Usage
from verifiers.scripted import Scripted, completion, status

OK = completion("fine", usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10})


def client(server: Scripted, **kw: object) -> tuple[OpenAICompatClient, list[float]]:
    waits: list[float] = []
    made = OpenAICompatClient(
        "http://model.test/v1",
        "test-model",
        http=server.http(),
        sleep=waits.append,
        **kw,  # type: ignore[arg-type]
    )
    return made, waits


def test_an_answer_is_its_json_and_its_usage_is_counted() -> None:
    server = Scripted([OK])
    made, _ = client(server, api_key="sk-test")

    body = made.post("/chat/completions", {"model": "m"})

    assert body["choices"][0]["message"]["content"] == "fine"
    assert (made.usage.calls, made.usage.tokens_used, made.usage.generated_tokens) == (1, 10, 3)
    [request] = server.requests
    assert str(request.url) == "http://model.test/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"


def test_no_key_sends_no_authorization() -> None:
    server = Scripted([OK])
    made, _ = client(server)

    made.post("/embeddings", {})

    assert "Authorization" not in server.requests[0].headers


def test_transport_errors_are_retried_with_doubling_backoff() -> None:
    server = Scripted([httpx.ConnectError("refused"), httpx.ReadError("reset"), OK])
    made, waits = client(server, retries=2, backoff=0.5)

    made.post("/chat/completions", {})

    assert len(server.requests) == 3
    assert waits == [0.5, 1.0]
    assert made.usage.calls == 1  # answers, not attempts


def test_5xx_answers_are_retried_then_unavailable() -> None:
    server = Scripted([status(503)])
    made, waits = client(server, retries=2, backoff=0.1)

    with pytest.raises(VerifierUnavailable, match="test-model: HTTP 503"):
        made.post("/chat/completions", {})

    assert len(server.requests) == 3
    assert waits == [0.1, 0.2]
    assert made.usage.calls == 3


def test_4xx_answers_are_not_retried() -> None:
    server = Scripted([status(401), OK])
    made, waits = client(server, retries=2)

    with pytest.raises(VerifierUnavailable, match="HTTP 401"):
        made.post("/chat/completions", {})

    assert len(server.requests) == 1
    assert waits == []


def test_every_request_carries_the_timeout_and_a_timeout_is_unavailable() -> None:
    server = Scripted([httpx.ReadTimeout("slow")])
    made, _ = client(server, timeout=7.5, retries=1)

    with pytest.raises(VerifierUnavailable, match="ReadTimeout"):
        made.post("/chat/completions", {})

    assert len(server.requests) == 2
    timeouts = [r.extensions["timeout"] for r in server.requests]
    assert all(set(t.values()) == {7.5} for t in timeouts)


def test_one_connection_pool_serves_every_request() -> None:
    made = OpenAICompatClient("http://127.0.0.1:9/v1", "m")

    first = made._pool()

    assert made._pool() is first
    made.close()
    assert made.http is None


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(200, text="<html>busy</html>"),
        httpx.Response(200, json=["not", "an", "object"]),
    ],
)
def test_an_answer_that_is_no_json_object_is_unavailable(answer: httpx.Response) -> None:
    made, _ = client(Scripted([answer]))

    with pytest.raises(VerifierUnavailable, match="test-model: the answer is not"):
        made.post("/chat/completions", {})


@pytest.mark.parametrize(
    ("usage", "counted"),
    [
        ({"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}, (7, 2)),
        ({"prompt_tokens": 5, "completion_tokens": 2}, (7, 2)),
        ({"prompt_tokens": 5}, (5, 0)),  # an /embeddings answer
        ({"total_tokens": "many", "completion_tokens": -1}, (0, 0)),
        ("lots", (0, 0)),
        (None, (0, 0)),
    ],
)
def test_usage_is_read_leniently(usage: object, counted: tuple[int, int]) -> None:
    spent = Usage()

    spent.spent(usage)

    assert (spent.tokens_used, spent.generated_tokens) == counted


@pytest.mark.parametrize("bad", [{"timeout": 0}, {"retries": -1}, {"backoff": -1.0}])
def test_nonsense_limits_are_a_config_error(bad: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        OpenAICompatClient("http://127.0.0.1:9/v1", "m", **bad)  # type: ignore[arg-type]


def test_a_pool_of_its_own_is_closed_when_the_client_goes() -> None:
    # Kept-alive sockets of a dropped client would otherwise close only when collected,
    # with a ResourceWarning each.
    made = OpenAICompatClient("http://127.0.0.1:9/v1", "m")
    pool = made._pool()

    del made
    gc.collect()

    assert pool.is_closed


def test_a_pool_that_was_given_stays_open() -> None:
    given = httpx.Client()
    made = OpenAICompatClient("http://127.0.0.1:9/v1", "m", http=given)
    made._pool()

    del made
    gc.collect()

    assert not given.is_closed
    given.close()
