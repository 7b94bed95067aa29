"""Why each item of a return's C is not in the agent's view (`integrations.team.removals`)."""

from dataclasses import replace
from datetime import timedelta

from builders import KEY, T0, context, item, revoke
from readmit.admission import admit
from readmit.decide import Decided, decide
from readmit.events import Assert, ItemDraft, ReturnRequest, Revoke
from readmit.integrations.team import removals
from readmit.model import Agent, Scope, Validity
from readmit.plugins import make_verifier
from readmit.policy import Policy
from readmit.signing import HmacSha256Signer
from readmit.store import WorkStateStore


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


def test_an_item_the_departure_left_out_as_expired_is_removed_and_says_so(
    store: WorkStateStore,
) -> None:
    """It is not in C, so the decision names it nowhere; a memory layer that removes what
    the decision judged would otherwise serve it as valid."""
    team = [Agent(id=a, principal="org", role="r") for a in ("A1", "A2")]
    store.create_workspace("w", team)
    until = T0 + timedelta(hours=1)
    lapsing = ItemDraft(id="x", text="Gate 4 is open.", validity=Validity(valid_to=until))
    store.append("w", [Assert(id="e1", at=T0, author="A2", item=lapsing)])
    store.depart("w", "A1", T0 + timedelta(hours=2))  # x ended before: left out
    later = ItemDraft(id="y", text="Gate 5 is open.")
    store.append("w", [Assert(id="e2", at=T0 + timedelta(hours=3), author="A2", item=later)])
    request = ReturnRequest(id="r", at=T0 + timedelta(hours=4), agent="A1", task="*", purpose="*")

    decided = decide(
        store, "w", request, policy=Policy(), verifier=None, signer=HmacSha256Signer(KEY)
    )

    assert "x" not in {i.id for i in decided.context.items}
    found = removals(decided)
    assert (found["x"].reason, found["x"].detail) == (
        "expired",
        "valid until 2026-05-01T09:00:00Z, before the departure",
    )
    assert "y" not in found


def test_an_item_left_out_under_a_verdict_the_return_did_not_load_is_named_stale(
    store: WorkStateStore,
) -> None:
    """The verdict is loaded for C's items only: one resting on nothing, left out under
    it, was named premise_invalidated, "a premise it rests on fell" (a probe)."""
    team = [Agent(id=a, principal="org", role="r") for a in ("A1", "A2")]
    store.create_workspace("w", team)
    hotel = ItemDraft(id="h", text="Sunrise Hotel is booked.")
    dinner = ItemDraft(id="d", text="Dinner at Sunrise Hotel at eight.")
    store.append("w", [Assert(id="e1", at=T0, author="A2", item=hotel)])
    store.append("w", [Assert(id="e2", at=T0, author="A1", item=dinner)])
    store.depart("w", "A2", T0 + timedelta(hours=1))
    cancel = Revoke(id="e3", at=T0 + timedelta(hours=2), author="A2", target="h", why="gone")
    store.append("w", [cancel])
    signer, builtin = HmacSha256Signer(KEY), make_verifier("builtin")

    def back(agent: str, hours: int) -> Decided:
        at = T0 + timedelta(hours=hours)
        request = ReturnRequest(id=f"r-{agent}", at=at, agent=agent, task="*", purpose="*")
        return decide(store, "w", request, policy=Policy(), verifier=builtin, signer=signer)

    back("A2", 3)  # A2's return finds d stale: a standing verdict
    store.depart("w", "A1", T0 + timedelta(hours=4))  # d left out under it
    decided = back("A1", 5)

    assert "d" in {i.id for i in decided.context.left_out}
    found = removals(decided)
    assert (found["d"].reason, found["d"].detail) == (
        "implicitly_invalidated",
        "found stale before the departure (a standing verdict)",
    )


def test_an_item_the_departure_left_out_on_a_fallen_premise_is_removed_and_says_so(
    store: WorkStateStore,
) -> None:
    store.create_workspace("w", [Agent(id=a, principal="org", role="r") for a in ("A1", "A2")])
    gate = ItemDraft(id="g", text="Gate 4 is open.")
    walk = ItemDraft(id="p", text="Walk to gate 4.", depends_on=frozenset({"g"}))
    store.append(
        "w",
        [
            Assert(id="e1", at=T0, author="A2", item=gate),
            Assert(id="e2", at=T0, author="A2", item=walk),
            Revoke(id="e3", at=T0 + timedelta(minutes=1), author="A2", target="g", why="closed"),
        ],
    )
    store.depart("w", "A1", T0 + timedelta(hours=1))
    request = ReturnRequest(id="r", at=T0 + timedelta(hours=2), agent="A1", task="*", purpose="*")

    decided = decide(
        store, "w", request, policy=Policy(), verifier=None, signer=HmacSha256Signer(KEY)
    )

    found = removals(decided)
    assert (found["p"].reason, found["p"].detail) == (
        "premise_invalidated",
        "a premise it rests on fell before the departure",
    )
