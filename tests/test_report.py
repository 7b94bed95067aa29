"""The decision record's parts that read the exclusions."""

from dataclasses import replace

from builders import KEY, context, item
from readmit.admission import admit
from readmit.model import Experience
from readmit.policy import Policy
from readmit.report import decision_json
from readmit.signing import HmacSha256Signer


def test_a_memory_whose_source_was_left_out_of_the_view_names_why() -> None:
    desk4, desk5 = item("a", "Desk 4 is free."), item("b", "Desk 5 is free.")
    memory = Experience(id="x", agent="A1", text="Sat at desk 5.", source_item_id="b", epoch=1)
    ctx = replace(context((desk4, desk5)), experiences=(memory,))
    policy = replace(Policy.paper(), max_items=1, fill=True)

    decision = admit(ctx, policy=policy, verifier=None, signer=HmacSha256Signer(KEY))
    record = decision_json(decision, ctx, policy)

    assert record["items"] == ["a"]
    assert record["not_selected"] == ["b"]
    assert record["withheld_memories"] == [
        {"id": "x", "source": "b", "reason": "source_not_admitted", "source_reason": "not_selected"}
    ]
