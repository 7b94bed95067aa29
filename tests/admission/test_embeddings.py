"""Nearest-neighbour proposals: the math, the scanner's use of them, and failing closed."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builders import KEY, T0, context, item, revoke
from readmit.admission import ReturnContext, admit
from readmit.admission.decision import Decision
from readmit.admission.invalidation.embeddings import VectorCache, ranked
from readmit.admission.invalidation.implicit import Later, Verdict, Verifier
from readmit.admission.invalidation.scanner import propose
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.events import Evidence, Recorded
from readmit.model import Item
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.signing import HmacSha256Signer
from readmit.testing import FunctionEmbedder, FunctionVerifier, UnavailableEmbedder
from readmit.verifiers.builtin import TermVerifier
from strategies import items

TOPICS = ("flight", "pickup", "museum", "invoice")


def topical(text: str) -> list[float]:
    """A vector per topic word, with travel words close together."""
    lowered = text.lower()
    travel = float("flight" in lowered or "pickup" in lowered)
    return [travel, *(float(word in lowered) for word in TOPICS), 0.01]


EMBEDDER = FunctionEmbedder(topical)
FLIGHT = Later(event_id="e9", epoch=9, op="evidence", text="Our flight moved to Friday.")
PICKUP = item("p0", "Pickup at 8:00 from the hotel lobby.")
POSTCARDS = item("m0", "The museum shop sells postcards.")


def test_candidates_are_ranked_best_first() -> None:
    found = ranked(["the flight"], ["museum hours", "pickup time", "flight desk"], EMBEDDER)

    assert found == [[2, 1, 0]]


def test_each_distinct_text_is_embedded_once() -> None:
    embedder = FunctionEmbedder(topical)

    ranked(["a flight", "a flight"], ["a flight", "the museum"], embedder)

    assert embedder.calls == [["a flight", "the museum"]]


@pytest.mark.parametrize(
    "fn",
    [lambda text: [0.0, 0.0], lambda text: [float("nan"), 1.0], lambda text: [1.0] * len(text)],
    ids=["zero vector", "not finite", "mixed dimensions"],
)
def test_vectors_that_do_not_fit_are_no_answer(fn: object) -> None:
    with pytest.raises(VerifierUnavailable):
        ranked(["a flight"], ["the museum"], FunctionEmbedder(fn))  # type: ignore[arg-type]


def test_kept_vectors_are_computed_once_and_the_least_recently_used_dropped() -> None:
    cache = VectorCache(capacity=2)
    asked: list[list[str]] = []

    def compute(texts: list[str]) -> list[list[float]]:
        asked.append(texts)
        return [[float(len(t)), 1.0] for t in texts]

    assert cache.vectors(["a", "bb", "a"], compute) == [[1.0, 1.0], [2.0, 1.0], [1.0, 1.0]]
    assert cache.vectors(["a"], compute) == [[1.0, 1.0]]  # "a" used last: "bb" goes next
    cache.vectors(["ccc"], compute)
    cache.vectors(["a", "bb"], compute)

    assert asked == [["a", "bb"], ["ccc"], ["bb"]]
    assert len(cache) == 2


def test_a_premise_change_sharing_no_word_is_proposed_only_with_an_embedder() -> None:
    lexical = propose([FLIGHT], [PICKUP, POSTCARDS], top_k=8)
    embedded = propose([FLIGHT], [PICKUP, POSTCARDS], top_k=8, embedder=EMBEDDER, embed_top_k=1)

    assert [p.earlier.id for p in lexical] == []
    assert [p.earlier.id for p in embedded] == ["p0"]


def test_only_earlier_items_count_among_the_nearest() -> None:
    later_pickup = item("p9", "Pickup moved to the hotel lobby.", epoch=10)

    pairs = propose([FLIGHT], [later_pickup, PICKUP, POSTCARDS], embedder=EMBEDDER, embed_top_k=1)

    assert [p.earlier.id for p in pairs] == ["p0"]


def evidence(epoch: int, text: str) -> Recorded:
    return Recorded(
        epoch=epoch,
        event=Evidence(id=f"ev{epoch}", at=T0, author="A3", source_id=f"msg{epoch}", text=text),
    )


def with_embedder_down(ctx: ReturnContext, verifier: Verifier) -> Decision:
    return admit(
        ctx,
        policy=Policy(),
        verifier=verifier,
        signer=HmacSha256Signer(KEY),
        embedder=UnavailableEmbedder(),
    )


MOVED = evidence(2, "Our flight moved to Friday.")


def test_an_embedder_that_is_down_withholds_every_item_it_could_not_screen() -> None:
    newer = item("n0", "The hotel lobby opens at 6:00.", epoch=3)
    ctx = context((PICKUP, newer), delta=(MOVED,))

    decision = with_embedder_down(
        ctx, FunctionVerifier(lambda pair: Verdict(invalidates=False, confidence=0.9))
    )

    reasons = {e.item: e for e in decision.exclusions}
    assert reasons["p0"].reason is Reason.VERIFIER_UNAVAILABLE
    assert reasons["p0"].evidence == ("ev2",)
    assert "not screened" in reasons["p0"].detail
    assert reasons.get("n0") is None or reasons["n0"].reason is not Reason.VERIFIER_UNAVAILABLE


def test_an_embedder_that_is_down_hides_nothing_from_a_verifier_that_cannot_judge_news() -> None:
    # The built-in verifier would answer "does not invalidate" to whatever news the
    # embedder proposed, so the embedder is not asked and its outage withholds nothing.
    decision = with_embedder_down(context((PICKUP,), delta=(MOVED,)), TermVerifier())

    assert all(e.reason is not Reason.VERIFIER_UNAVAILABLE for e in decision.exclusions)
    assert decision.judgment.calls == 0


def test_a_confirmed_invalidation_outranks_unscreened() -> None:
    h0 = item("h0", "Sunrise Hotel is booked.", epoch=1)
    p0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.", epoch=1)
    ctx = context((h0, p0), delta=(revoke("h0", 2),))

    decision = with_embedder_down(ctx, TermVerifier())

    reasons = {e.item: e.reason for e in decision.exclusions}
    assert reasons["p0"] is Reason.IMPLICITLY_INVALIDATED


def test_without_later_observations_the_embedder_is_not_asked() -> None:
    embedder = FunctionEmbedder(topical)
    ctx = context((item("p0", "Pickup at 8:00."),))

    admit(
        ctx,
        policy=Policy(),
        verifier=TermVerifier(),
        signer=HmacSha256Signer(KEY),
        embedder=embedder,
    )

    assert embedder.calls == []


def test_the_policy_bounds_nearest_proposals() -> None:
    with pytest.raises(ConfigError, match="scan_embed_top_k"):
        Policy(scan_embed_top_k=0)


@given(found=items(), k=st.integers(1, 4))
def test_embeddings_only_add_proposals_and_at_most_k_per_observation(
    found: tuple[Item, ...], k: int
) -> None:
    laters = [
        Later(event_id=f"e{n}", epoch=epoch, op="evidence", text=f"Later {text}")
        for n, (epoch, text) in enumerate([(3, "the train moved"), (6, "Sunrise Hotel budget")])
    ]

    lexical = {(p.later.event_id, p.earlier.id) for p in propose(laters, found)}
    both = {
        (p.later.event_id, p.earlier.id)
        for p in propose(laters, found, embedder=EMBEDDER, embed_top_k=k)
    }

    assert lexical <= both
    for later in laters:
        added = {i for e, i in both - lexical if e == later.event_id}
        assert len(added) <= k
        assert all(next(x for x in found if x.id == i).epoch < later.epoch for i in added)


@given(
    vectors=st.lists(
        st.lists(st.integers(-2, 2), min_size=2, max_size=2).filter(any), min_size=2, max_size=12
    ),
    limit=st.integers(0, 14),
)
def test_a_limited_ranking_is_the_prefix_of_the_full_one(
    vectors: list[list[int]], limit: int
) -> None:
    # Few distinct small vectors: many candidates tie, and ties must keep index order.
    table = {f"t{n}": [float(x) for x in v] for n, v in enumerate(vectors)}
    embedder = FunctionEmbedder(lambda text: table[text])
    queries, candidates = list(table)[:2], list(table)[2:] or list(table)

    full = ranked(queries, candidates, embedder)
    limited = ranked(queries, candidates, embedder, limits=[limit, limit])

    assert limited == [order[:limit] for order in full]
