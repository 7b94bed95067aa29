"""The implicit stage: judging in selection order, fail closed, within a budget."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import pytest

from builders import KEY, T0, context, item, obligation, revoke
from readmit.admission import admit, hidden
from readmit.admission.context import History
from readmit.admission.decision import Issued
from readmit.admission.invalidation import implicit, touched
from readmit.admission.invalidation.cache import CachedVerifier, screening_key
from readmit.admission.invalidation.implicit import Later, Pair, Verdict, judges_news
from readmit.admission.invalidation.screening import Screener
from readmit.errors import ConfigError, InvalidInput, VerifierUnavailable
from readmit.events import Assert, Evidence, ItemDraft, Recorded
from readmit.model import Item
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.reasons import Exclusion, Reason
from readmit.signing import HmacSha256Signer
from readmit.testing import (
    FunctionEmbedder,
    FunctionVerifier,
    ShortVerifier,
    SlowVerifier,
    UnavailableVerifier,
)
from readmit.verifiers.builtin import TermVerifier

H0 = item("h0", "Sunrise Hotel is booked.")
P0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.")
C = item("c", "Quiet hotel near the station.")
DELTA = (revoke("h0", 9),)


def screen(
    items: Sequence[Item],
    verifier: object,
    policy: Policy | None = None,
    delta: tuple[Recorded, ...] = DELTA,
) -> tuple[list[Item], list[Exclusion], Screener]:
    ctx = context((H0, *items), delta=delta)
    screener = Screener(ctx, ctx.items, verifier, policy or Policy())  # type: ignore[arg-type]
    kept = [i for i in items if screener.admits(i)]
    return kept, list(screener.excluded.values()), screener


def verdict(invalidates: bool, confidence: float) -> FunctionVerifier:
    return FunctionVerifier(
        lambda pair: Verdict(invalidates=invalidates, confidence=confidence, reason="because")
    )


def news(n: int, text: str) -> Recorded:
    return Recorded(
        epoch=n, event=Evidence(id=f"n{n}", at=T0, author="A2", source_id=f"s{n}", text=text)
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

    kept, excluded, screener = screen([P0, C], verifier)

    assert kept == [C]
    [only] = excluded
    assert (only.item, only.reason, only.evidence, only.confidence) == (
        "p0",
        Reason.IMPLICITLY_INVALIDATED,
        ("rv-h0",),
        0.9,
    )
    assert "Sunrise" in only.detail
    assert screener.judgment(0).confirmed == (only,)
    assert screener.judgment(0).screened == {"c": 9}


@pytest.mark.parametrize(("confidence", "excluded"), [(0.64, False), (0.65, True), (1.0, True)])
def test_the_threshold_decides_acceptance(confidence: float, excluded: bool) -> None:
    kept, _, _ = screen([P0], verdict(True, confidence), Policy(threshold=0.65))

    assert (kept == []) == excluded


@pytest.mark.parametrize(
    "verifier", [UnavailableVerifier(), ShortVerifier()], ids=["down", "short"]
)
def test_no_answer_withholds_every_challenged_item(verifier: object) -> None:
    unrelated = item("z", "Water the plants.")

    kept, excluded, screener = screen([P0, C, unrelated], verifier)

    assert kept == [unrelated]
    assert {(e.item, e.reason) for e in excluded} == {
        ("p0", Reason.VERIFIER_UNAVAILABLE),
        ("c", Reason.VERIFIER_UNAVAILABLE),
    }
    assert screener.judgment(0).screened == {"z": 9}  # nothing to judge it against


class _Malformed:
    name = "malformed"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return [{"invalidates": False}] * len(pairs)  # type: ignore[list-item]


def test_a_malformed_answer_is_no_answer() -> None:
    kept, excluded, _ = screen([P0], _Malformed())

    assert kept == []
    assert [e.reason for e in excluded] == [Reason.VERIFIER_UNAVAILABLE]


def test_a_confirmation_in_another_batch_wins_over_an_outage() -> None:
    def judge(pair: Pair) -> Verdict:
        if pair.later.event_id == "n10":
            raise_unavailable()
        return Verdict(invalidates=pair.later.event_id == "rv-h0", confidence=0.9)

    _, excluded, _ = screen(
        [P0],
        FunctionVerifier(judge),
        Policy(batch_size=1),
        delta=(*DELTA, news(10, "Sunrise Hotel pickup notes.")),
    )

    assert [e.reason for e in excluded] == [Reason.IMPLICITLY_INVALIDATED]


def raise_unavailable() -> None:
    from readmit.errors import VerifierUnavailable

    raise VerifierUnavailable("down")


def test_batches_hold_one_target_and_at_most_batch_size_observations() -> None:
    delta = tuple(news(n, f"Sunrise Hotel update {n}.") for n in range(10, 15))
    verifier = verdict(False, 0.9)
    seen: list[int] = []
    ctx = context((P0, C), delta=delta)
    screener = Screener(
        ctx, ctx.items, verifier, Policy(batch_size=2), on_progress=lambda n, _: seen.append(n)
    )

    assert screener.admits(P0)
    assert screener.admits(C)

    assert all(len({p.earlier.id for p in call}) == 1 and len(call) <= 2 for call in verifier.calls)
    assert sum(len(call) for call in verifier.calls) == 10
    assert seen[-1] == len(verifier.calls) == screener.judgment(0).calls


def test_observations_that_say_the_same_thing_get_one_judgment_citing_the_earliest() -> None:
    """Four teammates repeating one claim cost one pair, not four (the verifier reads words)."""
    same = "Sunrise Hotel is full this week."
    delta = (*(news(n, same) for n in (14, 11, 13, 12)), news(15, "Sunrise Hotel has a pool."))

    kept, excluded, _ = screen([P0], verdict(True, 0.9), delta=delta)
    assert kept == []
    assert [e.evidence for e in excluded] == [("n11",)]

    counted = verdict(False, 0.9)
    screen([P0], counted, delta=delta)
    judged = [p.later.text for call in counted.calls for p in call]
    assert sorted(judged) == sorted([same, "Sunrise Hotel has a pool."])


def test_judging_an_item_stops_at_the_first_confirmed_invalidation() -> None:
    delta = tuple(news(n, f"Sunrise Hotel update {n}.") for n in range(10, 22))

    _, excluded, screener = screen([P0], verdict(True, 0.9), Policy(batch_size=4), delta=delta)

    assert [e.reason for e in excluded] == [Reason.IMPLICITLY_INVALIDATED]
    assert screener.judgment(0).calls == 1


def test_an_abstention_withholds_the_item_and_says_why() -> None:
    abstains = FunctionVerifier(
        lambda pair: Verdict(
            invalidates=False, confidence=0.9, abstained=True, reason="one thing or two?"
        )
    )

    kept, excluded, _ = screen([P0], abstains)

    assert kept == []
    [only] = excluded
    assert (only.reason, only.evidence) == (Reason.VERIFIER_UNAVAILABLE, ("rv-h0",))
    assert "could not tell" in only.detail
    assert "one thing or two?" in only.detail


def test_a_premise_is_screened_first_and_its_fall_takes_the_dependent() -> None:
    plan = item("plan", "Breakfast before the ride.", depends_on=("p0",))
    judged: list[str] = []

    def judge(pair: Pair) -> Verdict:
        judged.append(pair.earlier.id)
        return Verdict(invalidates=pair.earlier.id == "p0", confidence=0.9)

    kept, excluded, _ = screen([plan, P0], FunctionVerifier(judge))

    assert kept == []
    assert judged[0] == "p0"
    by_item = {e.item: e for e in excluded}
    assert by_item["plan"].reason is Reason.PREMISE_INVALIDATED
    assert by_item["plan"].evidence == ("p0",)


def test_the_call_budget_withholds_what_it_could_not_screen() -> None:
    items = [item(f"i{n}", f"Sunrise Hotel note {n}.") for n in range(5)]

    kept, excluded, screener = screen(items, verdict(False, 0.9), Policy(max_judgments=2))

    assert kept == items[:2]
    assert {e.item: e.reason for e in excluded} == {f"i{n}": Reason.UNSCREENED for n in range(2, 5)}
    assert "budget" in excluded[0].detail
    report = screener.judgment(0)
    assert (report.calls, report.unscreened, report.max_calls) == (2, 3, 2)


@dataclass
class _Counting:
    """A verifier that reports the tokens it spends, as LLM verifiers do."""

    per_call: int
    name: str = "counting"
    tokens_used: int = 0
    calls: list[int] = field(default_factory=list)

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.tokens_used += self.per_call
        self.calls.append(len(pairs))
        return [Verdict(invalidates=False, confidence=0.9) for _ in pairs]


def test_the_token_budget_stops_judging_once_spent() -> None:
    items = [item(f"i{n}", f"Sunrise Hotel note {n}.") for n in range(4)]
    verifier = _Counting(per_call=300)

    kept, excluded, screener = screen(items, verifier, Policy(max_judgment_tokens=500))

    assert len(verifier.calls) == 2  # the second call starts below the limit
    assert kept == items[:2]
    assert [e.reason for e in excluded] == [Reason.UNSCREENED, Reason.UNSCREENED]
    assert screener.judgment(0).tokens == 600


def test_the_time_budget_starts_no_call_once_spent_and_withholds_the_rest() -> None:
    items = [item(f"i{n}", f"Sunrise Hotel note {n}.") for n in range(4)]
    verifier = SlowVerifier(seconds=0.05)

    # Only time spent in calls counts: the first call always starts, however slow the
    # machine, and takes longer than the whole budget, so no other starts.
    kept, excluded, screener = screen(items, verifier, Policy(max_judgment_seconds=0.01))

    assert verifier.calls == 1
    assert kept == items[:1]
    assert {e.item: e.reason for e in excluded} == {f"i{n}": Reason.UNSCREENED for n in (1, 2, 3)}
    report = screener.judgment(0)
    assert report.seconds >= 0.05
    assert (report.calls, report.unscreened, report.max_seconds) == (1, 3, 0.01)


def test_a_time_budget_the_calls_fit_in_changes_nothing() -> None:
    items = [item(f"i{n}", f"Sunrise Hotel note {n}.") for n in range(4)]

    timed = screen(items, verdict(False, 0.9), Policy(max_judgment_seconds=3600))
    untimed = screen(items, verdict(False, 0.9))

    assert timed[:2] == untimed[:2] == (items, [])
    assert timed[2].judgment(0).calls == untimed[2].judgment(0).calls == 4


def test_past_the_budget_the_pool_is_answered_at_once_as_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    items = [item(f"i{n:03}", f"Sunrise Hotel note {n}.") for n in range(100)]
    items.append(item("q", "Quiet rooms preferred."))  # nothing later shares a word with it
    policy = Policy(max_judgments=1)

    batched = screen(items, verdict(False, 0.9), policy)
    monkeypatch.setattr(touched, "ONE_BY_ONE", len(items))
    alone = screen(items, verdict(False, 0.9), policy)

    assert batched[0] == alone[0] == [items[0], items[-1]]
    assert batched[1] == alone[1]
    assert len(batched[1]) == 99
    assert len(batched[2]._touching.known) == len(items) + 1  # H0 too: the whole pool
    assert not alone[2]._touching.known


def test_past_the_budget_an_embedder_answers_one_by_one_from_one_index() -> None:
    items = [item(f"i{n:03}", f"Sunrise Hotel note {n}.") for n in range(100)]
    embedder = FunctionEmbedder(lambda text: [1.0, float(len(text))])
    # Screened through epoch 0, before the departure: without a history to read, the index
    # of Δ is all there is, and it is built once, not again for each item.
    ctx = replace(
        context((H0, *items), delta=DELTA, departure_epoch=5),
        screened={"function": {i.id: 0 for i in items}},
    )
    screener = Screener(ctx, ctx.items, verdict(False, 0.9), Policy(max_judgments=1), embedder)

    kept = [i for i in items if screener.admits(i)]

    assert kept == items[:1]
    assert screener.judgment(0).unscreened == 99
    assert not screener._touching.known  # each answer ranks observations against its item
    assert len(embedder.calls) <= 2


@pytest.mark.parametrize("selection", ["obligations", "relevance"])
def test_past_the_budget_the_walk_stops_after_the_limit_and_the_rest_is_not_selected(
    selection: str,
) -> None:
    """Every candidate is touched by the revocation: each needs a judgment it cannot get."""
    touched_items = tuple(item(f"i{n:03}", f"Sunrise Hotel note {n}.") for n in range(300))
    quiet = item("q", "Quiet rooms preferred.")  # nothing later shares a word with it
    ctx = context((H0, quiet, *touched_items), delta=DELTA)
    policy = Policy(max_items=4, max_judgments=1, selection=selection)  # type: ignore[arg-type]

    decision = admit(ctx, policy=policy, verifier=verdict(False, 0.9), signer=HmacSha256Signer(KEY))

    assert isinstance(decision, Issued)
    unscreened = [e.item for e in decision.decided if e.reason is Reason.UNSCREENED]
    assert len(unscreened) == decision.judgment.unscreened == policy.unscreened_limit == 16
    assert len(decision.not_selected) == 300 - 16 - (len(decision.items) - 1)
    assert set(unscreened).isdisjoint(decision.not_selected)
    listed = {e["item"] for e in decision.signed["excluded"]}  # the view lists the withheld
    assert listed == {"h0", *unscreened}


@pytest.mark.parametrize("selection", ["obligations", "relevance"])
def test_what_builds_on_an_unscreened_premise_is_counted_and_bounds_the_walk(
    selection: str,
) -> None:
    t0 = item("t0", "Sunrise Hotel shuttle.", epoch=8)  # the newest: it spends the one call
    p = item("p", "Sunrise Hotel pickup.", epoch=1)  # touched: unscreened past the budget
    built_on = tuple(
        item(f"d{n:03}", f"Quiet note {n}.", epoch=2, depends_on=("p",)) for n in range(300)
    )
    ctx = context((H0, t0, p, *built_on), delta=DELTA)
    policy = Policy(max_items=4, max_judgments=1, selection=selection)  # type: ignore[arg-type]

    decision = admit(ctx, policy=policy, verifier=verdict(False, 0.9), signer=HmacSha256Signer(KEY))

    unscreened = [e.item for e in decision.decided if e.reason is Reason.UNSCREENED]
    assert len(unscreened) == decision.judgment.unscreened
    assert len(unscreened) <= policy.unscreened_limit


def test_past_the_limit_the_cover_still_reaches_a_supporter_that_needs_no_judgment() -> None:
    """Twenty touched supporters of d1 rank before an untouched one; the budget is one call."""
    touched_supporters = tuple(
        item(f"s{n:02}", f"Sunrise Hotel {n}.", supports=("d1",)) for n in range(20)
    )
    quiet = item("u", "Quiet rooms preferred.", supports=("d1",))
    ctx = context(
        (H0, *touched_supporters, quiet),
        delta=DELTA,
        obligations=(obligation("o1", requires=("d1",)),),
    )
    policy = Policy(max_items=4, max_judgments=1)

    decision = admit(ctx, policy=policy, verifier=verdict(True, 0.9), signer=HmacSha256Signer(KEY))

    assert decision.outcome == "issued"
    assert "u" in {i.id for i in decision.items}


def test_judgments_grow_with_the_view_not_with_the_store() -> None:
    signer = HmacSha256Signer(KEY)
    calls = []
    for size in (40, 400):
        items = tuple(
            item(f"i{n:04}", f"Sunrise Hotel note {n}.", supports=("d",)) for n in range(size)
        )
        ctx = context(
            (H0, *items),
            delta=DELTA,
            obligations=(obligation("o", requires=("d",)),),
        )
        verifier = verdict(False, 0.9)
        decision = admit(ctx, policy=Policy(max_items=8), verifier=verifier, signer=signer)
        assert isinstance(decision, Issued)
        calls.append(len(verifier.calls))
    assert calls[0] == calls[1] <= 8


def test_a_verdict_cannot_abstain_and_invalidate() -> None:
    with pytest.raises(ValueError, match="abstain"):
        Verdict(invalidates=True, confidence=0.9, abstained=True)


def test_verdict_confidence_must_be_a_probability() -> None:
    with pytest.raises(ValueError, match="outside"):
        Verdict(invalidates=True, confidence=1.5)


def test_the_verifier_sees_the_premises_of_what_it_judges() -> None:
    answer = item("a0", "Answer: No.", depends_on=("q0",))
    question = item("q0", "Question: did Ralph use a radio at Iwo Jima in 1945?")
    seen: list[tuple[str, ...]] = []

    def judge(pair: Pair) -> Verdict:
        seen.append(pair.premises)
        return Verdict(invalidates=False, confidence=0.9)

    ctx = context((question, answer), delta=(news(9, "Answer: Yes."),))
    Screener(ctx, ctx.items, FunctionVerifier(judge), Policy()).admits(answer)

    assert seen == [(question.text,)]


def test_premises_are_part_of_a_cached_judgment() -> None:
    from readmit.admission.invalidation.cache import pair_key

    later = news(9, "Answer: Yes.")
    bare = Pair(later=_later(later), earlier=P0)
    framed = Pair(later=_later(later), earlier=P0, premises=("Question: which hotel?",))

    assert pair_key("v", bare) != pair_key("v", framed)


def _later(recorded: Recorded) -> Later:
    from readmit.admission.invalidation.observations import observations_of

    [found] = observations_of([recorded], (), {})
    return found


@dataclass
class _Withdrawals:
    """A verifier that judges withdrawals only (as the built-in one does) and says so."""

    name: str = "withdrawals"
    judges_news: bool = False
    calls: list[list[Pair]] = field(default_factory=list)

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.calls.append(list(pairs))
        return [
            Verdict(invalidates=p.later.withdrawn_text is not None, confidence=0.9) for p in pairs
        ]


def test_a_verifier_that_cannot_judge_news_is_never_shown_any() -> None:
    delta = (*DELTA, news(10, "Sunrise Hotel has a new pickup desk."))
    shy = _Withdrawals()
    told = FunctionVerifier(  # the same verdicts, from a verifier that judges news
        lambda p: Verdict(invalidates=p.later.withdrawn_text is not None, confidence=0.9),
        name=shy.name,
    )

    kept, excluded, screener = screen([P0, C], shy, delta=delta)
    kept_told, excluded_told, _ = screen([P0, C], told, delta=delta)

    shown = [p.later.event_id for batch in shy.calls for p in batch]
    assert set(shown) == {"rv-h0"}  # never the evidence event
    assert any(p.later.event_id == "n10" for batch in told.calls for p in batch)
    assert (kept, excluded) == (kept_told, excluded_told)
    assert screener.judgment(0).pairs < sum(len(batch) for batch in told.calls)


def test_the_built_in_verifier_says_it_cannot_judge_news() -> None:
    assert not judges_news(TermVerifier())
    assert judges_news(verdict(False, 0.9))  # a verifier that does not say: it can
    assert not judges_news(CachedVerifier(TermVerifier(), _NoCache()))  # wrappers forward


class _NoCache:
    def judgments(self, keys: Sequence[str]) -> dict[str, Verdict]:
        return {}

    def remember_judgments(self, verifier: str, verdicts: Mapping[str, Verdict]) -> None:
        pass


@pytest.mark.parametrize(
    "other",
    [Policy(threshold=0.95), Policy(scan_top_k=1), Policy(scan_per_item=1)],
    ids=["threshold", "scan_top_k", "scan_per_item"],
)
def test_a_screening_under_other_settings_binds_nothing(other: Policy) -> None:
    verifier = verdict(True, 0.9)  # would exclude anything it was shown
    key = screening_key(verifier, other, None, None)
    ctx = replace(context((H0, P0, C), delta=DELTA), screened={key: {"p0": 9, "c": 9}})
    screener = Screener(ctx, ctx.items, verifier, Policy())

    assert not screener.admits(P0)
    assert verifier.calls


def test_items_screened_through_the_latest_epoch_need_no_index_and_no_call() -> None:
    verifier = verdict(True, 0.9)  # would exclude anything it was shown
    key = screening_key(verifier, Policy(), None, None)
    ctx = replace(context((H0, P0, C), delta=DELTA), screened={key: {"p0": 9, "c": 9}})
    screener = Screener(ctx, ctx.items, verifier, Policy())

    assert screener.admits(P0)
    assert screener.admits(C)
    assert verifier.calls == []
    assert screener._index is None  # nothing can follow epoch 9: Δ was not indexed
    assert screener.judgment(0).screened == {"p0": 9, "c": 9}


_CONFIRMS_P0 = FunctionVerifier(
    lambda pair: Verdict(invalidates=pair.earlier.id == "p0", confidence=0.9)
)


@pytest.mark.parametrize(
    ("verifier", "expected"),
    [
        (
            _CONFIRMS_P0,
            {
                "h0": Reason.REVOKED,
                "p0": Reason.IMPLICITLY_INVALIDATED,  # judged, never asked for the view
                "seen": Reason.PREMISE_INVALIDATED,
                "plan": Reason.PREMISE_INVALIDATED,  # never asked either: its premise fell
            },
        ),
        (
            UnavailableVerifier(),
            {
                "h0": Reason.REVOKED,
                "p0": Reason.VERIFIER_UNAVAILABLE,
                "seen": Reason.VERIFIER_UNAVAILABLE,  # asked for: "could not be screened"
                "plan": Reason.NOT_SELECTED,
            },
        ),
    ],
    ids=["confirmed", "verifier down"],
)
def test_what_falls_outside_the_view_is_accounted_for_once_with_its_fall(
    verifier: object, expected: dict[str, Reason]
) -> None:
    """A premise judged for a dependent, and another dependent of it, neither selected.

    With the verifier down, "plan" was never reached and its premise was withheld, not
    found invalid (a review's finding: it was `premise_invalidated`, which the next return
    with the verifier back contradicted by admitting it).
    """
    seen = item("seen", "Breakfast before the ride.", epoch=8, depends_on=("p0",))
    other = item("other", "Water the plants.", epoch=7)
    premise = item("p0", P0.text, epoch=6)
    plan = item("plan", "Leave at dawn.", epoch=5, depends_on=("p0",))
    ctx = context((H0, seen, other, premise, plan), delta=DELTA)

    decision = admit(
        ctx,
        policy=Policy(max_items=1),
        verifier=verifier,  # type: ignore[arg-type]
        signer=HmacSha256Signer(KEY),
    )

    assert isinstance(decision, Issued)
    assert decision.items == (other,)  # newest first: "seen" is out either way
    reasons = [(e.item, e.reason) for e in decision.exclusions]
    assert len(reasons) == len({i for i, _ in reasons}) == 4  # each item once
    assert dict(reasons) == expected


@pytest.mark.parametrize("waited", [-0.5, float("nan"), float("inf")])
def test_a_wait_that_is_no_number_of_seconds_is_refused(waited: float) -> None:
    ctx = context((H0, P0), delta=DELTA)

    with pytest.raises(ValueError, match="waited must be a finite number of seconds"):
        admit(
            ctx,
            policy=Policy(),
            verifier=verdict(False, 0.9),
            signer=HmacSha256Signer(KEY),
            waited=waited,
        )


class _Stop(Exception):
    pass


def test_between_is_called_between_stages_and_may_stop_the_return_before_any_call() -> None:
    """Judging ahead gives way to a return with it (`readmit.service.ahead`)."""
    ctx = context((H0, P0, C), delta=DELTA)
    verifier = verdict(False, 0.9)
    steps: list[int] = []
    signer = HmacSha256Signer(KEY)
    admit(
        ctx,
        policy=Policy(),
        verifier=verifier,
        signer=signer,
        between=lambda: steps.append(len(verifier.calls)),
    )
    assert len(steps) == 4
    assert steps[:3] == [0, 0, 0]
    assert steps[3] > 0  # the calls come after the gates, before the view

    def stop() -> None:
        raise _Stop

    verifier.calls.clear()
    with pytest.raises(_Stop):
        admit(ctx, policy=Policy(), verifier=verifier, signer=signer, between=stop)
    assert not verifier.calls


class _Down:
    name = "down"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        raise ConnectionError("model server down")


class _Nothing:
    name = "nothing"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        return None  # type: ignore[return-value]


@pytest.mark.parametrize("verifier", [_Down(), _Nothing()], ids=["raises", "answers-none"])
def test_a_verifier_that_fails_any_way_withholds_what_it_was_asked_about(verifier: object) -> None:
    """Fail closed: a user's verifier raising its own error, or answering no sequence."""
    kept, excluded, _ = screen([P0, C], verifier)

    assert P0 not in kept
    assert {e.item: e.reason for e in excluded}["p0"] is Reason.VERIFIER_UNAVAILABLE


class _Unavailable:
    def __init__(self, why: str) -> None:
        self.name = "model"
        self.why = why

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        raise VerifierUnavailable(f"model: {self.why}")


def test_why_a_verifier_gave_no_answer_is_logged_once_a_minute_for_the_operator(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exclusions said only "gave no answer", and nothing said why (a newcomer)."""
    monkeypatch.setattr(implicit, "_SAID", {})
    down = _Unavailable("ConnectError('[Errno 111] Connection refused')")

    with caplog.at_level("WARNING", logger="readmit.verifier"):
        for verifier in (down, down, _Unavailable("HTTP 500"), down):
            screen([P0, C], verifier)
        within = [r.getMessage() for r in caplog.records]
        monkeypatch.setattr(implicit, "SAY_AGAIN_AFTER", 0.0)
        screen([P0, C], down)

    assert within == [
        "verifier 'model' gave no answer, so its pairs are withheld: "
        "ConnectError('[Errno 111] Connection refused')",
        "verifier 'model' gave no answer, so its pairs are withheld: HTTP 500",
    ]
    assert caplog.records[2].getMessage() == within[0]  # a minute later, said again


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"invalidates": "no", "confidence": 0.9}, "invalidates must be True or False, not 'no'"),
        ({"invalidates": None, "confidence": 0.9}, "must be True or False, not None"),
        ({"invalidates": True, "confidence": "high"}, "confidence must be a number, not 'high'"),
        # None broke the judgment cache's row (withheld, asked again each return); bytes were
        # cached as a blob on SQLite and read back as text on PostgreSQL (a review)
        ({"invalidates": True, "confidence": 0.9, "reason": None}, "reason must be a string"),
        ({"invalidates": True, "confidence": 0.9, "reason": b"why"}, "reason must be a string"),
        ({"invalidates": True, "confidence": 0.9, "terms": (1, 2)}, "terms must be a tuple of"),
    ],
)
def test_a_verdict_of_the_wrong_types_is_refused(fields: dict[str, object], said: str) -> None:
    with pytest.raises(InvalidInput, match=said):
        Verdict(**fields)  # type: ignore[arg-type]


def test_a_plain_function_as_the_verifier_is_told_what_a_verifier_needs() -> None:
    ctx = context((H0, P0), delta=DELTA)

    with pytest.raises(InvalidInput, match=r"needs a name and a judge\(pairs\) method"):
        admit(ctx, policy=Policy(), verifier=lambda p: None, signer=HmacSha256Signer(KEY))  # type: ignore[arg-type]


class _Named:
    def __init__(self, name: object) -> None:
        self.name = name

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        return [Verdict(invalidates=True, confidence=1.0) for _ in pairs]


@pytest.mark.parametrize("name", ["", "  ", None, 7, "v\x00", "m\udcff"])
def test_a_verifier_without_a_name_is_refused_as_its_verdicts_would_bind_nothing(
    name: object,
) -> None:
    """A judgment whose verifier has no name is taken for the explicit stages' alone, so
    the store kept none of its verdicts (a review's finding): refused before judging. A
    name no store can hold failed every return as it was stored (a review)."""
    ctx = context((H0, P0), delta=DELTA)

    with pytest.raises(InvalidInput, match="needs a name that is a non-empty string with no"):
        admit(ctx, policy=Policy(), verifier=_Named(name), signer=HmacSha256Signer(KEY))  # type: ignore[arg-type]


def test_the_budget_is_checked_between_the_batches_of_one_item() -> None:
    """A mutation review: without the check, an item's second batch was judged past the
    budget (one call more than it allows), and the item it left partly judged admitted."""
    two = (revoke("h0", 8), revoke("h1", 9))
    h1 = item("h1", "Sunrise Hotel breakfast at 7.")
    ctx = context((H0, h1, P0), delta=two)
    screener = Screener(ctx, ctx.items, verdict(False, 0.9), Policy(max_judgments=1, batch_size=1))

    assert not screener.admits(P0)
    assert screener.judgment(0).calls == 1
    [withheld] = screener.excluded.values()
    assert withheld.reason is Reason.UNSCREENED
    assert len(withheld.evidence) == 1  # the observation it could not judge


def test_the_token_budget_is_spent_when_the_tokens_reach_it() -> None:
    """At exactly the limit no call starts (a mutation review: ``>`` made one more)."""
    items = [item(f"i{n}", f"Sunrise Hotel note {n}.") for n in range(4)]
    verifier = _Counting(per_call=250)

    kept, _, screener = screen(items, verifier, Policy(max_judgment_tokens=500))

    assert len(verifier.calls) == 2
    assert kept == items[:2]
    assert screener.judgment(0).tokens == 500


def test_an_item_never_screened_is_judged_against_the_log_before_the_departure() -> None:
    """X was screened through the departure, so judging it built the index over Δ alone,
    which holds nothing the built-in verifier judges (news). P0 was never screened: it is
    judged back to its own epoch, where H0's revocation came before the departure (a
    mutation review: without the shortcut's test of where the index starts, P0 was
    taken as screened and admitted)."""
    x = item("x", "Garage code is 1234.")
    p0 = item("p0", "Pickup at 8:00 from Sunrise Hotel.", epoch=2)
    gone = (revoke("h0", 3),)

    def before(after: int, news: bool = True) -> History:
        return History(events=tuple(r for r in gone if r.epoch > after), items=(H0,))

    verifier, policy = TermVerifier(), Policy()
    ctx = context((x, p0), delta=(news(6, "The weather is fine."),), departure_epoch=5)
    key = screening_key(verifier, policy, None, None)
    ctx = replace(ctx, history=before, screened={key: {"x": 5}})
    screener = Screener(ctx, ctx.items, verifier, policy)

    assert screener.admits(x)
    assert not screener.admits(p0)
    assert screener.excluded["p0"].reason is Reason.IMPLICITLY_INVALIDATED
    assert screener.excluded["p0"].evidence == ("rv-h0",)
    # With no store to tell what it was about, an event from before the departure that no
    # item of C came from is not named to the agent (a mutation review: nothing told).
    assert "rv-h0" in hidden.hidden_ids(ctx, list(screener.excluded.values()))


def _keyed_news(epoch: int, text: str, unconfirmed: bool = False) -> Recorded:
    draft = ItemDraft(id=f"pool{epoch}", text=text, key="pool", unconfirmed=unconfirmed)
    return Recorded(epoch=epoch, event=Assert(id=f"e{epoch}", at=T0, author="A2", item=draft))


@pytest.mark.parametrize("unconfirmed", [True, False])
def test_hearsay_of_a_key_does_not_undo_news_of_it(unconfirmed: bool) -> None:
    """The pool's closing is news of key "pool"; a later item of the key replaces it, so
    the swim is judged against that item alone. Hearsay replaces nothing: the closing
    still stands against the swim (a mutation review: no test told)."""
    swim = item("swim", "Swim at the pool at 9.")
    delta = (_keyed_news(2, "The pool is closed."), _keyed_news(3, "Pool update.", unconfirmed))
    closes = FunctionVerifier(
        lambda pair: Verdict(invalidates=pair.later.text == "The pool is closed.", confidence=0.9)
    )
    ctx = context((swim,), delta=delta)
    screener = Screener(ctx, ctx.items, closes, Policy())

    assert screener.admits(swim) is not unconfirmed


def test_revocations_of_two_items_in_the_same_words_are_judged_apart() -> None:
    """A verifier is shown what each withdrew: the same words, withdrawn from two items,
    rest on two premises, restored apart (a mutation review: without the withdrawn item in
    ``distinct``'s key they were judged once, the verdict resting on the earlier alone)."""
    twin = item("h1", H0.text)
    seen: list[str | None] = []

    def recording(pair: Pair) -> Verdict:
        seen.append(pair.later.withdrawn_id)
        return Verdict(invalidates=False, confidence=0.9)

    ctx = context((H0, twin, P0), delta=(revoke("h0", 8), revoke("h1", 9)))
    screener = Screener(ctx, ctx.items, FunctionVerifier(recording), Policy())

    assert screener.admits(P0)
    assert sorted(map(str, seen)) == ["h0", "h1"]


@pytest.mark.parametrize("spec", ["openai-compat:m\udcff@http://127.0.0.1:9/v1", "builtin\x00"])
def test_a_verifier_spec_no_store_could_hold_is_refused_when_made(spec: str) -> None:
    """A byte not UTF-8 on the command line arrives as a lone surrogate: `readmit serve`
    started, and every return that judged answered 500 (a review)."""
    with pytest.raises(ConfigError, match="holds a NUL or a lone surrogate"):
        make_verifier(spec)


def test_a_verdicts_terms_given_as_a_list_are_kept_as_a_tuple() -> None:
    verdict = Verdict(invalidates=True, confidence=0.9, terms=["Sunrise"])  # type: ignore[arg-type]

    assert verdict.terms == ("Sunrise",)
