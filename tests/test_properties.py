"""Cross-stage invariants of admit(), over generated workspaces: contexts built directly,
and contexts a real store recorded from histories of every op."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import KEY, revoke
from readmit.admission import admit
from readmit.admission.capture import capture
from readmit.admission.context import ReturnContext
from readmit.admission.decision import Decision, Issued
from readmit.admission.invalidation.observations import observations, observations_of
from readmit.admission.invalidation.scanner import Limits, Observations
from readmit.admission.invalidation.touched import touched
from readmit.canonical import canonical_json, digest
from readmit.policy import Policy
from readmit.reasons import Reason
from readmit.report import decision_json
from readmit.signing import HmacSha256Signer
from readmit.testing import UnavailableVerifier
from readmit.verifiers.builtin import TermVerifier
from strategies import contexts, policies, stored_contexts

SIGNER = HmacSha256Signer(KEY)
workspaces = st.one_of(contexts(), stored_contexts())


def run(ctx: ReturnContext, policy: Policy) -> Decision:
    return admit(ctx, policy=policy, verifier=TermVerifier(), signer=SIGNER)


def kept(decision: Decision) -> list[str]:
    return [i.id for i in (decision.items if isinstance(decision, Issued) else decision.selected)]


def eligible(decision: Decision) -> set[str]:
    dropped = {e.item for e in decision.exclusions if e.reason is Reason.NOT_SELECTED}
    return set(kept(decision)) | dropped


@given(workspaces, policies)
def test_every_candidate_is_kept_or_excluded_exactly_once(
    ctx: ReturnContext, policy: Policy
) -> None:
    decision = run(ctx, policy)

    decided = kept(decision) + [e.item for e in decision.exclusions]
    assert sorted(decided) == sorted(i.id for i in capture(ctx))


@given(workspaces, policies)
def test_the_items_left_not_selected_follow_the_decided_exclusions(
    ctx: ReturnContext, policy: Policy
) -> None:
    decision = run(ctx, policy)
    record = decision_json(decision, ctx, policy)

    rest = decision.exclusions[len(decision.decided) :]
    assert decision.exclusions[: len(decision.decided)] == decision.decided
    assert all(e.reason is not Reason.NOT_SELECTED for e in decision.decided)
    assert all(e.reason is Reason.NOT_SELECTED for e in rest)
    assert [e.item for e in rest] == list(decision.not_selected) == record["not_selected"]
    assert [e["item"] for e in record["excluded"]] == [e.item for e in decision.decided]


@given(workspaces, policies)
def test_budgets_are_never_exceeded(ctx: ReturnContext, policy: Policy) -> None:
    decision = run(ctx, policy)

    chosen = [ctx.by_id[i] for i in kept(decision)]
    assert len(chosen) <= policy.max_items
    assert sum(len(i.text) for i in chosen) <= policy.max_chars


@given(workspaces, policies, st.data())
def test_an_invalidating_event_never_adds_eligible_items(
    ctx: ReturnContext, policy: Policy, data: st.DataObject
) -> None:
    if not ctx.items:
        return
    target = data.draw(st.sampled_from([i.id for i in ctx.items]))
    later = replace(ctx, delta=(*ctx.delta, revoke(target, ctx.epoch + 1)), epoch=ctx.epoch + 1)

    before, after = run(ctx, policy), run(later, policy)

    assert eligible(after) <= eligible(before)
    assert target not in kept(after)
    if isinstance(after, Issued):
        assert set(kept(after)) <= eligible(before)


@given(workspaces, policies)
def test_admit_is_deterministic_for_one_context(ctx: ReturnContext, policy: Policy) -> None:
    first, second = run(ctx, policy), run(ctx, policy)

    assert canonical_json(decision_json(first, ctx)) == canonical_json(decision_json(second, ctx))


@given(workspaces, policies)
def test_with_the_verifier_down_no_challenged_item_is_admitted(
    ctx: ReturnContext, policy: Policy
) -> None:
    index = Observations(observations(ctx))
    limits = Limits(top_k=policy.scan_top_k)
    challenged = {i.id for i in capture(ctx) if index.proposals(i, ctx.departure.epoch, limits)}

    decision = admit(ctx, policy=policy, verifier=UnavailableVerifier(), signer=SIGNER)

    assert not challenged & set(kept(decision))


@given(workspaces, st.data())
def test_many_targets_are_touched_exactly_as_each_alone(
    ctx: ReturnContext, data: st.DataObject
) -> None:
    """Also with an index grown from a smaller one, and windows starting anywhere."""
    laters = observations(ctx)
    half = len(laters) // 2
    grown = Observations(laters[:half]).extended(laters[half:]) if half else Observations(laters)
    items = list(capture(ctx))  # obligations and frontiers too
    epochs = st.integers(-1, ctx.epoch + 1)
    afters = data.draw(st.lists(epochs, min_size=len(items), max_size=len(items)))
    for index in (Observations(laters), grown):
        alone = [index.touches(i, a) for i, a in zip(items, afters, strict=True)]

        assert touched(index, items, afters) == alone


@given(workspaces)
def test_a_verifier_of_no_news_is_shown_exactly_the_withdrawals_among_all_observations(
    ctx: ReturnContext,
) -> None:
    """Also for a Δ of asserts only, whose keyed ones are picked out another way."""
    asserts = tuple(r for r in ctx.delta if r.event.op == "assert")
    for delta in (ctx.delta, asserts):
        every = observations_of(delta, ctx.items, ctx.by_id, news=True)
        shown = observations_of(delta, ctx.items, ctx.by_id, news=False)

        assert shown == [later for later in every if later.withdrawn_text is not None]


@given(workspaces, policies)
def test_an_issued_view_reserializes_to_the_same_digest(ctx: ReturnContext, policy: Policy) -> None:
    decision = run(ctx, policy)

    if isinstance(decision, Issued):
        import json

        assert digest(json.loads(canonical_json(decision.signed))) == digest(decision.signed)


@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=6))
def test_digests_do_not_depend_on_key_order(value: dict[str, int]) -> None:
    reordered = dict(reversed(list(value.items())))

    assert digest(value) == digest(reordered)


@given(stored_contexts(), policies)
def test_an_item_withdrawn_while_away_is_never_kept(ctx: ReturnContext, policy: Policy) -> None:
    withdrawn = {
        r.event.target for r in ctx.delta if r.event.op in ("revoke", "supersede", "close")
    }

    decision = run(ctx, policy)

    assert not withdrawn & set(kept(decision))


@given(stored_contexts(), policies)
def test_only_memories_whose_source_is_in_the_view_are_readmitted(
    ctx: ReturnContext, policy: Policy
) -> None:
    decision = run(ctx, policy)

    if isinstance(decision, Issued):
        shown = set(kept(decision))
        assert all(e.source_item_id in shown for e in decision.readmitted)


def test_stored_histories_reach_every_op_memories_obligations_and_departures() -> None:
    ops: set[str] = set()
    reached: set[str] = set()

    @settings(max_examples=150, database=None, derandomize=True)
    @given(stored_contexts())
    def draw(ctx: ReturnContext) -> None:
        ops.update(r.event.op for r in ctx.delta)
        reached.update(
            name
            for name, there in [
                ("memories", ctx.experiences),
                ("obligations", ctx.role_obligations),
                ("checkpoint", ctx.departure.item_ids),
            ]
            if there
        )

    draw()

    assert ops == {"assert", "supersede", "revoke", "close", "evidence", "obligation", "resolve"}
    assert reached == {"memories", "obligations", "checkpoint"}


@given(workspaces, policies)
def test_nothing_the_agent_may_not_read_is_named_in_its_view(
    ctx: ReturnContext, policy: Policy
) -> None:
    """Neither an unreadable item's id nor its event's, whatever stage excluded it."""
    decision = run(ctx, policy)
    who = ctx.returner
    unreadable = [i for i in ctx.items if not i.scope.readable_by(who.principal, who.role)]
    secret = {i.id for i in unreadable} | {i.receipt.event_id for i in unreadable if i.receipt}
    if not isinstance(decision, Issued):
        return

    view = decision.signed
    named = {e["id"] for e in view["items"]} | {e["item"] for e in view["excluded"]}
    named |= {x for e in view["excluded"] for x in e["evidence"]}
    assert named.isdisjoint(secret)
