"""The judgment cache on every store backend: answers are remembered, abstentions are not."""

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from builders import item
from readmit.admission.invalidation.cache import CachedVerifier, verifier_identity
from readmit.admission.invalidation.implicit import Later, Pair, Verdict, judge_batch
from readmit.errors import DamagedStore, VerifierUnavailable
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


class _OneTooMany(FunctionVerifier):
    """Answers one "does not invalidate" more than it was asked for: a malformed answer."""

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        super().judge(pairs)
        return [Verdict(invalidates=False, confidence=0.9, reason="surplus")] * (len(pairs) + 1)


def test_an_answer_of_the_wrong_length_is_no_answer_though_the_cache_fills_the_batch(
    store: WorkStateStore,
) -> None:
    """With one pair of two known, the inner answer of two verdicts for one pair had the
    batch's length: the stage took it, each verdict on another pair, and a stale item was
    admitted (a review: the ferry's invalidation fell on the bakery's place)."""
    assert isinstance(store, SqlStore)
    unrelated = Verdict(invalidates=False, confidence=0.9, reason="unrelated")
    CachedVerifier(FunctionVerifier(lambda _: unrelated, name="m"), store).judge([BAKERY])
    cached = CachedVerifier(_OneTooMany(judge, name="m"), store)

    with pytest.raises(VerifierUnavailable, match="answered 2 verdicts for 1 pairs"):
        cached.judge([FERRY, BAKERY])
    judged = judge_batch(cached, [FERRY, BAKERY])

    assert [verdict for _, verdict in judged] == [None, None]  # both withheld, none guessed


def test_a_verdict_cached_with_a_reason_in_bytes_is_read_back_as_text(
    store: WorkStateStore,
) -> None:
    """Kept before verdicts were checked (SQLite keeps a verifier's bytes as a blob), its
    verdict refused it when read back, and its pair was withheld at every return, never
    judged again (a review)."""
    assert isinstance(store, SqlStore)
    reason: object = b"pickup rests on it" if store.conn.dialect == "sqlite" else "why"
    with store.conn.transaction():
        store.conn.execute(
            "INSERT INTO judgments (key, verifier, invalidates, confidence, reason, terms) "
            "VALUES ('k', 'v', 1, 0.9, ?, '[\"Sunrise\", 7]')",
            (reason,),
        )

    [verdict] = store.judgments(["k"]).values()

    assert verdict.reason == ("pickup rests on it" if isinstance(reason, bytes) else reason)
    assert verdict.terms == ("Sunrise", "7")


@pytest.mark.parametrize("terms", ["not JSON", '{"a": 1}', "7"])
def test_a_cached_verdict_whose_terms_are_damaged_is_a_store_error(
    store: WorkStateStore, terms: str
) -> None:
    """Read with ``json.loads`` alone, a ``JSONDecodeError`` or ``TypeError`` (a 500 at every
    return that met the pair), or a dict's keys taken for its terms."""
    assert isinstance(store, SqlStore)
    with store.conn.transaction():
        store.conn.execute(
            "INSERT INTO judgments (key, verifier, invalidates, confidence, reason, terms) "
            "VALUES ('k', 'v', 1, 0.9, 'why', ?)",
            (terms,),
        )

    with pytest.raises(DamagedStore, match=r"^a cached verdict's terms in the store is damaged"):
        store.judgments(["k"])
