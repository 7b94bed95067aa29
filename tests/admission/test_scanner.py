"""Lexical proposals: depends_on, distinctive terms, and BM25 bounded to the best few."""

from builders import item, withdrawal
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.scanner import propose
from readmit.model import Item


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
    loose = [item(f"h{n:02}", f"The hotel has room {n} with a garden view.") for n in range(20)]
    close = item("p0", "Hotel pickup moved.")

    found = proposed(evidence("The hotel pickup is at noon."), *loose, close, top_k=3)

    assert len(found) == 3
    assert found[0] == "p0"


def test_equal_scores_rank_by_id() -> None:
    same = [item(name, "The hotel lobby.") for name in ("d", "b", "e", "a", "c")]

    assert proposed(evidence("The hotel lobby."), *same, top_k=2) == ["a", "b"]


def test_only_items_older_than_the_observation_are_proposed() -> None:
    older = item("old", "Pickup at the hotel.", epoch=3)
    newer = item("new", "Pickup at the hotel.", epoch=9)

    assert proposed(evidence("The hotel moved the pickup."), older, newer) == ["old"]
