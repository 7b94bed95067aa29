"""The dependency scan: a model names premise changes the scanner missed; the verifier decides."""

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from builders import T0, context, item
from readmit.admission.invalidation.implicit import Later, Pair, Verdict
from readmit.admission.invalidation.scanner import Observations
from readmit.admission.invalidation.screening import Screener
from readmit.errors import VerifierUnavailable
from readmit.events import Assert, Evidence, ItemDraft, Recorded, Revoke
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.testing import FunctionVerifier
from readmit.verifiers.llm_scan import prompt, read_numbers

PICKUP = item("p0", "Pickup at 8:00 from the Sunrise Hotel lobby.")
FLIGHT = "Our flight was moved to the next day."


def news(n: int, text: str) -> Recorded:
    return Recorded(
        epoch=n, event=Evidence(id=f"n{n}", at=T0, author="A2", source_id=f"s{n}", text=text)
    )


@dataclass
class WordScan:
    """A deterministic `DependencyScan`: names observations that contain ``word``."""

    word: str
    batch: int = 4
    window: int = 8
    name: str = "word-scan"
    shown: list[list[str]] = field(default_factory=list)
    tokens_used: int = 0
    fails: bool = False

    def scan(self, target: str, premises: Sequence[str], laters: Sequence[Later]) -> list[bool]:
        self.shown.append([later.text for later in laters])
        self.tokens_used += 100
        if self.fails:
            raise VerifierUnavailable("scan server down")
        return [self.word in later.text for later in laters]


def flights_break_pickups(pair: Pair) -> Verdict:
    moved = "flight" in pair.later.text and "Pickup" in pair.earlier.text
    return Verdict(invalidates=moved, confidence=0.9, reason="the flight moved")


DELTA = (
    news(5, "The gym opens at six."),
    news(6, FLIGHT),
    news(7, "The gym opens at six."),
    news(8, "Lunch is at noon."),
)


def screen(scan: WordScan | None, policy: Policy | None = None) -> Screener:
    ctx = context((PICKUP,), delta=DELTA)
    verifier = FunctionVerifier(flights_break_pickups)
    screener = Screener(ctx, ctx.items, verifier, policy or Policy(), dependency_scan=scan)
    screener.admits(PICKUP)
    return screener


def test_the_scanner_alone_misses_a_premise_change_that_shares_no_word() -> None:
    screener = screen(None)

    assert screener.decided["p0"] is True


def test_the_scan_names_it_and_the_verifier_confirms_it() -> None:
    scan = WordScan("flight")

    screener = screen(scan)

    excluded = screener.excluded["p0"]
    assert (excluded.reason, excluded.evidence) == (Reason.IMPLICITLY_INVALIDATED, ("n6",))
    report = screener.judgment(0)
    assert (report.calls, report.scans, report.pairs, report.tokens) == (2, 1, 1, 100)


def test_the_scan_sees_distinct_texts_newest_first() -> None:
    scan = WordScan("nothing")

    screen(scan)

    assert scan.shown == [["Lunch is at noon.", "The gym opens at six.", FLIGHT]]


def test_what_the_scan_names_is_only_a_hypothesis() -> None:
    scan = WordScan("Lunch")

    screener = screen(scan)

    assert screener.decided["p0"] is True
    assert screener.judgment(0).pairs == 1  # the verifier judged the named pair and kept it


def test_a_failed_scan_withholds_the_item() -> None:
    screener = screen(WordScan("flight", fails=True))

    excluded = screener.excluded["p0"]
    assert excluded.reason == Reason.VERIFIER_UNAVAILABLE
    assert "dependency scan failed" in excluded.detail


@dataclass
class BrokenScan(WordScan):
    """A scan that fails in another way than `VerifierUnavailable`, or flags too few or many."""

    how: str = "raises"

    def scan(self, target: str, premises: Sequence[str], laters: Sequence[Later]) -> list[bool]:
        flags = super().scan(target, premises, laters)
        if self.how == "raises":
            raise RuntimeError("the model server went away")
        return flags[:-1] if self.how == "short" else [*flags, False]


@pytest.mark.parametrize("how", ["raises", "short", "long"])
def test_a_scan_that_breaks_otherwise_withholds_the_item_too(how: str) -> None:
    """It ended the whole return with its error, no decision recorded (a review)."""
    screener = screen(BrokenScan("nothing", how=how))

    excluded = screener.excluded["p0"]
    assert excluded.reason == Reason.VERIFIER_UNAVAILABLE
    assert "dependency scan failed" in excluded.detail


def test_scan_calls_count_against_the_budget() -> None:
    scan = WordScan("flight", batch=1)

    screener = screen(scan, Policy(max_judgments=2))

    assert screener.excluded["p0"].reason == Reason.UNSCREENED
    assert len(scan.shown) == 2


@dataclass
class SlowScan(WordScan):
    """A scan that takes at least ``seconds`` a call, as a model on a CPU does."""

    seconds: float = 0.05

    def scan(self, target: str, premises: Sequence[str], laters: Sequence[Later]) -> list[bool]:
        time.sleep(self.seconds)
        return super().scan(target, premises, laters)


def test_scan_calls_count_against_the_time_budget() -> None:
    scan = SlowScan("flight", batch=1)

    screener = screen(scan, Policy(max_judgment_seconds=0.01))

    assert screener.excluded["p0"].reason == Reason.UNSCREENED
    assert len(scan.shown) == 1  # the first scan took longer than the whole budget
    assert screener.judgment(0).seconds >= 0.05


def test_the_scan_never_sees_what_the_item_brought_or_news_restating_it() -> None:
    index = Observations([_later(news(6, PICKUP.text)), _later(news(7, FLIGHT))])

    assert [x.text for x in index.unproposed(PICKUP, 0, (), window=8)] == [FLIGHT]
    assert index.unproposed(PICKUP, 7, (), window=8) == []


def test_the_scan_is_shown_what_the_verifier_would_be() -> None:
    """News withdrawn before the return is evidence against nothing: the verifier is not
    shown it, and neither is the scan (a review's finding: the scan was shown Δ as it
    came, and spent its tokens on observations the verifier would pass over)."""
    moved = Assert(id="e6", at=T0, author="A2", item=ItemDraft(id="f6", text=FLIGHT))
    undone = Revoke(id="e7", at=T0, author="A2", target="f6", why="rebooked")
    delta = (*DELTA, Recorded(epoch=9, event=moved), Recorded(epoch=10, event=undone))
    ctx = context((PICKUP,), delta=delta)
    scan = WordScan("nothing")

    Screener(
        ctx, ctx.items, FunctionVerifier(flights_break_pickups), Policy(), dependency_scan=scan
    ).admits(PICKUP)

    shown = [text for batch in scan.shown for text in batch]
    assert shown.count(FLIGHT) == 1  # n6's; f6's was revoked before the return
    assert "No longer valid: f6. Reason: rebooked" in shown


def _later(recorded: Recorded) -> Later:
    event = recorded.event
    assert isinstance(event, Evidence)
    return Later(event_id=event.id, epoch=recorded.epoch, op="evidence", text=event.text)


@pytest.mark.parametrize(
    ("answer", "flags"),
    [
        ("2", [False, True, False]),
        ("1, 3", [True, False, True]),
        ("0", [False] * 3),
        ("None.", [False] * 3),
    ],
)
def test_the_model_answer_names_observations_by_number(answer: str, flags: list[bool]) -> None:
    assert read_numbers(answer, 3) == flags


@pytest.mark.parametrize("answer", ["", "all of them", "4", "yes"])
def test_an_answer_without_usable_numbers_is_no_answer(answer: str) -> None:
    with pytest.raises(VerifierUnavailable, match="unusable answer"):
        read_numbers(answer, 3)


def test_the_question_numbers_the_observations_and_shows_premises() -> None:
    asked = prompt("Pickup at 8:00.", ("Flight at 10:00.",), ["A.", "B."])

    assert 'relies on: "Flight at 10:00."' in asked
    assert "1. A.\n2. B." in asked
