"""A verifier reads an item with its premises, those outside the return's C too
(`readmit.admission.invalidation.propagation.premise_texts`), and the agent is not shown
a wording that may quote one it may not read (`premises_readable`)."""

import json
from typing import Any

from readmit.admission.invalidation.implicit import Pair, Verdict
from readmit.replay import replay
from readmit.report import agent_copy
from readmit.scenario import load_scenario
from readmit.store import WorkStateStore
from readmit.testing import FunctionVerifier
from trip import SIGNER, assert_item, at, depart, reason, ret, scenario

BOOKED = assert_item(1, "p", "Sunrise Hotel is booked.")  # the family's alone
PICKUP = assert_item(2, "i", "Pickup before the renovation.", readers="*", depends_on=["p"])
NEWS: dict[str, Any] = {
    "at": at(5),
    "author": "B1",
    "op": "assert",
    "item": {"id": "n", "text": "Sunrise Hotel closed for renovation.", "readers": "*"},
}


def by_premise(pair: Pair) -> Verdict:
    """Links the item to the news only through its premise's words, and quotes them."""
    linked = any("Sunrise Hotel" in p for p in pair.premises) and "Sunrise" in pair.later.text
    return Verdict(invalidates=linked, confidence=0.9, reason=f"read: {pair.premises}")


def test_a_premise_outside_c_is_read_with_the_item_and_not_quoted_to_the_agent(
    store: WorkStateStore,
) -> None:
    """B1 leaves holding i, which rests on the family's booking p that B1 may not read (so
    its C lacks p). The news is judged against i with p's words: i falls, and B1's copy
    does not quote the booking."""
    events = [BOOKED, PICKUP, depart(3, "B1"), NEWS, ret(6, "B1")]
    verifier = FunctionVerifier(by_premise, name="by-premise")

    [decided] = replay(load_scenario(scenario(events)), store, verifier=verifier, signer=SIGNER)

    assert reason(decided.record, "i") == "implicitly_invalidated"
    assert "Sunrise Hotel is booked" not in json.dumps(agent_copy(decided.record))
