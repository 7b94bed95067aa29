"""The judgment cache on every store backend: answers are remembered, abstentions are not."""

from dataclasses import dataclass

from builders import item
from readmit.admission.invalidation.cache import CachedVerifier, verifier_identity
from readmit.admission.invalidation.implicit import Later, Pair, Verdict
from readmit.store import SqlStore, WorkStateStore
from readmit.testing import FunctionVerifier
from readmit.verifiers.chain import ChainVerifier

LATER = Later(event_id="e9", epoch=9, op="evidence", text="The harbour is closed all week.")
FERRY = Pair(later=LATER, earlier=item("f", "Ferry tickets are printed."))
BAKERY = Pair(later=LATER, earlier=item("b", "Collect the bread at noon."))


def judge(pair: Pair) -> Verdict:
    if pair.earlier.id == "f":
        return Verdict(invalidates=True, confidence=0.8, reason="the ferry needs the harbour")
    return Verdict(invalidates=False, confidence=0.5, abstained=True, reason="cannot tell")


def test_answers_are_remembered_across_verifiers_and_abstentions_asked_again(
    store: WorkStateStore,
) -> None:
    assert isinstance(store, SqlStore)  # every backend keeps judgments
    first = FunctionVerifier(judge, name="m")
    CachedVerifier(first, store).judge([FERRY, BAKERY])
    second = FunctionVerifier(judge, name="m")

    verdicts = CachedVerifier(second, store).judge([FERRY, BAKERY])

    assert [[p.earlier.id for p in call] for call in second.calls] == [["b"]]
    assert [(v.invalidates, v.abstained) for v in verdicts] == [(True, False), (False, True)]
    assert verdicts[0].reason == "the ferry needs the harbour"


@dataclass
class _CutOff(FunctionVerifier):
    """A stand-in for a model verifier: its verdicts depend on its ``decide_at``."""

    decide_at: float = 0.5


def test_a_verdict_made_at_one_cut_off_is_never_read_at_another(store: WorkStateStore) -> None:
    """The same model and pair at another ``decide_at`` is another verifier (alone or as
    a chain's second): its verdict was not made at this one's cut-off."""
    assert isinstance(store, SqlStore)
    CachedVerifier(_CutOff(judge, name="m", decide_at=0.5), store).judge([FERRY])
    again = _CutOff(judge, name="m", decide_at=0.5)
    stricter = _CutOff(judge, name="m", decide_at=0.9)
    chained = ChainVerifier(first=FunctionVerifier(judge, name="b"), second=stricter)

    CachedVerifier(again, store).judge([FERRY])
    CachedVerifier(stricter, store).judge([FERRY])

    assert (len(again.calls), len(stricter.calls)) == (0, 1)
    assert verifier_identity(chained).endswith("|decide_at=0.9")
