"""`audit.redacts` answers exactly ``shown == redact(excluded, hidden)`` without copying the
exclusions: the audit log keeps an issued view's exclusions once only when it holds."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from readmit.admission.hidden import redact
from readmit.reasons import Reason
from readmit.store.audit import redacts

IDS = ["i1", "i2", "i3", "ev-1", "ev-2"]
REASONS = [
    Reason.NOT_SELECTED,
    Reason.REVOKED,
    Reason.UNAUTHORIZED,
    "stale_or_superseded",
    "unscreened",
    "implicitly_invalidated",
]


@st.composite
def exclusions(draw: st.DrawFn) -> dict[str, Any]:
    evidence = draw(st.lists(st.sampled_from(IDS), max_size=3))
    entry: dict[str, Any] = {
        "item": draw(st.sampled_from(IDS[:3])),
        "reason": str(draw(st.sampled_from(REASONS))),
        "stage": "explicit",
        "evidence": tuple(evidence) if draw(st.integers(0, 4)) == 0 else evidence,
    }
    if draw(st.booleans()):
        entry["detail"] = draw(st.sampled_from(["why", "why i2"]))
    if draw(st.booleans()):
        entry["confidence"] = draw(st.sampled_from([1, 1.0, 0.9]))
    if draw(st.booleans()):  # the events named though hidden (`Exclusion.sighted`)
        entry["sighted"] = [x for x in evidence if draw(st.booleans())]
    return entry


@st.composite
def cases(draw: st.DrawFn) -> tuple[Any, list[dict[str, Any]], frozenset[str]]:
    """Exclusions, hidden ids, and a list that is, or nearly is, their redaction."""
    excluded = draw(st.lists(exclusions(), max_size=6))
    hidden = frozenset(draw(st.lists(st.sampled_from(IDS), max_size=3)))
    shown: Any = redact(excluded, hidden)
    change = draw(st.integers(0, 6))
    if change == 1 and shown:
        shown.pop(draw(st.integers(0, len(shown) - 1)))
    elif change == 2:
        shown.append(draw(exclusions()))
    elif change == 3 and shown:
        shown[draw(st.integers(0, len(shown) - 1))]["evidence"] = draw(exclusions())["evidence"]
    elif change == 4 and len(shown) > 1:
        shown.reverse()
    elif change == 5:
        shown = tuple(shown)
    elif change == 6:
        shown = draw(st.lists(exclusions(), max_size=3))
    return shown, excluded, hidden


@given(cases())
def test_redacts_is_equality_with_the_redaction(
    case: tuple[Any, list[dict[str, Any]], frozenset[str]],
) -> None:
    shown, excluded, hidden = case

    assert redacts(shown, excluded, hidden) == (shown == redact(excluded, hidden))


def test_an_entry_with_hidden_evidence_is_compared_as_redacted() -> None:
    excluded = [
        {"item": "i1", "reason": "revoked", "stage": "explicit", "evidence": ["ev-1"]},
        {"item": "i2", "reason": "revoked", "stage": "explicit", "evidence": ["ev-2", "i3"]},
    ]
    excluded[1]["detail"] = "i3 said so"
    hidden = frozenset({"i3"})

    assert redacts(redact(excluded, hidden), excluded, hidden)
    assert not redacts(excluded, excluded, hidden)  # i2's evidence and detail name i3
