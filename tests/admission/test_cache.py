"""The judgment cache on every store backend: answers are remembered, abstentions are not."""

from builders import item
from readmit.admission.invalidation.cache import CachedVerifier
from readmit.admission.invalidation.implicit import Later, Pair, Verdict
from readmit.store import SqlStore, WorkStateStore
from readmit.testing import FunctionVerifier

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
