"""The packaged WordLlama embedder: loaded offline, real vectors, real nearest items."""

import sys

import pytest
import wordllama

from builders import item
from readmit.admission.invalidation.embeddings import ranked
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.scanner import propose
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.plugins import make_embedder
from readmit.verifiers.wordllama_embedder import WordLlamaEmbedder


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    built = make_embedder("wordllama")
    assert isinstance(built, WordLlamaEmbedder)
    return built


def test_it_loads_from_the_package_without_asking_the_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("wordllama tried to download")

    monkeypatch.setattr(wordllama.wordllama.requests, "get", no_download)

    built = make_embedder("wordllama:64")

    assert built.name.endswith(":l2_supercat_64")
    assert [len(v) for v in built.embed(["Taxi to the airport.", "Pay the invoice."])] == [64, 64]


def test_vectors_have_the_model_dimension_and_its_name(embedder: WordLlamaEmbedder) -> None:
    vectors = embedder.embed(["Taxi to the airport at 6:00.", "Buy flowers."])

    assert [len(v) for v in vectors] == [256, 256]
    assert vectors[0] != vectors[1]
    assert embedder.name == f"wordllama-{wordllama.__version__}:l2_supercat_256"
    assert embedder.embed([]) == []


def test_each_text_is_embedded_once_per_process(embedder: WordLlamaEmbedder) -> None:
    model_calls: list[list[str]] = []
    real = embedder.model

    class Counting:
        def embed(self, texts: list[str]) -> object:
            model_calls.append(texts)
            return real.embed(texts)

    counted = WordLlamaEmbedder(Counting(), embedder.dimensions, embedder.version)

    first = counted.embed(["Taxi at 6:00.", "Pay the invoice."])
    again = counted.embed(["Pay the invoice.", "Buy flowers."])

    assert model_calls == [["Taxi at 6:00.", "Pay the invoice."], ["Buy flowers."]]
    assert again[0] == first[1]


def test_nearest_items_follow_meaning_not_shared_words(embedder: WordLlamaEmbedder) -> None:
    candidates = [
        "Pay the electricity invoice by Monday.",
        "Taxi to the airport at 6:00.",
        "Teeth cleaning appointment on Friday morning.",
        "Restart the database replicas after the upgrade.",
    ]
    queries = [
        "The airline cancelled our flight to Lisbon.",
        "The dentist is closed this week.",
        "The server cluster is down for maintenance.",
    ]

    nearest = [order[0] for order in ranked(queries, candidates, embedder)]

    assert nearest == [1, 2, 3]


def test_the_scanner_proposes_a_premise_change_lexical_overlap_misses(
    embedder: WordLlamaEmbedder,
) -> None:
    later = Later(event_id="e9", epoch=9, op="evidence", text="The airline cancelled our flight.")
    taxi = item("t0", "Taxi to the airport at 6:00.")
    invoice = item("i0", "Pay the electricity invoice by Monday.")

    lexical = propose([later], [taxi, invoice], top_k=8)
    embedded = propose([later], [taxi, invoice], top_k=8, embedder=embedder, embed_top_k=1)

    assert lexical == []
    assert [p.earlier.id for p in embedded] == ["t0"]


def test_a_failing_model_is_no_answer(embedder: WordLlamaEmbedder) -> None:
    broken = WordLlamaEmbedder(model=None, dimensions=256, version="0")

    with pytest.raises(VerifierUnavailable, match="wordllama-0"):
        broken.embed(["text"])


@pytest.mark.parametrize("argument", ["100", "x", "-64"])
def test_a_dimension_it_does_not_have_is_a_config_error(argument: str) -> None:
    with pytest.raises(ConfigError, match="one of"):
        make_embedder(f"wordllama:{argument}")


def test_without_the_package_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)

    with pytest.raises(ConfigError, match=r"pip install '\.\[wordllama\]' in the readmit checkout"):
        make_embedder("wordllama")
