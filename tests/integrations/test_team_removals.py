"""Why each item of a return's C is not in the agent's view (`integrations.team.removals`)."""

from dataclasses import replace

from builders import KEY, context, item, revoke
from readmit.admission import admit
from readmit.decide import Decided
from readmit.integrations.team import removals
from readmit.model import Scope
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer


def test_each_item_left_out_is_named_with_the_decisions_own_reason() -> None:
    desk4, desk5 = item("a", "Desk 4 is free."), item("b", "Desk 5 is free.")
    ctx = context((desk4, desk5, item("c", "Desk 6 is free.")), delta=(revoke("c", 2),))
    policy = replace(Policy.paper(), max_items=1, fill=True)
    decision = admit(ctx, policy=policy, verifier=None, signer=HmacSha256Signer(KEY))

    found = removals(Decided(decision, ctx, {}))

    expected = {e.item: (e.reason.value, e.detail) for e in decision.exclusions}
    assert {i: (r.reason, r.detail) for i, r in found.items()} == expected
    assert {i: r.reason for i, r in found.items()} == {"b": "not_selected", "c": "revoked"}


def test_an_item_the_agent_may_not_read_is_removed_without_its_detail() -> None:
    theirs = item("c", "Their desk.", scope=Scope(principals=frozenset({"agency"})))
    ctx = context((item("a", "Desk 4 is free."), theirs), delta=(revoke("c", 2, "the merger"),))
    decision = admit(ctx, policy=Policy.paper(), verifier=None, signer=HmacSha256Signer(KEY))

    found = removals(Decided(decision, ctx, {}))

    assert (found["c"].reason, found["c"].detail) == ("revoked", "")
