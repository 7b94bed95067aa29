"""The chain: the built-in verifier decides withdrawals, a second verifier the rest.

The second verifier here is a small verifier written for the test (it implements the
protocol and records what it was asked); the same chain against a real llama.cpp server
is in test_llm_server.py.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from readmit.admission.invalidation.implicit import Later, Pair, Verdict
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.plugins import make_verifier
from readmit.verifiers.builtin import TermVerifier
from readmit.verifiers.chain import ChainVerifier
from readmit.verifiers.pairs import sourced_item

HOTEL = "The Sunrise Hotel booking is confirmed."
WITHDRAWN = Pair(
    later=Later(
        event_id="e1",
        epoch=9,
        op="revoke",
        text=f"No longer valid: {HOTEL}",
        withdrawn_id="h0",
        withdrawn_text=HOTEL,
    ),
    earlier=sourced_item("p0", "Pickup at 8:00 from the Sunrise Hotel lobby."),
)
UNLINKED = Pair(
    later=WITHDRAWN.later,
    earlier=sourced_item("m0", "The museum shop sells postcards."),
)
PREMISE = Pair(
    later=Later(event_id="e2", epoch=9, op="assert", text="Our flight was moved to the next day."),
    earlier=WITHDRAWN.earlier,
)
CREAM = "Lisinopril cream is for the rash."
COMPOUND = Pair(
    later=Later(
        event_id="e3",
        epoch=9,
        op="revoke",
        text=f"No longer valid: {CREAM}",
        withdrawn_id="c0",
        withdrawn_text=CREAM,
    ),
    earlier=sourced_item("r0", "Set a reminder for Lisinopril at 8 am daily."),
)


@dataclass
class Recording:
    """A second verifier that says "invalidates" to everything and remembers what it saw."""

    name: str = "recording"
    seen: list[Pair] = field(default_factory=list)
    calls: int = 0
    tokens_used: int = 0

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        self.seen += pairs
        self.calls += 1
        self.tokens_used += 10 * len(pairs)
        return [Verdict(invalidates=True, confidence=0.9, reason="second") for _ in pairs]


@dataclass
class Down:
    """A verifier whose server is down."""

    name: str = "down"

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        raise VerifierUnavailable("connection refused")


def test_withdrawals_are_decided_without_the_second_verifier() -> None:
    second = Recording()
    chain = ChainVerifier(TermVerifier(), second)

    linked, unlinked = chain.judge([WITHDRAWN, UNLINKED])

    assert linked.invalidates
    assert not unlinked.invalidates
    assert not unlinked.abstained
    assert second.seen == []
    assert (chain.first_pairs, chain.second_pairs) == (2, 0)


def test_premise_changes_and_abstentions_reach_the_second_verifier() -> None:
    second = Recording()
    chain = ChainVerifier(TermVerifier(), second)

    verdicts = chain.judge([WITHDRAWN, PREMISE, COMPOUND])

    assert second.seen == [PREMISE, COMPOUND]
    assert [v.reason for v in verdicts[1:]] == ["second", "second"]
    assert second.calls == 1  # one batch for both
    assert (chain.first_pairs, chain.second_pairs) == (1, 2)


def test_a_second_verifier_that_is_down_leaves_its_pairs_undecided() -> None:
    chain = ChainVerifier(TermVerifier(), Down())

    linked, premise = chain.judge([WITHDRAWN, PREMISE])

    assert linked.invalidates
    assert premise.abstained
    assert not premise.invalidates
    assert "down is unavailable" in premise.reason


def test_a_first_verifier_that_is_down_fails_the_whole_call() -> None:
    chain = ChainVerifier(Down(), Recording())

    with pytest.raises(VerifierUnavailable):
        chain.judge([WITHDRAWN, PREMISE])


def test_a_short_answer_from_a_part_is_no_answer() -> None:
    @dataclass
    class Short(Recording):
        def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
            return list(super().judge(pairs))[:-1]

    chain = ChainVerifier(TermVerifier(), Short())

    [linked, first, second] = chain.judge([WITHDRAWN, PREMISE, PREMISE])

    assert linked.invalidates
    assert first.abstained
    assert second.abstained


def test_the_name_names_both_parts_and_counters_add_up() -> None:
    second = Recording()
    chain = ChainVerifier(TermVerifier(), second)

    chain.judge([WITHDRAWN, PREMISE, PREMISE])

    assert chain.name == "chain:builtin,recording"
    assert chain.tokens_used == 20
    assert chain.calls == 1


def test_a_chain_spec_builds_both_parts() -> None:
    chain = make_verifier("chain:builtin,builtin")

    assert chain.name == "chain:builtin,builtin"


@pytest.mark.parametrize("spec", ["chain:builtin", "chain:,builtin", "chain:builtin,"])
def test_a_chain_spec_needs_two_parts(spec: str) -> None:
    with pytest.raises(ConfigError, match="chain:FIRST,SECOND"):
        make_verifier(spec)


def test_a_chain_spec_with_an_unknown_part_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown verifier 'nonesuch:x'"):
        make_verifier("chain:builtin,nonesuch:x")
