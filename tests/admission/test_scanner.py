"""Lexical proposals: depends_on, distinctive terms, and BM25 bounded to the best few."""

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from builders import item, withdrawal
from readmit.admission.invalidation import scanner
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.indexes import indexed
from readmit.admission.invalidation.scanner import Limits, Observations, propose
from readmit.admission.invalidation.term_index import distinctive_hashes
from readmit.admission.invalidation.touched import touched
from readmit.model import Item

WORDS = ["Sunrise Hotel", "INC-42", "the pickup", "9:00", "budget", "Riverside", "plants"]


def evidence(text: str, epoch: int = 9) -> Later:
    return Later(event_id="e9", epoch=epoch, op="evidence", text=text)


def proposed(later: Later, *items: Item, top_k: int = 8) -> list[str]:
    return [p.earlier.id for p in propose([later], items, top_k=top_k)]


def test_an_item_depending_on_what_was_withdrawn_is_proposed_without_a_shared_word() -> None:
    plan = item("p0", "Leave at dawn.", depends_on=("h0",))

    found = proposed(
        withdrawal("The booking.", "h0"), plan, item("x", "Water the plants."), top_k=0
    )

    assert found == ["p0"]


def test_a_shared_distinctive_term_proposes_however_many_items_carry_it() -> None:
    items = [item(f"i{n}", f"Ticket INC-1234 note {n}.") for n in range(12)]

    found = proposed(evidence("INC-1234 was closed."), *items, top_k=0)

    assert sorted(found) == sorted(i.id for i in items)


def test_topic_words_alone_propose_only_the_best_matches() -> None:
    loose = [
        Later(event_id=f"e{n}", epoch=10 + n, op="evidence", text=f"The hotel room {n} has a view.")
        for n in range(20)
    ]
    close = Later(event_id="close", epoch=9, op="evidence", text="The hotel pickup moved.")
    target = item("p0", "The hotel pickup is at noon.")

    found = [p.later.event_id for p in propose([close, *loose], [target], top_k=3)]

    assert len(found) == 3
    assert found[0] == "close"


def test_equal_scores_rank_newest_first() -> None:
    same = [
        Later(event_id=f"e{n}", epoch=n, op="evidence", text="The hotel lobby.")
        for n in (5, 3, 7, 4)
    ]

    found = [
        p.later.event_id for p in propose(same, [item("x", "The hotel lobby, again.")], top_k=2)
    ]

    assert found == ["e7", "e5"]


def test_only_items_older_than_the_observation_are_proposed() -> None:
    older = item("old", "Pickup at the hotel.", epoch=3)
    newer = item("new", "Pickup at the hotel.", epoch=9)

    assert proposed(evidence("The hotel moved the pickup."), older, newer) == ["old"]


@given(
    texts=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    news=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), max_size=6),
    after=st.integers(0, 12),
)
def test_touches_never_clears_an_item_that_has_proposals(
    texts: list[str], news: list[list[str]], after: int
) -> None:
    target = item("t", " ".join(texts) + ".", epoch=2, depends_on=("p",))
    laters = [
        Later(
            event_id=f"e{n}",
            epoch=3 + n,
            op="revoke" if n % 3 == 0 else "evidence",
            text=" ".join(words) + ".",
            withdrawn_id="p" if n % 3 == 0 else None,
        )
        for n, words in enumerate(news)
    ]
    index = Observations(laters)

    if index.proposals(target, after, Limits()):
        assert index.touches(target, after)


def test_news_that_only_restates_an_item_is_not_proposed_against_it() -> None:
    answer = item("a1", "Answer to the current question: Yes")
    same = Later(event_id="e9", epoch=9, op="assert", text=answer.text, replacement_id="a2")
    other = Later(event_id="e10", epoch=10, op="assert", text="Answer to the current question: No")

    found = [p.later.event_id for p in propose([same, other], [answer])]

    assert found == ["e10"]


def test_an_item_built_on_another_is_never_proposed_against_it() -> None:
    question = item("q1", "Current question: is the Riverside pickup at 9:00?", epoch=2)
    answer = Later(
        event_id="e9",
        epoch=9,
        op="assert",
        text="Answer to the current question: the Riverside pickup is at 9:00.",
        replacement_id="a1",
        depends_on=frozenset({"q1"}),
    )
    doubt = Later(event_id="e10", epoch=10, op="evidence", text="The Riverside pickup moved.")
    index = Observations([answer, doubt])

    assert [p.later.event_id for p in propose([answer, doubt], [question])] == ["e10"]
    assert index.unproposed(question, 0, [doubt], window=4) == []


def test_the_scanner_builds_observations_in_the_order_later_declares_its_fields() -> None:
    # `scanner._observation` and `Observations.__init__` pass and unpack `Later`
    # positionally (Δ can hold thousands of events a return): a reordered field
    # would silently swap texts.
    assert list(Later._fields) == [
        "event_id",
        "epoch",
        "op",
        "text",
        "withdrawn_id",
        "withdrawn_text",
        "replacement_id",
        "replacement_text",
        "depends_on",
        "fewer",
        "until",
        "withdrawn_until",
    ]


def test_each_text_of_an_observation_is_read_for_names_on_its_own() -> None:
    """A name never runs from the observation's text into the text it withdrew."""
    moved = Later(
        event_id="e9",
        epoch=9,
        op="supersede",
        text="The standup moved to Room Beacon",
        withdrawn_id="w",
        withdrawn_text="Kona Lobby hosts the standup",
        replacement_id="r",
        replacement_text="The standup moved to Room Beacon",
    )

    index = Observations([moved]).by_term

    assert index.get("Room Beacon") is not None
    assert index.get("Kona Lobby") is not None
    assert index.get("Room Beacon Kona Lobby") is None


_IDS = st.sampled_from(["i0", "i1", "i2", "h0"])
_TEXTS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" and ".join)


@st.composite
def _observations(draw: st.DrawFn) -> list[Later]:
    """Observations in epoch order, of every shape an index files (some sharing an epoch)."""
    laters = []
    epoch = 1
    for n in range(draw(st.integers(1, 12))):
        epoch += draw(st.integers(0, 2))
        withdrawn = draw(st.none() | _IDS)
        laters.append(
            Later(
                event_id=f"e{n}",
                epoch=epoch,
                op="evidence" if withdrawn is None else "supersede",
                text=draw(_TEXTS),
                withdrawn_id=withdrawn,
                withdrawn_text=None if withdrawn is None else draw(_TEXTS),
                replacement_id=draw(st.none() | _IDS),
                replacement_text=draw(st.none() | _TEXTS),
                depends_on=frozenset(draw(st.lists(_IDS, max_size=2))),
            )
        )
    return laters


def _parts(index: Observations) -> tuple[object, ...]:
    lists = tuple({k: list(v) for k, v in d.items()} for d in index._lists)
    arrays = (index.epochs, index.news, index.by_term.keys, index.by_term.texts)
    bm25 = (index.bm25.postings.keys, index.bm25.postings.texts, index.bm25.weight)
    return (
        index.laters,
        index.texts,
        index._epochs,
        lists,
        [a.tolist() for a in (*arrays, index.by_term.sizes, *bm25, index.bm25.postings.sizes)],
        index.bm25.total,
    )


@given(_observations(), st.integers(1, 11))
def test_an_index_grown_from_an_earlier_one_is_the_index_of_all_its_observations(
    laters: list[Later], cut: int
) -> None:
    cut = min(cut, len(laters))
    earlier = Observations(laters[:cut])
    before = _parts(earlier)

    grown = earlier.extended(laters[cut:])

    assert _parts(grown) == _parts(Observations(laters))
    assert _parts(earlier) == before  # a return still using it is not disturbed
    targets = [item(f"t{n}", text, depends_on=("h0",)) for n, text in enumerate(WORDS)]
    for target in targets:
        assert grown.proposals(target, 0, Limits()) == Observations(laters).proposals(
            target, 0, Limits()
        )


def test_a_return_with_more_observations_grows_the_last_index_and_reads_only_the_new(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = [evidence(f"Ticket INC-{n} moved.", epoch=n) for n in range(1, 4)]
    later = evidence("Ticket INC-1 is closed.", epoch=7)
    made = indexed(first, None, (), 4)
    read: list[str] = []

    def spied(text: str) -> npt.NDArray[np.int64]:
        read.append(text)
        return distinctive_hashes(text)

    monkeypatch.setattr(scanner, "distinctive_hashes", spied)

    again = indexed(list(first), None, (), 4)  # the same observations, in a new list
    grown = indexed([*first, later], None, (), 4)

    assert again is made
    assert read == ["Ticket INC-1 is closed."]
    assert len(made.laters) == 3
    assert _parts(grown) == _parts(Observations([*first, later]))


def test_only_observations_after_the_indexed_ones_grow_an_index() -> None:
    index = Observations([evidence("The hotel moved.", epoch=5)])

    with pytest.raises(ValueError, match="follow"):
        index.extended([evidence("The pickup moved.", epoch=4)])
    with pytest.raises(ValueError, match="in order"):
        index.extended([evidence("The pickup moved.", epoch=7), evidence("Rain.", epoch=6)])


def test_many_targets_are_touched_by_a_premise_a_name_or_a_word_each_as_alone() -> None:
    index = Observations(
        [
            withdrawal("The booking.", "h0"),
            evidence("INC-42 is closed.", epoch=10),
            evidence("Water the plants at dusk.", epoch=11),
        ]
    )
    targets = [
        item("p0", "Leave at dawn.", depends_on=("h0",)),  # its premise was withdrawn
        item("t0", "Escalate INC-42 now."),  # a name, from epoch 10 on
        item("w0", "The plants need repotting."),  # a word only, at epoch 11
        item("x0", "Nothing in common."),
    ]
    afters = [0, 10, 10, 0]

    alone = [index.touches(t, a) for t, a in zip(targets, afters, strict=True)]

    assert alone == [True, False, True, False]
    assert touched(index, targets, afters) == alone
    assert touched(index, [], []) == []


def test_an_item_is_proposed_at_most_per_item_observations_of_every_kind_together() -> None:
    """Twelve premise withdrawals, twelve observations naming its ticket, eight matching
    only its words: at most ``per_item`` in all, strongest links first (a mutation review:
    without the last cut, each kind's own bound let 32 through)."""
    premises = tuple(f"h{n}" for n in range(12))
    target = item("p0", "Ticket INC-7 airport transfer.", depends_on=premises)
    withdrawn = [
        Later(event_id=f"w{n}", epoch=10 + n, op="revoke", text="-", withdrawn_id=f"h{n}")
        for n in range(12)
    ]
    named = [evidence(f"INC-7 note {n}.", 30 + n)._replace(event_id=f"n{n}") for n in range(12)]
    worded = [
        evidence(f"The airport transfer desk {n}.", 50 + n)._replace(event_id=f"m{n}")
        for n in range(8)
    ]

    found = [p.later.event_id for p in propose([*withdrawn, *named, *worded], [target])]

    assert len(found) == 16
    assert found[:12] == [f"w{n}" for n in range(12)]  # premise withdrawals first
