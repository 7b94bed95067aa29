from collections.abc import Sequence

import pytest

from builders import item, withdrawal
from readmit.admission.invalidation.implicit import Later, Pair, Verdict, resolve_implicit
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.testing import FunctionVerifier, ShortVerifier, UnavailableVerifier

P0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.")
C = item("c", "Quiet hotel near the station.")
LATER = withdrawal("Sunrise Hotel is booked.", "h0")
PAIRS = [Pair(later=LATER, earlier=P0), Pair(later=LATER, earlier=C)]


def verdict(invalidates: bool, confidence: float) -> FunctionVerifier:
    return FunctionVerifier(
        lambda pair: Verdict(invalidates=invalidates, confidence=confidence, reason="because")
    )


def test_a_confirmed_pair_excludes_the_earlier_item_with_its_evidence() -> None:
    verifier = FunctionVerifier(
        lambda pair: Verdict(
            invalidates=pair.earlier.id == "p0",
            confidence=0.9,
            reason="conflict",
            terms=("Sunrise",),
        )
    )

    kept, excluded = resolve_implicit([P0, C], PAIRS, verifier, Policy())

    assert kept == [C]
    [only] = excluded
    assert (only.item, only.reason, only.evidence, only.confidence) == (
        "p0",
        Reason.IMPLICITLY_INVALIDATED,
        ("e9",),
        0.9,
    )
    assert "Sunrise" in only.detail


@pytest.mark.parametrize(("confidence", "excluded"), [(0.64, False), (0.65, True), (1.0, True)])
def test_the_threshold_decides_acceptance(confidence: float, excluded: bool) -> None:
    kept, _ = resolve_implicit([P0], PAIRS[:1], verdict(True, confidence), Policy(threshold=0.65))

    assert (kept == []) == excluded


@pytest.mark.parametrize(
    "verifier", [UnavailableVerifier(), ShortVerifier()], ids=["down", "short"]
)
def test_no_answer_withholds_every_challenged_item(verifier: object) -> None:
    kept, excluded = resolve_implicit([P0, C, item("z")], PAIRS, verifier, Policy())  # type: ignore[arg-type]

    assert [i.id for i in kept] == ["z"]
    assert {(e.item, e.reason) for e in excluded} == {
        ("p0", Reason.VERIFIER_UNAVAILABLE),
        ("c", Reason.VERIFIER_UNAVAILABLE),
    }


class _Malformed:
    name = "malformed"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [{"invalidates": False}] * len(pairs)  # type: ignore[list-item]


def test_a_malformed_answer_is_no_answer() -> None:
    kept, excluded = resolve_implicit([P0], PAIRS[:1], _Malformed(), Policy())

    assert kept == []
    assert [e.reason for e in excluded] == [Reason.VERIFIER_UNAVAILABLE]


def test_a_confirmation_in_another_batch_wins_over_an_outage() -> None:
    later2 = Later(event_id="e10", epoch=10, op="assert", text="x")
    calls = {"n": 0}

    def judge(pair: Pair) -> Verdict:
        calls["n"] += 1
        if pair.later.event_id == "e10":
            raise_unavailable()
        return Verdict(invalidates=True, confidence=0.9)

    pairs = [Pair(later=LATER, earlier=P0), Pair(later=later2, earlier=P0)]
    _, excluded = resolve_implicit([P0], pairs, FunctionVerifier(judge), Policy(batch_size=1))

    assert [e.reason for e in excluded] == [Reason.IMPLICITLY_INVALIDATED]


def raise_unavailable() -> None:
    from readmit.errors import VerifierUnavailable

    raise VerifierUnavailable("down")


def test_batches_hold_one_target_and_at_most_batch_size_observations() -> None:
    laters = [Later(event_id=f"e{i}", epoch=i, op="assert", text="t") for i in range(10, 15)]
    pairs = [Pair(later=x, earlier=e) for x in laters for e in (P0, C)]
    verifier = verdict(False, 0.9)
    seen: list[int] = []

    resolve_implicit(
        [P0, C],
        pairs,
        verifier,
        Policy(batch_size=2),
        on_progress=lambda done, total: seen.append(done),
    )

    assert all(len({p.earlier.id for p in call}) == 1 and len(call) <= 2 for call in verifier.calls)
    assert sum(len(call) for call in verifier.calls) == 10
    assert seen[-1] == 10


def test_an_abstention_withholds_the_item_and_says_why() -> None:
    abstains = FunctionVerifier(
        lambda pair: Verdict(
            invalidates=False, confidence=0.9, abstained=True, reason="one thing or two?"
        )
    )

    kept, excluded = resolve_implicit([P0], PAIRS[:1], abstains, Policy())

    assert kept == []
    [only] = excluded
    assert (only.reason, only.evidence) == (Reason.VERIFIER_UNAVAILABLE, ("e9",))
    assert "could not tell" in only.detail
    assert "one thing or two?" in only.detail


def test_a_verdict_cannot_abstain_and_invalidate() -> None:
    with pytest.raises(ValueError, match="abstain"):
        Verdict(invalidates=True, confidence=0.9, abstained=True)


def test_verdict_confidence_must_be_a_probability() -> None:
    with pytest.raises(ValueError, match="outside"):
        Verdict(invalidates=True, confidence=1.5)
