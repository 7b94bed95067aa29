"""The redaction rules of `readmit.admission.hidden.without`, one exclusion at a time.

Rule 3 (stop 59) leaves a verifier's confidence out with the detail where a hidden id is
taken from the evidence; a view signed under rule 2 kept it, and is rebuilt as signed. Only
an item replaced by one the agent may read is shown whole: any other exclusion naming two
ids, one hidden, loses the hidden one and its detail.
"""

from typing import Any

import pytest

from readmit.admission.hidden import RULE, redact
from readmit.reasons import Reason

JUDGED: dict[str, Any] = {
    "item": "i",
    "reason": "implicitly_invalidated",
    "stage": "implicit",
    "evidence": ["secret"],
    "detail": "v: the agency's suite is held",
    "confidence": 0.8,
}


def test_a_confidence_goes_with_the_detail_under_rule_3() -> None:
    """A model's confidence tells of the words it read: left out with them."""
    [shown] = redact([JUDGED], frozenset({"secret"}), RULE)

    assert RULE == 3
    assert shown == {"item": "i", "reason": "implicitly_invalidated", "stage": "implicit",
                     "evidence": []}  # fmt: skip


def test_a_view_signed_under_rule_2_is_rebuilt_with_its_confidence() -> None:
    """Before stop 59 the confidence stayed where the detail went: a view signed then is
    rebuilt with it, or it no longer matches its signature."""
    [shown] = redact([JUDGED], frozenset({"secret"}), 2)

    assert shown == {"item": "i", "reason": "implicitly_invalidated", "stage": "implicit",
                     "evidence": [], "confidence": 0.8}  # fmt: skip


def test_a_confidence_stays_where_nothing_is_hidden() -> None:
    """Evidence the agent may see: the verifier's wording and confidence are its to read."""
    [shown] = redact([JUDGED], frozenset({"other"}))

    assert shown == JUDGED


@pytest.mark.parametrize(
    ("reason", "detail"),
    [
        (Reason.VERIFIER_UNAVAILABLE, None),  # a failed dependency scan names its batch
        (Reason.UNSCREENED, "the return's judgment budget was spent"),  # fixed, kept
    ],
)
def test_only_a_replacement_is_shown_whole(reason: Reason, detail: str | None) -> None:
    """Two ids, the second one the agent may see: shown whole only for an item replaced
    (the event, and the item that replaced it). Any other exclusion naming a hidden event
    first loses it, and the detail that may name it (an ``unscreened`` one's is fixed)."""
    excluded = {
        "item": "i",
        "reason": str(reason),
        "stage": "implicit",
        "evidence": ["secret", "e2"],
        "detail": "the return's judgment budget was spent"
        if reason is Reason.UNSCREENED
        else "the dependency scan failed: secret says so",
    }

    [shown] = redact([excluded], frozenset({"secret"}))

    assert shown["evidence"] == ["e2"]
    assert shown.get("detail") == detail
